"""A profile store that is garbage, empty or cut short is set aside (kept, renamed
`<name>.broken-<UTC stamp>`), a fresh one is built, and the run says so: a real
`reconcile --include-distribution` on a DuckDB pipeline still finds its drift, `profiles
rebuild` still works, and the damaged bytes are still on disk."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile
from dlt_contract_ops.profiles.store import ProfileStore, Scope, TableUpdate
from tests.profiles.conftest import load_baseline
from tests.profiles.test_distribution_duckdb import STEADY
from tests.projects import Project

SCOPE = Scope("duckdb", "w.duckdb", "shop")


def _garbage(data: bytes) -> bytes:
    return os.urandom(max(len(data), 4096))


def _empty(data: bytes) -> bytes:
    return b""


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "garbage": _garbage, "empty": _empty, "truncated": _truncated,
}


def _damage(path: Path, how: str) -> bytes:
    broken = DAMAGE[how](path.read_bytes())
    path.write_bytes(broken)
    return broken


def _set_aside(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.broken-*"))


@pytest.fixture
def store_path(shop: Project, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The profile store, named so the test reads it (CLI subprocesses inherit it)."""
    path = shop.root / "profiles.duckdb"
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(path))
    return path


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_reconcile_and_rebuild_set_a_broken_store_aside_and_go_on(
    shop: Project, store_path: Path, how: str
) -> None:
    load_baseline(shop, *STEADY, {"batch": 6, "drift": ["other"]})  # the store is the point
    first = shop.cli("reconcile", "-s", "shop", "--include-distribution", "--dry-run")
    assert first.returncode == 0, first.stderr
    broken = _damage(store_path, how)

    proc = shop.cli("reconcile", "-s", "shop", "--include-distribution", "--dry-run",
                    "--format", "json")
    assert proc.returncode == 0, proc.stderr
    [result] = [r for r in json.loads(proc.stdout)["results"]
                if r["detector"] == "distribution"]
    assert result["error"] is None
    [finding] = result["findings"]  # the fresh store was built from the warehouse
    assert finding["columns"] == ["status"]
    [aside] = _set_aside(store_path)
    assert aside.read_bytes() == broken  # kept as it was
    [note] = [n for n in result["notes"] if "broken" in n]
    assert f"`{store_path}`" in note
    assert f"`{aside}`" in note
    assert f"`{aside}`" in proc.stderr  # the warning line too
    assert "Traceback" not in proc.stderr

    broken_again = _damage(store_path, how)
    rebuilt = shop.cli("profiles", "rebuild", "-s", "shop")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "Traceback" not in rebuilt.stderr
    assert "Dropped 0 load profile(s)" in rebuilt.stdout  # the fresh store held none
    second = [p for p in _set_aside(store_path) if p != aside]
    assert [p.read_bytes() for p in second] == [broken_again]
    [line] = [x for x in rebuilt.stderr.splitlines() if "broken" in x]
    assert f"`{store_path}`" in line
    assert f"`{second[0]}`" in line


def _profiles(n: int) -> list[LoadProfile]:
    columns = {f"c{j}": ColumnProfile(f"c{j}", 98, 3, None, None, {"a": 1, "b": 2}, True)
               for j in range(30)}
    return [LoadProfile(f"17960000{i:02d}.1", 100, columns) for i in range(n)]


def test_a_store_cut_short_after_it_opens_is_set_aside_on_read_and_write(
    tmp_path: Path,
) -> None:
    # large enough that the first half opens and the cut shows only when the tables are read
    path = tmp_path / "profiles.duckdb"
    store = ProfileStore(path)
    store.write(SCOPE, "shop", [TableUpdate("orders", _profiles(300), total=30000)])
    broken = _damage(path, "truncated")

    stored = store.read(SCOPE, ["orders"])
    assert stored.histories == {"orders": []}  # a fresh store: profiled afresh
    [aside] = _set_aside(path)
    assert aside.read_bytes() == broken
    [note] = store.notes
    assert f"`{aside}`" in note

    _damage(path, "garbage")
    store.write(SCOPE, "shop", [TableUpdate("orders", _profiles(2), total=200)])
    assert len(_set_aside(path)) == 2
    assert [p.load_id for p in store.history(SCOPE, "orders")] == ["1796000000.1",
                                                                    "1796000001.1"]
