"""A repeat sweep reads its loads by id (`_dlt_load_id IN (...)`), taken from `_dlt_loads`.

DuckDB keeps 8 characters of a text column's min and max per row group, and load ids share
them, so `_dlt_load_id > last` read the whole last profiled load again. The ids of the loads
to read come from `_dlt_loads` (one query per source); a table with none is not queried. The
findings stay those of a full scan. Real dlt loads into DuckDB, moved back in time in both the
table and `_dlt_loads` (as dlt would have written them then).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.duckdb_baselines import QueryLog
from tests.profiles import test_removal_from_profiles_duckdb as duck
from tests.profiles.test_removal_from_profiles_duckdb import seen, sweep
from tests.projects import Project


@pytest.fixture
def shop(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "profiles.duckdb"))
    return project


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> QueryLog:
    """Every statement the sweeps' DuckDB sessions receive (DuckDB's query log)."""
    return QueryLog(monkeypatch, tmp_path / "queries.log")


def backdate(project: Project) -> list[str]:
    """Every load so far moved back, the n-th of N to (N - n) * 20 hours ago, in the table
    and in `_dlt_loads`."""
    return duck.move_loads(project, lambda n, count: (count - n) * 20)


def _profile_queries(sent: QueryLog) -> list[str]:
    """The load profile queries of `orders` (counts per load id) DuckDB received."""
    return [q for q in sent.statements() if 'GROUP BY "_dlt_load_id"' in q and '"orders"' in q]


def _loads_queries(sent: QueryLog) -> list[str]:
    return [q for q in sent.statements() if "_dlt_loads" in q]


def test_a_repeat_sweep_reads_only_the_new_load_by_its_id(
    shop: Project, sent: QueryLog,
) -> None:
    duck.declare(shop)
    duck.load(shop, *[{"batch": b} for b in range(4)])
    old = backdate(shop)
    assert sweep(shop) == []
    duck.load(shop, {"batch": 4, "dark": ["note"]})
    loads = duck_sql(shop, "SELECT load_id FROM _dlt_loads")
    assert len([r for r in loads if r[0] not in old]) == 1
    sent.clear()  # dlt's own sessions log there too

    now = datetime.now(timezone.utc)
    profiled = sweep(shop, now=now)
    [loads_sql] = _loads_queries(sent)
    assert '"status" = 0' in loads_sql
    [query] = _profile_queries(sent)
    # the one new load, listed by id (one parameter in the list), no range bound on the id
    assert '"_dlt_load_id" IN (?)' in query
    assert ">" not in query.split("UNION ALL")[0]
    assert [f.columns for f in profiled] == [["note"]]
    assert seen(profiled) == seen(sweep(shop, from_profiles=False, now=now))


def test_a_table_without_a_load_to_read_again_is_not_queried(
    shop: Project, sent: QueryLog,
) -> None:
    duck.declare(shop)
    duck.load(shop, *[{"batch": b} for b in range(3)], {"batch": 3, "dark": ["note"]})
    backdate(shop)  # every load before the recent window: none is read again
    sent.clear()
    first = sweep(shop)
    assert _profile_queries(sent)  # the first sweep profiles every load
    sent.clear()

    now = datetime.now(timezone.utc)
    again = sweep(shop, now=now)
    assert _loads_queries(sent)
    assert _profile_queries(sent) == []
    # nothing in the recent window (removal has no recent rows to compare): as a full scan
    assert seen(again) == seen(first) == seen(sweep(shop, from_profiles=False, now=now))


def duck_sql(project: Project, statement: str) -> list[tuple[Any, ...]]:
    import duckdb

    con = duckdb.connect(str(project.root / duck.DB))
    try:
        con.execute(f'USE shop_rm_pipe."{duck.DATASET}"')
        return con.execute(statement).fetchall()
    finally:
        con.close()


def test_more_loads_than_a_query_lists_keep_the_range_bound(
    shop: Project, sent: QueryLog, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dlt_contract_ops.profiles import sweep as profiles_sweep

    monkeypatch.setattr(profiles_sweep, "MAX_LISTED", 0)  # any load to read is one too many
    duck.declare(shop)
    duck.load(shop, *[{"batch": b} for b in range(4)])
    backdate(shop)
    sweep(shop)
    duck.load(shop, {"batch": 4, "dark": ["note"]})
    sent.clear()  # dlt's own sessions log there too

    now = datetime.now(timezone.utc)
    profiled = sweep(shop, now=now)
    [query] = _profile_queries(sent)
    assert "IN (" not in query
    # the bound: the last profiled load or the recent window's start
    assert query.split("UNION ALL")[0].count("?") == 1
    assert [f.columns for f in profiled] == [["note"]]
    assert seen(profiled) == seen(sweep(shop, from_profiles=False, now=now))
