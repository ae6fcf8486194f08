"""Detectors run on `InMemoryAdapter`, the warehouse a detector author's test fills.

The freshness test of docs/writing-a-detector.md is read from that page and run as it stands
(so the page cannot rot), with the page's freshness module beside it; a built-in detector
(`additive`) runs on the same adapter, whatever it declares it can run.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pytest
from dlt.common.normalizers.naming.snake_case import NamingConvention
from sqlglot import exp

from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable
from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.connect import Target
from dlt_contract_ops.destinations.memory import InMemoryAdapter
from dlt_contract_ops.destinations.shapes import ShapedQuery
from dlt_contract_ops.detection.detector import DetectorRun
from dlt_contract_ops.detection.source_input import SourceInput
from dlt_contract_ops.detectors.additive import run_additive
from dlt_contract_ops.settings.project import SourceSettings
from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sources.discovery import BuiltSource
from tests.detectors.test_third_party import DOC, doc_module


def doc_test() -> str:
    """The `test_freshness.py` block of docs/writing-a-detector.md."""
    blocks = re.findall(r"```python\n(# test_freshness\.py\n.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 1, "the page shows the test once"
    return blocks[0]


def test_the_pages_freshness_test_passes_on_the_in_memory_adapter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "freshness_detector.py").write_text(doc_module())
    (tmp_path / "test_freshness_page.py").write_text(doc_test())
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("test_freshness_page")
    module.test_a_table_loaded_ten_days_ago_is_stale()


class TreesOnly(InMemoryAdapter):
    """Runs sqlglot trees only, as a third-party adapter does: nothing hands it the
    renderer's prepared values, whatever class it is."""

    capabilities: ClassVar[Capabilities] = replace(
        InMemoryAdapter.capabilities, prepared_queries=False)


@pytest.mark.parametrize("cls", [InMemoryAdapter, TreesOnly])
def test_a_builtin_detector_samples_an_unmodelled_column_in_memory(
    cls: type[InMemoryAdapter],
) -> None:
    now = datetime(2026, 1, 11, 12, tzinfo=timezone.utc)
    load = f"{now.timestamp() - 3600:.6f}"
    adapter = cls("shop_data")
    handed: list[type] = []
    run_all = adapter.run_all

    def recording(batch: Any, kind: Any, **options: Any) -> Any:
        handed.extend(type(query) for query, _ in batch)
        return run_all(batch, kind, **options)

    adapter.run_all = recording  # type: ignore[method-assign]
    adapter.add_table(
        "orders",
        {"id": "BIGINT", "coupon": "VARCHAR", "_dlt_load_id": "VARCHAR", "_dlt_id": "VARCHAR"},
        [{"id": 1, "coupon": "WINTER", "_dlt_load_id": load, "_dlt_id": "a"},
         {"id": 2, "_dlt_load_id": load, "_dlt_id": "b"}],
    )
    orders = ExpectedTable("orders", "orders", (ExpectedColumn("id", "bigint"),))
    source = SourceSettings("shop", "shop_src:shop", pipeline_name="shop_pipe")
    ctx = SourceInput.of(
        source, BuiltSource("shop", "shop", NamingConvention(), (orders,)),
        Target("shop_pipe", None, adapter.name, adapter.dataset), adapter,
        adapter.list_columns(), now=now,
    )
    result = run_additive(DetectorRun("additive", ctx, Emitter([]), None, source))
    assert dict(adapter.queries) == {"metadata": 1, "sample": 1}
    # a shaped query where the adapter declares it runs them (`prepared_queries`), else a
    # tree: any adapter runs that
    assert handed == [ShapedQuery if cls.capabilities.prepared_queries else exp.Select]
    adapter.close()

    assert result.error is None
    [finding] = result.findings
    assert (finding.table, finding.columns, finding.samples) == (
        "orders", ["coupon"], {"coupon": ["WINTER"]})
    # the finding's query is DuckDB SQL that runs as pasted (here on a copy of the data)
    with duckdb.connect() as con:
        con.execute("CREATE SCHEMA shop_data")
        con.execute("CREATE TABLE shop_data.orders (id BIGINT, coupon VARCHAR, "
                    "_dlt_load_id VARCHAR, _dlt_id VARCHAR)")
        con.execute("INSERT INTO shop_data.orders VALUES (1, 'WINTER', ?, 'a')", [load])
        rows = con.execute(finding.reproduce).fetchall()
    assert rows == [("WINTER", load)]  # the sampled row: its value and its load
