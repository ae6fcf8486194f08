"""The ingest gate on a filesystem pipeline: a rejected batch leaves every file of the bucket
as it was (the same names, the same bytes), for Parquet files and for a Delta table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dlt
import pytest

from dlt_contract_ops import gated_run
from tests.gate.seed import BASELINE, SHAPES, orders
from tests.projects import Project


def _orders(rows: Any, table_format: str | None) -> Any:
    resource = orders(rows)
    # plain files cannot merge, and Delta merges upsert only: append each batch
    resource.apply_hints(write_disposition="append", table_format=table_format)
    return resource


def _snapshot(bucket: Path) -> dict[str, bytes]:
    return {str(p.relative_to(bucket)): p.read_bytes() for p in bucket.rglob("*")
            if p.is_file()}


@pytest.mark.parametrize("table_format", [None, "delta"])
def test_a_rejected_batch_leaves_the_files_unchanged(
    project: Project, tmp_path: Path, table_format: str | None
) -> None:
    bucket = tmp_path / "bucket"
    pipeline = dlt.pipeline("orders_gate", dataset_name="gate",
                            destination=dlt.destinations.filesystem(bucket.as_uri()))
    kwargs: dict[str, Any] = {"quarantine_dir": tmp_path / "quarantine",
                              "contracts_dir": tmp_path / "contracts", "alert_sinks": []}
    first = gated_run(pipeline, _orders(BASELINE, table_format), **kwargs)
    assert first.action == "loaded"
    before = _snapshot(bucket)
    assert any(name.startswith("gate/orders/") for name in before)
    if table_format == "delta":
        assert any(name.startswith("gate/orders/_delta_log/") for name in before)

    report = gated_run(pipeline, _orders(SHAPES["renamed"], table_format),
                       raise_on_reject=False, **kwargs)

    assert report.action == "rejected"
    assert "missing: orders.order_date" in report.reason
    assert _snapshot(bucket) == before  # not a file added, changed or removed
    assert not pipeline.has_pending_data
