"""The ingest gate on the orders example: a batch that keeps the contract loads, a batch whose
producer renamed `order_date` is rejected before any trusted row changes.

    python gate_orders.py
"""

from __future__ import annotations

import datetime as dt

import dlt
from pydantic import BaseModel

from dlt_contract_ops import GateRejected, gated_run


class Order(BaseModel):
    """One row per order; every field required; the amount in integer cents."""

    order_id: str
    order_date: dt.date
    channel: str
    amount_cents: int


def orders(rows: list[dict[str, object]]) -> object:
    # the requested date's slice replaces what the table holds for that date
    return dlt.resource(
        rows, name="orders", columns=Order, merge_key="order_date",
        write_disposition={"disposition": "merge", "strategy": "delete-insert"},
    )


def trusted(pipeline: dlt.Pipeline) -> str:
    with pipeline.sql_client() as client:
        rows, cents = client.execute_sql("SELECT COUNT(*), SUM(amount_cents) FROM orders")[0]
    return f"{rows} rows, {cents} cents"


if __name__ == "__main__":
    day = dt.date(2026, 3, 18)
    baseline = [
        {"order_id": "o-1", "order_date": day - dt.timedelta(days=1), "channel": "web",
         "amount_cents": 4000},
        {"order_id": "o-2", "order_date": day, "channel": "web", "amount_cents": 9000},
        {"order_id": "o-3", "order_date": day, "channel": "store", "amount_cents": 5500},
    ]
    pipeline = dlt.pipeline("orders_gate", destination="duckdb", dataset_name="shop")
    gated_run(pipeline, orders(baseline))
    print(f"baseline loaded: trusted table holds {trusted(pipeline)}")

    with_currency = [dict(row, currency="EUR") for row in baseline[1:]]
    report = gated_run(pipeline, orders(with_currency))
    print(f"approved: {report.action} ({report.reason}); schema version {report.schema_version}")

    renamed = [
        {"order_id": r["order_id"], "sale_date": r["order_date"], "channel": r["channel"],
         "amount_cents": r["amount_cents"]}
        for r in baseline[1:]
    ]
    try:
        gated_run(pipeline, orders(renamed))
    except GateRejected as rejected:
        print(f"rejected: {rejected.report.reason}")
        print(f"  the batch is kept in {rejected.report.quarantine}")
    print(f"trusted table still holds {trusted(pipeline)}; pending packages: "
          f"{pipeline.has_pending_data}")
