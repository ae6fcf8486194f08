"""Rendering a prepared query in place: the text is the one a copy renders, the caller's tree
is left as it was, and the read-only check still refuses a write."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from sqlglot import exp

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.destinations.duckdb import DuckDBAdapter
from dlt_contract_ops.destinations.sql import (
    ParamStyle,
    inline_params,
    param,
    render,
    render_bound,
)
from dlt_contract_ops.detectors.queries import coverage_query, sample_query
from dlt_contract_ops.errors import UnsafeQueryError

AXIS = TimeAxis("loaded_at")


def _queries() -> list[exp.Expression]:
    table = DuckDBAdapter.offline("raw").table("Odd \"table\" 50%")
    columns = ["a", "b:c", "50% d"]
    return [
        coverage_query(table, columns, AXIS),
        sample_query(table, columns, AXIS, tiebreak="_dlt_id", since=True, max_rows=10),
    ]


@pytest.mark.parametrize("paramstyle", ["qmark", "format", "named"])
@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "bigquery", "snowflake"])
def test_owned_rendering_equals_rendering_a_copy(dialect: str, paramstyle: ParamStyle) -> None:
    for query in _queries():
        n = len(list(query.find_all(exp.Placeholder)))
        expected = render_bound(query, dialect, paramstyle, n)
        assert render_bound(query.copy(), dialect, paramstyle, n, owned=True) == expected
        values = [datetime(2026, 1, 2, tzinfo=timezone.utc)] * n
        assert render(inline_params(query.copy(), values, owned=True), dialect,
                      owned=True) == render(inline_params(query, values), dialect)


def test_the_adapter_leaves_the_callers_tree_as_it_was() -> None:
    adapter = DuckDBAdapter.offline("raw")
    for query in _queries():
        before = query.sql()
        n = len(list(query.find_all(exp.Placeholder)))
        text = adapter.driver_sql(query, n, "coverage")
        assert query.sql() == before
        assert adapter.driver_sql(query, n, "coverage") == text  # the same text again
        adapter.reproduce(query, [datetime(2026, 1, 2, tzinfo=timezone.utc)] * n)
        adapter.render(query)
        assert query.sql() == before


def test_a_handed_over_query_renders_as_a_copy_does_without_being_copied() -> None:
    """`owned=True` (a query built for one run): the same driver text, from the handed tree
    itself: it is the tree the renderer changed (a copy would have left it as it was)."""
    adapter = DuckDBAdapter.offline("raw")
    for query in _queries():
        n = len(list(query.find_all(exp.Placeholder)))
        expected = adapter.driver_sql(query, n, "coverage")
        handed = query.copy()
        assert adapter.driver_sql(handed, n, "coverage", owned=True) == expected
        assert handed.sql() != query.sql()  # rendered in place
        assert adapter.driver_sql(query, n, "coverage") == expected  # the caller's kept


def test_an_owned_write_is_still_refused() -> None:
    delete = exp.delete("t").where(exp.EQ(this=exp.column("a"), expression=param()))
    with pytest.raises(UnsafeQueryError):
        render_bound(delete, "duckdb", "qmark", 1, owned=True)
    with pytest.raises(UnsafeQueryError):
        render(exp.insert("SELECT 1", "t"), "duckdb", owned=True)
