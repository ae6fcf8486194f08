"""A sampled query is rendered once: the driver's text and its `reproduce` from one render.

Its `reproduce` used to be prepared, inlined and generated on its own, then the query was
prepared and generated again to run: twice sqlglot's work per drifted table. Both texts must
stay exactly what the two renders gave, on every dialect, for every kind of parameter.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

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


@pytest.mark.parametrize("cls", [DuckDBAdapter, PostgresAdapter, BigQueryAdapter,
                                 SnowflakeAdapter])
@pytest.mark.parametrize(("axis", "bound"), AXES)
def test_one_render_gives_both_texts_as_two_renders_did(
    cls: type[SqlClientAdapter], axis: TimeAxis, bound: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    adapter = cls.offline("raw", catalog="proj" if cls is BigQueryAdapter else None)

    def query() -> Any:
        return sample_query(adapter.table("orders"), ["coupon", "it's"], axis, since=True,
                            tiebreak="_dlt_id", max_rows=500)

    reproduce = adapter.reproduce(query(), [bound])
    driver = adapter.driver_sql(query(), 1, "sample")
    prepared = 0
    prepare = cls.prepare

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal prepared
        prepared += 1
        return prepare(self, *args, **kwargs)

    monkeypatch.setattr(cls, "prepare", counted)
    for _ in range(2):  # the first is checked against the ordinary rendering, then trusted
        prepared = 0
        ready, text = adapter.with_reproduce(query(), [bound])
        assert isinstance(ready, Rendered)
        assert text == reproduce
        assert adapter.driver_sql(ready, 1, "sample") == driver
    assert prepared == 1  # once for both texts
