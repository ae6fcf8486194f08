"""Child tables under the gate: a model with `items: list[Item]` and `skip_nested_types` (the
dlt docs' nested model) lands its items in `orders__items` (and their tags in
`orders__items__tags`); the gate compares those tables with the nested models as `reconcile`
does (`core.naming.nested_tables`). Real gated runs into DuckDB and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import dlt
import pytest
from dlt.common.libs.pydantic import DltConfig
from pydantic import BaseModel

from dlt_contract_ops import GateRejected, gated_run
from dlt_contract_ops.core.ingest import GatePolicy
from tests.gate.conftest import Target, q, queries
from tests.gate.seed import SLICE, Order

CLOSED = GatePolicy(allow_nullable_additions=False)


class Item(BaseModel):
    sku: str
    quantity: int
    tags: list[str] = []


class OrderWithLines(Order):
    dlt_config: ClassVar[DltConfig] = {"skip_nested_types": True}

    items: list[Item]


def lines(rows: Any) -> Any:
    return dlt.resource([dict(r) for r in rows], name="orders", columns=OrderWithLines,
                        write_disposition="append")


def _with(items: Any) -> tuple[dict[str, Any], ...]:
    return tuple({**r, "items": items(n)} for n, r in enumerate(SLICE, 1))


#: two orders, one line each, the first line tagged
CONFORMING = _with(lambda n: [{"sku": f"sku-{n}", "quantity": n,
                               "tags": ["gift"] if n == 1 else []}])


def _landed(pipeline: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    items, tags = queries(
        pipeline,
        f"SELECT sku, quantity FROM {q(pipeline, 'orders__items')} ORDER BY sku",
        f"SELECT value FROM {q(pipeline, 'orders__items__tags')}",
    )
    return items, tags


@pytest.mark.parametrize("policy", [GatePolicy(), CLOSED], ids=["default", "closed"])
def test_a_conforming_nested_batch_is_accepted_and_lands(
    target: Target, policy: GatePolicy
) -> None:
    pipeline = target.pipeline("lines_gate")
    for _ in range(2):  # into a fresh destination, then into the tables it made
        report = gated_run(pipeline, lines(CONFORMING), policy=policy)
        # the declared child columns are the contract, not approved additions
        assert (report.action, report.differences) == ("loaded", [])
        assert report.reason == "no differences: the batch matches the contract"
    items, tags = _landed(pipeline)
    assert items == [("sku-1", 1), ("sku-1", 1), ("sku-2", 2), ("sku-2", 2)]
    assert tags == [("gift",), ("gift",)]


def test_orders_without_lines_are_not_missing_the_child_columns(
    duckdb_target: Target,
) -> None:
    """Every list empty: dlt makes no child rows, and the gate has none to compare."""
    pipeline = duckdb_target.pipeline("lines_gate")
    report = gated_run(pipeline, lines(_with(lambda n: [])), policy=CLOSED)
    assert (report.action, report.differences) == ("loaded", [])


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ({"code": "sku-1", "quantity": 1},
         "missing: orders__items.sku; added: orders__items.code (renamed from sku?)"),
        ({"sku": "sku-1", "quantity": "one"},
         "retyped: orders__items.quantity (text, expected bigint)"),
        ({"sku": "sku-1", "quantity": 1, "tags": [7]},
         "retyped: orders__items__tags.value (bigint, expected text)"),
    ],
    ids=["renamed", "retyped", "retyped-grandchild"],
)
def test_a_breaking_change_in_a_child_table_is_rejected(
    duckdb_target: Target, tmp_path: Path, line: dict[str, Any], reason: str
) -> None:
    pipeline = duckdb_target.pipeline("lines_gate")
    gated_run(pipeline, lines(CONFORMING), policy=CLOSED)
    with pytest.raises(GateRejected) as caught:
        gated_run(pipeline, lines(_with(lambda n: [line])), quarantine_dir=tmp_path / "q")
    assert caught.value.report.reason.startswith(reason + ";")  # and the model refused it
    assert _landed(pipeline) == ([("sku-1", 1), ("sku-2", 2)], [("gift",)])
