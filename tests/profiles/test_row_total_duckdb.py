"""The rewrite check of a repeat sweep: the whole table's row count against the stored total.

A repeat sweep reads the loads after the last profiled one and `COUNT(*)` of the whole table
(no column read: DuckDB counts row groups, BigQuery and Snowflake answer from metadata). The
count less the new loads' rows must equal the total the last sweep stored; a delete outside
dlt shows as a rewrite, and a store without totals (schema version 2) is profiled afresh once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from dlt_contract_ops.destinations.bigquery import BigQueryAdapter
from dlt_contract_ops.destinations.duckdb import DuckDBAdapter
from dlt_contract_ops.destinations.postgres import PostgresAdapter
from dlt_contract_ops.destinations.snowflake import SnowflakeAdapter
from dlt_contract_ops.engine.profile_history import profile_history
from dlt_contract_ops.profiles.query import ProfiledColumn, profile_query
from tests.profiles.conftest import DATASET, load, load_baseline
from tests.profiles.test_distribution_duckdb import _sweep
from tests.projects import Project


def _totals(store: Path) -> list[tuple[str, int]]:
    with duckdb.connect(str(store), read_only=True) as con:
        return [(t, int(n)) for t, n in con.execute("SELECT tbl, n_rows FROM totals").fetchall()]


@pytest.mark.parametrize("adapter", [DuckDBAdapter, PostgresAdapter, BigQueryAdapter,
                                     SnowflakeAdapter], ids=lambda a: a.name)
def test_the_row_check_counts_the_whole_table_without_reading_a_column(adapter: Any) -> None:
    table = exp.table_("orders", db="shop_data")
    caps = adapter.capabilities
    dialect = caps.dialect
    query = profile_query(table, [ProfiledColumn("amount", "number")],
                          caps.approximate_distinct, bound="after", count_row=True)
    sql = query.sql(dialect)
    assert isinstance(query, exp.Union)
    check = sqlglot.parse_one(sql, read=dialect).expression
    assert check.args.get("where") is None  # no load id filter: nothing to read but rows
    assert [c.sql(dialect) for c in check.find_all(exp.Column)] == []
    assert check.find(exp.Count).this == exp.Star()
    assert sql.count("?") == 1 or sql.count("%s") == 1  # only the last profiled load id


def _rewritten(notes: list[str]) -> bool:
    return any("were rewritten" in n for n in notes)


def _store(shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    path = tmp_path / f"{name}.duckdb"
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(path))
    return path


def test_a_delete_outside_dlt_shows_as_a_rewrite(
    shop: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = _store(shop, tmp_path, monkeypatch, "incremental")
    load_baseline(shop, *({"batch": b} for b in range(3)))
    with duckdb.connect(str(shop.root / "shop_pipe.duckdb")) as con:
        # a day back: before the recent window, which every sweep reads again (a change
        # there is read, not a rewrite: test_in_place_changes.py)
        con.execute(f"UPDATE {DATASET}.orders SET _dlt_load_id ="
                    " CAST(CAST(_dlt_load_id AS DOUBLE) - 86400 AS VARCHAR)")
    assert not _rewritten(_sweep(shop).notes)
    assert _totals(store) == [("orders", 300)]
    with duckdb.connect(str(shop.root / "shop_pipe.duckdb")) as con:
        first = con.execute(f"SELECT min(_dlt_load_id) FROM {DATASET}.orders").fetchone()
        con.execute(f"DELETE FROM {DATASET}.orders WHERE _dlt_load_id = ? AND id % 2 = 0",
                    [first[0] if first else None])
    load(shop, {"batch": 3})

    result = _sweep(shop)
    assert _rewritten(result.notes)
    assert _totals(store) == [("orders", 350)]
    history = profile_history("shop", project_dir=shop.root)
    assert [r["rows"] for r in history["orders"] if r["column"] == "id"] == [50, 100, 100, 100]

    fresh = _store(shop, tmp_path, monkeypatch, "fresh")
    assert profile_history("shop", project_dir=shop.root) == history  # one sweep, afresh
    assert _totals(fresh) == [("orders", 350)]


def test_a_store_without_row_totals_profiles_each_table_afresh_once(
    shop: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = _store(shop, tmp_path, monkeypatch, "old")
    load_baseline(shop, *({"batch": b} for b in range(3)))
    _sweep(shop)
    with duckdb.connect(str(store)) as con:  # what a store of schema version 2 lacks
        con.execute("DELETE FROM totals")
    load(shop, {"batch": 3})

    result = _sweep(shop)
    assert not _rewritten(result.notes)  # profiled afresh, not reported as a rewrite
    assert _totals(store) == [("orders", 400)]
    history = profile_history("shop", project_dir=shop.root)
    assert len({r["load_id"] for r in history["orders"]}) == 4
    load(shop, {"batch": 4})
    assert not _rewritten(_sweep(shop).notes)
    assert _totals(store) == [("orders", 500)]
