"""Orders whose producer renames `order_date` to `sale_date` in a later load (the rename demo)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    order_id: int
    amount_cents: int
    order_date: date | None = None


@dlt.resource(columns=Order, schema_contract={"columns": "evolve"})
def orders(start: int = 0, renamed: bool = False) -> Iterator[dict[str, object]]:
    for i in range(start, start + 20):
        day = date(2026, 3, 1) + timedelta(days=i % 20)
        yield {"order_id": i, "amount_cents": 1000 + i,
               ("sale_date" if renamed else "order_date"): day}


@dlt.source(name="shop_orders")
def shop_orders(start: int = 0, renamed: bool = False) -> object:
    return orders(start, renamed)
