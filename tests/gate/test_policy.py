"""The gate's policy on real DuckDB loads: approved additions, odd column names, nested
items in a json column, and the policy read from `.dlt/config.toml`."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import dlt
import pytest
from pydantic import BaseModel

from dlt_contract_ops import GateRejected, gated_run
from dlt_contract_ops.core.ingest import GatePolicy
from dlt_contract_ops.settings import project_context
from tests.gate.conftest import (
    Target,
    baseline,
    baseline_orders,
    columns_of,
    q,
    query,
    slice_of,
    trusted,
)
from tests.gate.seed import BASELINE, MERGE, SHAPES, SLICE, Order, orders, shop
from tests.projects import Project

CLOSED = GatePolicy(allow_nullable_additions=False)
PINNED = GatePolicy(allow_nullable_additions=False,
                    approved_additions=frozenset({"orders.currency:text"}))


@pytest.mark.parametrize(
    ("policy", "action", "reason"),
    [
        (GatePolicy(), "loaded", "added: orders.currency (approved)"),
        (CLOSED, "rejected", "added: orders.currency"),
        (PINNED, "loaded", "added: orders.currency (approved)"),
        # the pin names the type: currency sent as text does not match a bigint approval
        (GatePolicy(allow_nullable_additions=False,
                    approved_additions=frozenset({"orders.currency:bigint"})),
         "rejected", "added: orders.currency"),
    ],
)
def test_additions_under_policy(
    duckdb_target: Target, policy: GatePolicy, action: str, reason: str
) -> None:
    pipeline = baseline_orders(duckdb_target)
    report = gated_run(pipeline, orders(SHAPES["added"]), policy=policy, raise_on_reject=False)
    assert (report.action, report.reason) == (action, reason)
    assert (trusted(pipeline), slice_of(pipeline)) == ((3, 18500), (2, 14500))
    assert ("currency" in columns_of(pipeline)) is (action == "loaded")


ODD = {"Gift-Wrap": "yes", "Delivery Note": "leave at door", "StoreID": 7, "Straße": "Hauptstr."}
#: dlt's snake_case names for them: approvals name the column as it lands
ODD_APPROVED = frozenset({
    "orders.gift_wrap:text", "orders.delivery_note:text", "orders.store_id:bigint",
    "orders.stra_e:text",
})


def test_odd_column_names_are_approved_by_their_landed_names(
    duckdb_target: Target, tmp_path: Path
) -> None:
    pipeline = baseline_orders(duckdb_target)
    odd = tuple({**r, **ODD} for r in SLICE)
    # approvals in the source's spelling do not match
    as_sent = GatePolicy(allow_nullable_additions=False, approved_additions=frozenset(
        f"orders.{name}:{'bigint' if name == 'StoreID' else 'text'}" for name in ODD))
    with pytest.raises(GateRejected) as caught:
        gated_run(pipeline, orders(odd), policy=as_sent, quarantine_dir=tmp_path / "q")
    assert caught.value.report.reason == (
        "added: orders.delivery_note, orders.gift_wrap, orders.store_id, orders.stra_e")
    report = gated_run(pipeline, orders(odd), policy=GatePolicy(
        allow_nullable_additions=False, approved_additions=ODD_APPROVED))
    assert report.action == "loaded"
    rows = query(pipeline, "SELECT order_id, gift_wrap, delivery_note, store_id, stra_e "
                           f"FROM {q(pipeline, 'orders')} ORDER BY order_id")
    assert rows == [("o-1", None, None, None, None),
                    ("o-2", "yes", "leave at door", 7, "Hauptstr."),
                    ("o-3", "yes", "leave at door", 7, "Hauptstr.")]


# -- nested items: a list of models is one json column --------------------------------------

class Item(BaseModel):
    sku: str
    qty: int


class OrderWithItems(Order):
    items: list[Item]


def with_items(rows: Any) -> Any:
    return dlt.resource([dict(r) for r in rows], name="orders", columns=OrderWithItems,
                        write_disposition=MERGE, merge_key="order_date")


ITEMS = tuple({**r, "items": [{"sku": f"sku-{n}", "qty": n}]} for n, r in enumerate(BASELINE, 1))


def items_of(pipeline: Any) -> list[Any]:
    rows = query(pipeline, f"SELECT items FROM {q(pipeline, 'orders')} ORDER BY order_id")
    return [json.loads(v) if isinstance(v, str) else v for (v,) in rows]


def test_nested_items_observed_as_a_child_table_are_the_json_column(
    duckdb_target: Target,
) -> None:
    pipeline = duckdb_target.pipeline()
    report = gated_run(pipeline, with_items(ITEMS))
    # the raw batch unnests into `orders__items`; the contract keeps `items` as json
    assert (report.action, report.differences) == ("loaded", [])
    assert pipeline.default_schema.get_table("orders")["columns"]["items"]["data_type"] == "json"
    assert "orders__items" not in pipeline.default_schema.tables
    assert items_of(pipeline)[0] == [{"sku": "sku-1", "qty": 1}]


def test_a_new_field_inside_nested_items_is_not_gated(duckdb_target: Target) -> None:
    """The json column takes any shape: a new field inside the items is admitted and kept in
    the json value; a changed type inside them is the model's to refuse."""
    pipeline = duckdb_target.pipeline()
    gated_run(pipeline, with_items(ITEMS))
    wrapped = tuple({**r, "items": [{"sku": "sku-9", "qty": 1, "gift_wrap": True}]}
                    for r in SLICE)
    report = gated_run(pipeline, with_items(wrapped), policy=CLOSED)
    assert (report.action, report.differences) == ("loaded", [])
    assert items_of(pipeline)[1:] == [[{"sku": "sku-9", "qty": 1, "gift_wrap": True}]] * 2
    many = tuple({**r, "items": [{"sku": "sku-9", "qty": "many"}]} for r in SLICE)
    refused = gated_run(pipeline, with_items(many), raise_on_reject=False)
    assert refused.action == "rejected"
    assert refused.reason == (
        "no differences: the batch matches the contract; the resource's model refused the batch")
    assert any("items.0.qty" in note for note in refused.notes)


# -- the policy from `.dlt/config.toml` ---------------------------------------------------

GATE_CONFIG = """
[contract_ops.gate]
allow_nullable_additions = false
approved_additions = ["orders.currency:text"]
quarantine_dir = "held"

[sources.eu_shop.contract_ops.gate]
approved_additions = ["orders.vat_cents:bigint"]
"""


@pytest.mark.parametrize(
    ("source", "extra", "action"),
    [
        ("shop", {"currency": "EUR"}, "loaded"),
        ("shop", {"note": "gift"}, "rejected"),
        # the source's list replaces the project's
        ("eu_shop", {"currency": "EUR"}, "rejected"),
        ("eu_shop", {"vat_cents": 1900}, "loaded"),
    ],
)
def test_settings_from_the_project_config(
    duckdb_target: Target, project: Project, monkeypatch: pytest.MonkeyPatch,
    source: str, extra: dict[str, Any], action: str,
) -> None:
    project.config(GATE_CONFIG)
    monkeypatch.chdir(project.root)  # a relative quarantine_dir is relative to the cwd

    def build(pipeline: Any) -> None:
        with project_context(project.root):
            assert gated_run(pipeline, shop(BASELINE, name=source)).action == "loaded"

    config = hashlib.sha256(GATE_CONFIG.encode()).hexdigest()[:8]
    pipeline = baseline(duckdb_target, f"shop-{source}-{config}", build)
    with project_context(project.root):
        report = gated_run(pipeline, shop([{**r, **extra} for r in SLICE], name=source),
                           raise_on_reject=False)
    assert report.action == action
    assert (trusted(pipeline), slice_of(pipeline)) == ((3, 18500), (2, 14500))
    if action == "rejected":
        assert Path(str(report.quarantine)).parent == project.root / "held" / "orders_gate"
    else:
        [column] = extra
        assert column in columns_of(pipeline)


# -- recovery and dates sent as text -------------------------------------------------------


def test_a_quarantined_batch_reruns_after_the_fix(duckdb_target: Target, tmp_path: Path) -> None:
    """The rows as sent are in `raw/<resource>.jsonl`: fix them and run them through the gate
    again. JSON has no date type, so the fix parses the dates too (see the next test)."""
    pipeline = baseline_orders(duckdb_target)
    report = gated_run(pipeline, orders(SHAPES["renamed"]), raise_on_reject=False,
                       quarantine_dir=tmp_path / "q")
    raw = Path(str(report.quarantine)) / "raw" / "orders.jsonl"
    sent = [json.loads(line) for line in raw.read_text(encoding="utf-8").splitlines()]
    fixed = [{"order_date" if k == "sale_date" else k: v for k, v in r.items()} for r in sent]
    for row in fixed:
        row["order_date"] = dt.date.fromisoformat(row["order_date"])
    again = gated_run(pipeline, orders(fixed))
    assert (again.action, again.differences) == ("loaded", [])
    assert (trusted(pipeline), slice_of(pipeline)) == ((3, 18500), (2, 14500))


AS_ISO_TEXT = tuple({**r, "order_date": r["order_date"].isoformat()} for r in SLICE)


@pytest.mark.parametrize(
    ("policy", "action"),
    [(GatePolicy(), "rejected"), (GatePolicy(allow_coercion=True), "loaded")],
)
def test_a_date_sent_as_iso_text_is_a_retype(
    duckdb_target: Target, policy: GatePolicy, action: str
) -> None:
    """What a JSON source sends: the model would parse "2026-03-18", the gate compares the text.
    Parse dates in a map (`add_map` runs before the gate's tap) or allow coercion."""
    pipeline = baseline_orders(duckdb_target)
    report = gated_run(pipeline, orders(AS_ISO_TEXT), policy=policy, raise_on_reject=False)
    assert report.action == action
    assert [(d.change, d.label, d.observed_type) for d in report.differences] == [
        ("retyped", "orders.order_date", "text")]
    parsed = orders(AS_ISO_TEXT).add_map(
        lambda r: {**r, "order_date": dt.date.fromisoformat(r["order_date"])})
    assert gated_run(pipeline, parsed).differences == []
    assert (trusted(pipeline), slice_of(pipeline)) == ((3, 18500), (2, 14500))
