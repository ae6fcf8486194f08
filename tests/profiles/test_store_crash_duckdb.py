"""A sweep that dies between storing a load and its columns leaves no half-written load.

Real dlt loads into DuckDB; the store write is broken twice: by a value DuckDB itself refuses
in a column row (an exception, rolled back), and by `os._exit` in a real sweep process right
after a load row went in (a crash, the uncommitted transaction is discarded on reopen).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import duckdb
import pytest

from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile
from dlt_contract_ops.profiles.store import ProfileStore, Scope, TableUpdate
from tests.profiles.conftest import load
from tests.profiles.test_distribution_duckdb import STEADY, _sweep
from tests.projects import Project

COLUMNS = {"amount", "code", "id", "note", "region", "status"}


@pytest.fixture
def store_path(shop: Project, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The profile store, named so the test reads it (the sweep subprocess inherits it)."""
    path = shop.root / "profiles.duckdb"
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(path))
    return path


def _rows(path: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def _newest_load(shop: Project) -> str:
    [(load_id,)] = _rows(shop.root / "shop_pipe.duckdb",
                         "SELECT max(_dlt_load_id) FROM shop_data.orders")
    return str(load_id)


def _stored(path: Path, load_id: str) -> dict[str, int]:
    return {
        name: _rows(path, f"SELECT count(*) FROM {name} WHERE load_id = ?", [load_id])[0][0]
        for name in ("loads", "columns", "categories")
    }


def _assert_profiled_fully(shop: Project, path: Path, load_id: str, loads: int) -> None:
    assert _sweep(shop).findings == []
    assert _rows(path, "SELECT count(*) FROM loads")[0][0] == loads
    stored = _stored(path, load_id)
    assert stored["loads"] == 1
    assert stored["columns"] == len(COLUMNS)
    assert stored["categories"] > 0  # status, region, note
    cols = {c for (c,) in _rows(path, "SELECT col FROM columns WHERE load_id = ?", [load_id])}
    assert cols == COLUMNS


def test_a_store_write_failing_between_a_load_and_its_columns_is_rolled_back(
    shop: Project, store_path: Path,
) -> None:
    path = store_path
    load(shop, *STEADY[:3])
    _sweep(shop)
    load(shop, {"batch": 3})
    new = _newest_load(shop)
    [(destination, location, dataset)] = _rows(
        path, "SELECT DISTINCT destination, location, dataset FROM loads")
    before = _rows(path, "SELECT * FROM loads ORDER BY load_id")
    assert len(before) == 3

    good = ColumnProfile("amount", 100, 17, "0.0", "19.3")
    # a non-NULL count DuckDB cannot read as BIGINT: the write fails, nothing of it stays
    bad = ColumnProfile("id", "not a count", 100)  # type: ignore[arg-type]
    update = TableUpdate("orders", [LoadProfile(new, 100, {"amount": good, "id": bad})])
    with pytest.raises(duckdb.Error):
        ProfileStore(path).write(Scope(destination, location, dataset), "shop", [update])

    assert _stored(path, new) == {"loads": 0, "columns": 0, "categories": 0}
    assert _rows(path, "SELECT * FROM loads ORDER BY load_id") == before
    _assert_profiled_fully(shop, path, new, loads=4)


def test_a_sweep_killed_between_a_load_and_its_columns_leaves_no_half_load(
    shop: Project, store_path: Path,
) -> None:
    path = store_path
    load(shop, *STEADY[:3])
    _sweep(shop)
    load(shop, {"batch": 3})
    new = _newest_load(shop)

    # a real sweep process that dies the moment its first new load row is in
    killed = shop.python_process(textwrap.dedent("""
        import os
        from dlt_contract_ops.profiles import store
        from dlt_contract_ops.engine.reconcile import run

        insert = store._insert_staged

        def die(con, name, params):
            insert(con, name, params)
            if name == "loads":  # the load rows are in, their columns not yet
                assert con.execute("SELECT count(*) FROM loads").fetchone()[0] == 4
                os._exit(17)

        store._insert_staged = die
        run(["shop"], detectors=("distribution",), dry_run=True, project_dir=".")
    """), check=False)
    assert killed.returncode == 17, killed.stderr

    assert _stored(path, new) == {"loads": 0, "columns": 0, "categories": 0}
    assert _rows(path, "SELECT count(*) FROM loads")[0][0] == 3
    _assert_profiled_fully(shop, path, new, loads=4)
