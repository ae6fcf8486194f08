"""The seed of the ingest gate's tests: one row per order, four required fields, a merge by
date. The baseline has 3 rows totalling 18500 cents; the 2026-03-18 slice 2 rows and 14500."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import dlt
from dlt.extract import DltResource
from pydantic import BaseModel

D17 = dt.date(2026, 3, 17)
D18 = dt.date(2026, 3, 18)
D19 = dt.date(2026, 3, 19)

#: replace the slice of each date in the batch, leave the other dates alone
MERGE: Any = {"disposition": "merge", "strategy": "delete-insert"}


class Order(BaseModel):
    order_id: str
    order_date: dt.date
    channel: str
    amount_cents: int


Row = dict[str, Any]

BASELINE: tuple[Row, ...] = (
    {"order_id": "o-1", "order_date": D17, "channel": "web", "amount_cents": 4000},
    {"order_id": "o-2", "order_date": D18, "channel": "web", "amount_cents": 9000},
    {"order_id": "o-3", "order_date": D18, "channel": "store", "amount_cents": 5500},
)
SLICE = BASELINE[1:]


def _rename(row: Row, old: str, new: str) -> Row:
    return {(new if k == old else k): v for k, v in row.items()}


#: the 2026-03-18 slice in the five shapes a producer may send
SHAPES: dict[str, tuple[Row, ...]] = {
    "baseline": SLICE,
    "added": tuple({**r, "currency": c} for r, c in zip(SLICE, ("EUR", "USD"), strict=True)),
    "renamed": tuple(_rename(r, "order_date", "sale_date") for r in SLICE),
    "retyped": tuple({**r, "amount_cents": f"{r['amount_cents']}c"} for r in SLICE),
    "removed": tuple({k: v for k, v in r.items() if k != "channel"} for r in SLICE),
}

#: the reason each rejected shape gives; the model refuses these values too
REASONS = {
    "renamed": "missing: orders.order_date; added: orders.sale_date (renamed from order_date?)",
    "retyped": "retyped: orders.amount_cents (text, expected bigint)",
    "removed": "missing: orders.channel",
}
REFUSED = "; the resource's model refused the batch"


def orders(
    rows: Sequence[Row], *, columns: type[BaseModel] | None = Order, name: str = "orders"
) -> DltResource:
    """The seed's resource over fresh copies of `rows` (dlt may change the dicts it gets)."""
    return dlt.resource(
        [dict(r) for r in rows], name=name, columns=columns, write_disposition=MERGE,
        merge_key="order_date",
    )


def shop(rows: Sequence[Row], *, columns: type[BaseModel] | None = Order,
         name: str = "shop") -> Any:
    """`orders` inside a source called `name`: the source names the gate settings and the
    contract snapshot."""

    @dlt.source(name=name)
    def source() -> Any:
        return orders(rows, columns=columns)

    return source()
