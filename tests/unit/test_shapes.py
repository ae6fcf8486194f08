"""Per-table queries of one shape, filled in from one template, give exactly the text each
table's own tree renders: odd names, catalog spellings, a compared column's type, every
dialect; a shape that cannot be templated falls back to the ordinary rendering."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest
from sqlglot import exp

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.destinations.bigquery import BigQueryAdapter
from dlt_contract_ops.destinations.duckdb import DuckDBAdapter
from dlt_contract_ops.destinations.execution import SqlClientAdapter
from dlt_contract_ops.destinations.postgres import PostgresAdapter
from dlt_contract_ops.destinations.shapes import Shape, ShapedQuery
from dlt_contract_ops.destinations.snowflake import SnowflakeAdapter
from dlt_contract_ops.destinations.sql import col
from dlt_contract_ops.destinations.sqlalchemy import MySQLAdapter, SQLiteAdapter
from dlt_contract_ops.detectors.queries import coverage_query

ODD = ["amount", "ip-address", 'say "hi"', "50% off", "a:b", "größe", "userId", "with space"]
TABLES = ["orders", "Odd \"table\" 50%", "événements", "t:1"]


def _coverage(kind: str = "timestamp") -> Shape:
    axis = TimeAxis("loaded_at", kind)  # type: ignore[arg-type]
    return Shape(("coverage", kind), lambda table, names: coverage_query(
        table, names[1:], replace(axis, column=names[0])))


ADAPTERS: dict[str, Callable[[], SqlClientAdapter]] = {
    "duckdb": lambda: DuckDBAdapter.offline("raw"),
    "postgres": lambda: PostgresAdapter.offline("raw"),
    "bigquery": lambda: BigQueryAdapter.offline("raw_events", catalog="acme-analytics-42"),
    "snowflake": lambda: SnowflakeAdapter.offline("raw_events"),
    "sqlite": lambda: SQLiteAdapter.offline("raw"),
    "mysql": lambda: MySQLAdapter.offline("raw"),
}


def _both(adapter: SqlClientAdapter, query: ShapedQuery, n: int) -> tuple[str, str]:
    return (adapter.driver_sql(query, n, "coverage"),
            adapter.driver_sql(query.expression(adapter), n, "coverage"))


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_every_table_gets_the_text_its_own_tree_renders(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    adapter = ADAPTERS[name]()
    caplog.set_level(logging.DEBUG, logger="dlt_contract_ops")
    for i, table in enumerate(TABLES):
        names = ("loaded_at", *ODD[i:], *ODD[:i])  # the same count, other names in each slot
        shaped, ordinary = _both(adapter, ShapedQuery(_coverage(), table, names), 2)
        assert shaped == ordinary
    # one template served every table (the adapter keeps them by shape), and it was not
    # refused: a refused shape says so at DEBUG and keeps no text to fill in
    [template] = adapter.shapes.by_key.values()
    assert template.parts
    assert "is not templated" not in caplog.text


def test_catalog_spellings_and_compared_types_are_each_tables_own() -> None:
    """BigQuery: `day` is DATE in one table (the bound is cast) and TIMESTAMP in another; a
    column's catalog spelling differs from dlt's name (Snowflake folds, `userId` does not)."""
    bq = ADAPTERS["bigquery"]()
    bq.read_metadata([
        ("daily", "day", "DATE", "YES", "YES"),
        ("daily", "amount", "FLOAT64", "YES", "NO"),
        ("events", "day", "TIMESTAMP", "YES", "NO"),
        ("events", "amount", "FLOAT64", "YES", "NO"),
        ("more_daily", "day", "DATE", "YES", "YES"),
        ("more_daily", "amount", "FLOAT64", "YES", "NO"),
    ])
    texts = []
    for table in ("daily", "events", "more_daily"):
        shaped, ordinary = _both(bq, ShapedQuery(_coverage(), table, ("day", "amount")), 2)
        assert shaped == ordinary
        texts.append(shaped)
    assert "DATE" in texts[0]  # the type really changed the text
    assert "DATE" not in texts[1]
    assert len(bq.shapes.by_key) == 2  # one template per compared type

    sf = ADAPTERS["snowflake"]()
    sf.read_metadata([
        ("EVENTS", "LOADED_AT", "TIMESTAMP_TZ", "YES"),
        ("EVENTS", "userId", "TEXT", "YES"),
        ("EVENTS", "ACTOR_LOGIN", "TEXT", "YES"),
    ])
    query = ShapedQuery(_coverage(), "events", ("loaded_at", "userId", "actor_login", "gone"))
    shaped, ordinary = _both(sf, query, 2)
    assert shaped == ordinary
    for spelled in ('"userId"', '"ACTOR_LOGIN"', '"GONE"'):
        assert spelled in shaped


def test_a_shape_that_is_not_plain_falls_back_to_the_ordinary_rendering() -> None:
    """A name that lands in a string literal, not an identifier: never templated."""

    def build(table: exp.Table, names: Sequence[str]) -> exp.Expression:
        return exp.select(col(names[0]), exp.Literal.string(names[1])).from_(table)

    adapter = ADAPTERS["duckdb"]()
    shape = Shape("literal", build)
    for table in ("a", "b"):
        shaped, ordinary = _both(adapter, ShapedQuery(shape, table, ("x", table)), 0)
        assert shaped == ordinary
        assert f"'{table}'" in shaped
    assert [t.parts for t in adapter.shapes.by_key.values()] == [[]]  # one key, refused


def test_a_write_cannot_be_shaped() -> None:
    from dlt_contract_ops.errors import UnsafeQueryError

    shape = Shape("delete", lambda table, names: exp.delete(table).where(
        exp.EQ(this=col(names[0]), expression=exp.Placeholder())))
    with pytest.raises(UnsafeQueryError):
        ADAPTERS["duckdb"]().driver_sql(ShapedQuery(shape, "t", ("a",)), 1, "coverage")
