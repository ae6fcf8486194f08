"""Fixtures for sink tests: findings with odd identifiers, errors with real tracebacks. The
loaded app project (`app_project`) comes from `tests/warehouses.py`."""

from __future__ import annotations

from typing import Any

import pytest

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.registry import clear_cache
from dlt_contract_ops.sinks.base import ErrorEvent


def make_finding(**overrides: Any) -> DriftFinding:
    """An additive finding on a resource whose names need quoting somewhere."""
    values: dict[str, Any] = {
        "drift_type": "additive",
        "pipeline": "shop_pipeline",
        "source": "shop",
        "resource": "Order Items",
        "table": "order_items",
        "columns": ["payload_size", "Straße-Nr"],
        "column_types": {"payload_size": "BIGINT", "Straße-Nr": "VARCHAR"},
        "samples": {"payload_size": [519, 526], "Straße-Nr": ["12a"]},
        "first_seen": "2026-07-16T16:25:09+00:00",
        "reproduce": 'SELECT "payload_size", "Straße-Nr" FROM "shop_raw"."order_items" LIMIT 5',
    }
    values.update(overrides)
    return DriftFinding(**values)


def make_error(**overrides: Any) -> ErrorEvent:
    """A reconciler error carrying a raised exception (so it has a traceback)."""
    try:
        raise RuntimeError("relation \"shop_raw.order_items\" does not exist")
    except RuntimeError as exc:
        caught = exc
    values: dict[str, Any] = {
        "source": "shop",
        "pipeline": "shop_pipeline",
        "resource": "Order Items",
        "detector": "additive",
        "message": "sample query for `order_items` failed: relation does not exist",
        "exception": caught,
    }
    values.update(overrides)
    return ErrorEvent(**values)


@pytest.fixture(autouse=True)
def _fresh_registry() -> None:
    """Entry points are cached per process; a test that installs a plugin must not leak."""
    clear_cache()

