"""A finding's sample `reproduce` is a plain SELECT a person reads, in every adapter's dialect.

It used to be the internal sample query with its parameters as literals: ~900 characters of
window functions (`CASE WHEN "_co_rank_0" <= 5 ...`). Now it is the drifted columns, the time
axis and `_dlt_load_id`, filtered on the sample's window, newest first, `LIMIT 5`, rendered
through the one renderer with the window's bound as a literal. Here its shape on every
adapter (offline: the text, read back); the end-to-end tests run it on the real databases
and compare it with the finding's samples (`test_end_to_end`, `test_nested_tables`, the lake
tests), fakesnow on Snowflake (`test_snowflake_fakesnow`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlglot import exp

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.destinations.base import SqlClientAdapter
from dlt_contract_ops.destinations.bigquery import BigQueryAdapter
from dlt_contract_ops.destinations.duckdb import DuckDBAdapter
from dlt_contract_ops.destinations.filesystem import FilesystemAdapter
from dlt_contract_ops.destinations.postgres import PostgresAdapter
from dlt_contract_ops.destinations.snowflake import SnowflakeAdapter
from dlt_contract_ops.destinations.sqlalchemy import (
    MySQLAdapter,
    SqlaPostgresAdapter,
    SQLiteAdapter,
)
from dlt_contract_ops.detection.rows import Rows, nested_rows
from dlt_contract_ops.detectors.queries import reproduce_samples_query
from tests.destinations.plain import plain_select, shown_columns

LOAD_ID = TimeAxis("_dlt_load_id", "load_id")
LOADED_AT = TimeAxis("loaded_at", "timestamp")
BOUND = "1783598400.0000000"  # `_dlt_load_id` as dlt writes it: the window's lower bound

ADAPTERS: list[type[SqlClientAdapter]] = [
    DuckDBAdapter, PostgresAdapter, SqlaPostgresAdapter, MySQLAdapter, SQLiteAdapter,
    BigQueryAdapter, SnowflakeAdapter, FilesystemAdapter,
]


def _offline(cls: type[SqlClientAdapter]) -> SqlClientAdapter:
    return cls.offline("raw", catalog="proj" if cls is BigQueryAdapter else None)


def _flat(a: SqlClientAdapter) -> Rows:
    return a.table("events")


def _nested(a: SqlClientAdapter) -> Rows:
    return nested_rows(a.table("events__tags"), a.table("events"), "_dlt_root_id",
                       ["_dlt_load_id"])


@pytest.mark.parametrize("cls", ADAPTERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("rows", [_flat, _nested], ids=["table", "child table"])
def test_the_reproduce_is_a_plain_select_of_the_sampled_window(
    cls: type[SqlClientAdapter], rows: Callable[[SqlClientAdapter], Rows],
) -> None:
    adapter = _offline(cls)
    query = reproduce_samples_query(rows(adapter), ["payload size", "it's"], LOAD_ID,
                                    "_dlt_id", since=True, shown=["_dlt_load_id"])
    sql = adapter.reproduce(query, [BOUND])

    select = plain_select(sql, cls.capabilities.dialect)
    live = adapter.to_live
    # the drifted columns, then the axis (`_dlt_load_id`, shown once)
    assert shown_columns(select) == [live("payload size"), live("it's"), live("_dlt_load_id")]
    # within the window: a drifted column holds a value, on a load since the bound (a literal)
    where = select.args["where"].this
    assert isinstance(where, exp.And)
    assert isinstance(where.this.unnest(), exp.Or)
    bound = where.expression
    assert isinstance(bound, exp.GTE)
    assert (bound.this.name, bound.expression) == (live("_dlt_load_id"),
                                                    exp.Literal.string(BOUND))
    # newest first, then dlt's row id: the order the samples were read in
    newest, tiebreak = select.args["order"].expressions
    assert (newest.this.name, newest.args.get("desc")) == (live("_dlt_load_id"), True)
    assert (tiebreak.this.name, bool(tiebreak.args.get("desc"))) == (live("_dlt_id"), False)


@pytest.mark.parametrize("cls", ADAPTERS, ids=lambda c: c.__name__)
def test_a_table_without_a_bound_is_read_newest_first_on_its_timestamp(
    cls: type[SqlClientAdapter],
) -> None:
    """A configured timestamp column is not bounded by time (old backfills keep their
    samples): no window literal, still newest first, five rows; `_dlt_load_id` beside it."""
    adapter = _offline(cls)
    query = reproduce_samples_query(adapter.table("events"), ["coupon"], LOADED_AT,
                                    "_dlt_id", shown=["_dlt_load_id"])
    select = plain_select(adapter.reproduce(query, []), cls.capabilities.dialect)
    live = adapter.to_live
    assert shown_columns(select) == [live("coupon"), live("loaded_at"), live("_dlt_load_id")]
    assert select.args["where"].find(exp.GTE) is None
    assert select.args["order"].expressions[0].this.name == live("loaded_at")


def test_without_an_axis_it_is_still_five_rows_holding_a_value() -> None:
    adapter = _offline(DuckDBAdapter)
    sql = adapter.reproduce(reproduce_samples_query(adapter.table("events"), ["a"], None), [])
    assert sql == 'SELECT "a" FROM "raw"."events" WHERE NOT "a" IS NULL LIMIT 5'


def test_snowflake_names_a_child_tables_load_as_its_subquery_gives_it() -> None:
    """A child table's rows carry their root's `_dlt_load_id` out of a subquery; Snowflake
    folds dlt's names upper and matches quoted names exactly, so the outer query must name
    the column the subquery gives (it was aliased `"_dlt_load_id"` and named
    `"_DLT_LOAD_ID"`: "invalid identifier" on Snowflake)."""
    adapter = SnowflakeAdapter.offline("raw_events")
    adapter.read_metadata([
        ("EVENTS", "ID", "NUMBER", "NO"), ("EVENTS", "_DLT_LOAD_ID", "TEXT", "NO"),
        ("EVENTS", "_DLT_ID", "TEXT", "NO"), ("EVENTS__TAGS", "LABEL", "TEXT", "YES"),
        ("EVENTS__TAGS", "_DLT_ROOT_ID", "TEXT", "NO"), ("EVENTS__TAGS", "_DLT_ID", "TEXT", "NO"),
    ])
    query = reproduce_samples_query(_nested(adapter), ["label"], LOAD_ID, "_dlt_id", since=True)
    select = plain_select(adapter.reproduce(query, [BOUND]), "snowflake")
    inner = select.args["from_"].this.unnest()
    given = {"LABEL", "_DLT_ROOT_ID", "_DLT_ID"} | {  # the child's own columns (`c.*`) ...
        e.alias_or_name for e in inner.expressions if not isinstance(e.this, exp.Star)}
    named: set[Any] = {c.name for c in select.find_all(exp.Column)
                       if c.find_ancestor(exp.Select) is select}
    assert named <= given, named - given  # ... and the root's load, as the catalog spells it
