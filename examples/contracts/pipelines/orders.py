"""ERP order lines with their meaning declared on the model.

`Semantics` travels in `typing.Annotated` metadata: Pydantic validates and dlt lands the rows
exactly as without it. `dlt-contract-ops contract snapshot` reads it into a versioned contract,
and `contract check` blocks a release that changes what a column means.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from decimal import Decimal
from typing import Annotated, Literal

import dlt
from pydantic import BaseModel, Field

from dlt_contract_ops.contracts import Semantics, TableSemantics


@TableSemantics(keys=("order_id", "line_no"), grain="one row per ERP order line")
class OrderLine(BaseModel):
    order_id: str = Field(description="ERP order identifier")
    line_no: int = Field(description="line ordinal within the order")
    product_id: str
    quantity: Annotated[int, Semantics(unit="item")]
    unit_price: Annotated[
        Decimal,
        Semantics(unit="USD", description="price of one item before tax and shipping"),
        Field(max_digits=12, decimal_places=2),
    ]
    status: Literal["paid", "pending"]
    updated_at: Annotated[datetime, Semantics(timezone="UTC")]
    coupon: Annotated[str | None, Semantics(category_pattern=r"^[A-Z0-9]{4,12}$")] = None


@dlt.resource(columns=OrderLine, primary_key=("order_id", "line_no"), write_disposition="merge")
def order_lines() -> Iterator[dict[str, object]]:
    stamp = datetime(2026, 3, 18, 9, 30, tzinfo=timezone.utc)
    yield {"order_id": "SO-1001", "line_no": 1, "product_id": "P-7", "quantity": 2,
           "unit_price": Decimal("120.00"), "status": "paid", "updated_at": stamp}
    yield {"order_id": "SO-1001", "line_no": 2, "product_id": "P-9", "quantity": 1,
           "unit_price": Decimal("450.00"), "status": "paid", "updated_at": stamp,
           "coupon": "SPRING26"}


@dlt.source(name="orders")
def orders() -> tuple[object, ...]:
    return (order_lines,)
