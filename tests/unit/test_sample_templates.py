"""Additive's sample queries are shaped (`detectors.additive._sample`): drifted tables with as
many drifted columns share one rendered template, and every table's driver text is the one
its own `sample_query` tree renders, on every dialect, for odd table and column names; a
name the template could not spell as its tree does keeps the tree."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from dlt_contract_ops.core.columns import ExpectedTable, TimeAxis
from dlt_contract_ops.destinations.shapes import _REFUSED, ShapedQuery
from dlt_contract_ops.detectors.additive import _sample
from dlt_contract_ops.detectors.queries import sample_query
from tests.unit.test_shapes import ADAPTERS, ODD, TABLES

AXES = [TimeAxis("_dlt_load_id", "load_id"), TimeAxis("loaded_at", "timestamp"), None]


def _ctx(adapter: Any) -> Any:
    return SimpleNamespace(adapter=adapter, rows=adapter.table)


@pytest.mark.parametrize("name", sorted(ADAPTERS))
@pytest.mark.parametrize("axis", AXES, ids=["load_id", "timestamp", "none"])
@pytest.mark.parametrize("tiebreak", ["_dlt_id", None])
def test_every_table_gets_the_text_its_own_sample_tree_renders(
    name: str, axis: TimeAxis | None, tiebreak: str | None, caplog: pytest.LogCaptureFixture,
) -> None:
    adapter = ADAPTERS[name]()
    caplog.set_level(logging.DEBUG, logger="dlt_contract_ops")
    since = axis is not None and axis.kind != "timestamp"
    n = 1 if since else 0
    shaped = 0
    for i, table in enumerate(TABLES):
        columns = (ODD[i:] + ODD[:i])[:3]  # the same count, other names in each slot
        query = _sample(_ctx(adapter), ExpectedTable(table, table, ()), columns, axis,
                        tiebreak, since, 1000)
        tree = sample_query(adapter.table(table), columns, axis, tiebreak=tiebreak,
                            since=since, max_rows=1000)
        assert adapter.driver_sql(query, n, "sample") == adapter.driver_sql(tree, n, "sample")
        shaped += isinstance(query, ShapedQuery)
    # a template served the tables spelled as named, and none was refused for rendering
    # otherwise than the tree (a refusal would make every text above the ordinary one)
    assert all(t is not _REFUSED and t.parts for t in adapter.shapes.by_key.values())
    assert "is not templated" not in caplog.text
    if name in ("duckdb", "postgres", "sqlite"):  # they store every name as it is
        assert shaped == len(TABLES)


def test_a_name_that_could_take_a_helper_alias_keeps_its_own_tree() -> None:
    adapter = ADAPTERS["duckdb"]()
    axis = TimeAxis("_dlt_load_id", "load_id")
    query = _sample(_ctx(adapter), ExpectedTable("t", "t", ()), ["a", "_co_rank_0"], axis,
                    "_dlt_id", True, 1000)
    assert not isinstance(query, ShapedQuery)
    assert '"__co_rank_0"' in adapter.driver_sql(query, 1, "sample")
