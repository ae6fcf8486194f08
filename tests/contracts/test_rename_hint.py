"""`contract diff` hints at an undeclared rename with the pairing rule the ingest gate and the
reconciler use; the verdict does not change (it is still a removal plus an addition)."""

from __future__ import annotations

from dlt_contract_ops.contracts.diff import diff_resources
from dlt_contract_ops.contracts.model import ColumnContract, ResourceContract


def _res(*cols: ColumnContract) -> ResourceContract:
    return ResourceContract("shop", "orders", "orders", cols)


def test_an_added_column_of_the_vanished_ones_type_is_hinted() -> None:
    old = _res(ColumnContract("id", "bigint", False), ColumnContract("order_date", "date", False))
    new = _res(ColumnContract("id", "bigint", False), ColumnContract("sale_date", "date", True))
    changes = {c.rule_id: c for c in diff_resources(old, new)}
    assert set(changes) == {"column.removed", "column.added_nullable"}
    added = changes["column.added_nullable"]
    assert added.detail is not None
    assert "probably renamed from `order_date`" in added.detail


def test_no_hint_across_incompatible_types_or_in_schema_only_mode() -> None:
    old = _res(ColumnContract("order_date", "date", False))
    text = _res(ColumnContract("sale_date", "text", True))
    assert all(c.detail is None for c in diff_resources(old, text))
    same = _res(ColumnContract("sale_date", "date", True))
    assert all(c.detail is None for c in diff_resources(old, same, schema_only=True))
