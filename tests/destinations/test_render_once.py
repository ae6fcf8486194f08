"""A sampled query is rendered once: the driver's text and its `reproduce` from one render.

Its `reproduce` used to be prepared, inlined and generated on its own, then the query was
prepared and generated again to run: twice sqlglot's work per drifted table. Both texts must
stay exactly what the two renders gave, on every dialect, for every kind of parameter.

"Once" is seen on what `with_reproduce` hands back, not by counting calls: the query to run
carries its one rendering (the marked text and the tree it was rendered from, its
placeholders turned into the marks in place, so that tree cannot be rendered again), the
driver's text is bound from that text, and the `reproduce` text is the same text with each
mark a literal. The caller's tree is left as it was.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

import pytest
from sqlglot import exp

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.destinations.base import SqlClientAdapter
from dlt_contract_ops.destinations.bigquery import BigQueryAdapter
from dlt_contract_ops.destinations.duckdb import DuckDBAdapter
from dlt_contract_ops.destinations.postgres import PostgresAdapter
from dlt_contract_ops.destinations.rendered import Rendered
from dlt_contract_ops.destinations.snowflake import SnowflakeAdapter
from dlt_contract_ops.detectors.queries import sample_query

AXES: list[tuple[TimeAxis, Any]] = [
    (TimeAxis("loaded_at"), datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)),
    (TimeAxis("_dlt_load_id", "load_id"), "1767322800.0000000"),
]


def _literal(adapter: SqlClientAdapter, value: Any) -> str:
    """`value` as the adapter's `reproduce` writes it in place of a placeholder."""
    text = adapter.reproduce(exp.select(exp.Placeholder()), [value])
    assert text.startswith("SELECT ")
    return text.removeprefix("SELECT ")


@pytest.mark.parametrize("cls", [DuckDBAdapter, PostgresAdapter, BigQueryAdapter,
                                 SnowflakeAdapter])
@pytest.mark.parametrize(("axis", "bound"), AXES)
def test_one_render_gives_both_texts_as_two_renders_did(
    cls: type[SqlClientAdapter], axis: TimeAxis, bound: Any, caplog: pytest.LogCaptureFixture,
) -> None:
    adapter = cls.offline("raw", catalog="proj" if cls is BigQueryAdapter else None)
    caplog.set_level(logging.DEBUG, logger="dlt_contract_ops")

    def query() -> Any:
        return sample_query(adapter.table("orders"), ["coupon", "it's"], axis, since=True,
                            tiebreak="_dlt_id", max_rows=500)

    reproduce = adapter.reproduce(query(), [bound])
    driver = adapter.driver_sql(query(), 1, "sample")
    literal = _literal(adapter, bound)
    for _ in range(2):  # the first is checked against the ordinary rendering, then trusted
        caller = query()
        before = caller.sql()
        ready, text = adapter.with_reproduce(caller, [bound])
        assert caller.sql() == before  # the caller's tree is kept: its copy was rendered
        assert isinstance(ready, Rendered)
        assert text == reproduce
        assert adapter.driver_sql(ready, 1, "sample") == driver
        # one rendering for both texts: its one mark stands where the driver binds the
        # parameter and where `reproduce` shows its literal ...
        [mark] = ready.marks
        assert ready.text.count(mark) == 1
        assert ready.text.replace(mark, literal) == reproduce
        # ... and it came from the tree the query carries, rendered in place (its
        # placeholder is the mark now): the driver's text is that rendering, bound, not a
        # second render of the tree
        assert not list(ready.named.find_all(exp.Placeholder))
        assert mark in ready.named.sql(dialect=cls.capabilities.dialect)
        assert mark not in driver
    # the one render matched the ordinary one: no fallback to rendering `reproduce` alone
    assert "rendered on its own" not in caplog.text
