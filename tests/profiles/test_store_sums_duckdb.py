"""Removal's baseline window summed in the profile store, on a table of many loads (DuckDB).

Real dlt loads into DuckDB, one an hour, windowed on `_dlt_load_id`. A repeat sweep reads the
stored loads before the recent window thin: the store sums their columns and hands over one
row per column (`ProfileStore.read` with `Thin`), not one per stored load and column. The
findings must be those of a full scan and of a sweep over a fresh store, `first_seen` and each
column's `dark_since` included, also where a column went dark in loads the sweep read thin
(their counts then come from the store one by one).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pytest

from dlt_contract_ops.core.timeaxis import Windows, load_id_iso, load_id_text
from dlt_contract_ops.profiles.store import ProfileStore, Scope, Thin
from dlt_contract_ops.settings.project import RemovalSettings
from tests.profiles import test_removal_from_profiles_duckdb as duck
from tests.profiles.test_size_choice_duckdb import exact, sweep
from tests.projects import Project

#: hourly loads before the recent window; `note` is NULL in the last three of them
BASELINE = 16
DARK_BEFORE_RECENT = 3
#: the profiled columns of `orders` (`duck.SOURCE`'s model less the `_dlt_load_id` axis)
COLUMNS = {"amount", "id", "loaded_at", "note", "status"}


@pytest.fixture
def shop(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "profiles.duckdb"))
    return duck.declare(project)


def hourly(project: Project) -> list[str]:
    """Every load so far moved back to one an hour, the newest 7 hours ago (before the recent
    window of 6 hours), in the table and in `_dlt_loads`; the new ids, oldest first."""
    return duck.move_loads(project, lambda n, count: count - n + 6)


def scope_of_store(store: Path) -> Scope:
    con = duckdb.connect(str(store), read_only=True)
    try:
        [(destination, location, dataset)] = con.execute(
            "SELECT DISTINCT destination, location, dataset FROM loads").fetchall()
    finally:
        con.close()
    return Scope(destination, location, dataset)


@pytest.fixture
def swept(shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[list[str], datetime, list[Any]]:
    """Hourly loads swept once, then two new loads in the recent window (`note` and `amount`
    NULL in both) and a repeat sweep with the same store: the old load ids, the repeat's
    moment and its findings."""
    old = [{"batch": b, "dark": ["note"] if b >= BASELINE - DARK_BEFORE_RECENT else []}
           for b in range(BASELINE)]
    duck.load_baseline(shop, *old)
    ids = hourly(shop)
    assert sweep(shop)[1]["profile"] == 1  # the first sweep profiles every load
    duck.load(shop, *[{"batch": BASELINE + b, "dark": ["note", "amount"]} for b in range(2)])
    now = datetime.now(timezone.utc)
    findings, queries = sweep(shop, now=now)
    assert queries["profile"] == 1
    assert "coverage" not in queries  # the profiles answered alone
    return ids, now, findings


def test_a_repeat_sweep_over_many_loads_finds_what_a_full_scan_finds(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    swept: tuple[list[str], datetime, list[Any]],
) -> None:
    ids, now, repeat = swept
    full, _ = sweep(shop, from_profiles=False, now=now)
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "fresh.duckdb"))
    fresh, _ = sweep(shop, now=now)

    assert exact(repeat) == exact(full) == exact(fresh)
    [finding] = repeat
    assert finding.columns == ["amount", "note"]
    assert finding.column_first_seen is not None
    # `note` went dark in the first of the last three hourly loads: a load the repeat sweep
    # read thin, whose count came from the store; `amount` in the first new load
    assert finding.column_first_seen["note"] == load_id_iso(ids[BASELINE - DARK_BEFORE_RECENT])
    assert finding.column_first_seen["amount"] > str(load_id_iso(ids[-1]))


def test_the_store_hands_over_one_row_per_column_for_the_loads_read_thin(
    tmp_path: Path, swept: tuple[list[str], datetime, list[Any]],
) -> None:
    ids, now, _ = swept
    path = tmp_path / "profiles.duckdb"
    store, scope = ProfileStore(path), scope_of_store(path)
    windows = Windows.of(now, RemovalSettings())
    before = windows.recent_load_id
    thin = Thin(frozenset({"orders"}), windows.baseline_load_id, before)

    whole = store.read(scope, ["orders"]).histories["orders"]
    read = store.read(scope, ["orders"], thin)
    history, summed = read.histories["orders"], read.sums["orders"]

    assert [p.load_id for p in history] == [p.load_id for p in whole]
    assert len(history) == BASELINE + 2
    # the loads before the recent window: their rows alone, their columns one row per column
    assert {p.load_id for p in history if not p.columns} == set(ids) == summed.loads
    assert set(summed.non_null) == set(summed.profiled) == COLUMNS
    assert summed.profiled == dict.fromkeys(COLUMNS, BASELINE)
    assert summed.non_null == {c: sum(p.columns[c].non_null for p in whole if p.load_id in ids)
                               for c in COLUMNS}
    # the loads a sweep reads again come whole, as without `thin`
    assert [p for p in history if p.columns] == [p for p in whole if p.load_id >= before]
    assert load_id_text(now) > before
