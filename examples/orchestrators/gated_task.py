"""A gated load as an orchestrator task: plain Python, so Airflow's `@task` or a Dagster op can
wrap it unchanged.

The task loads one date's slice of orders through the ingest gate. An admissible batch loads
and the task returns a small JSON-able summary (what Airflow pushes to XCom, what Dagster
records as the op's output). A batch that breaks the contract loads nothing, is kept in the
quarantine folder with `diff.json`, and the task fails with the gate's reason, which names the
changed columns. Do not retry a rejected batch: the same rows fail the same way until the
producer or the contract changes.

Airflow (2.x / 3.x)::

    from airflow.decorators import task
    from airflow.exceptions import AirflowFailException

    @task
    def load_orders(rows: list[dict]) -> dict:
        try:
            return gated_orders_task(rows)
        except BatchRejected as exc:
            raise AirflowFailException(str(exc)) from exc  # fail, no retries

Dagster::

    import dagster as dg

    @dg.op
    def load_orders(rows: list[dict]) -> dict:
        try:
            return gated_orders_task(rows)
        except BatchRejected as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from exc

Run it here (DuckDB in this folder)::

    python gated_task.py
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import dlt
from pydantic import BaseModel

from dlt_contract_ops import gated_run


class Order(BaseModel):
    """The contract: one row per order, every field required, the amount in integer cents."""

    order_id: str
    order_date: dt.date
    channel: str
    amount_cents: int


class BatchRejected(Exception):
    """The batch broke its contract; the message is the gate's reason and the quarantine."""

    def __init__(self, reason: str, quarantine: str | None) -> None:
        super().__init__(
            f"orders batch rejected: {reason}"
            + (f" (kept in {quarantine}, see diff.json)" if quarantine else "")
        )
        self.reason = reason
        self.quarantine = quarantine


def gated_orders_task(
    rows: Sequence[dict[str, Any]],
    *,
    destination: Any = "duckdb",
    dataset_name: str = "shop",
    pipeline_name: str = "orders_gated_task",
) -> dict[str, Any]:
    """Load `rows` (one date's orders) through the gate; raise `BatchRejected` if rejected.

    Returns `{"action", "reason", "schema_version", "load_ids"}`, all JSON values.
    """
    pipeline = dlt.pipeline(
        pipeline_name=pipeline_name, destination=destination, dataset_name=dataset_name
    )
    resource = dlt.resource(
        [dict(r) for r in rows], name="orders", columns=Order, merge_key="order_date",
        # the slice of each date in the batch replaces what the table holds for that date
        write_disposition={"disposition": "merge", "strategy": "delete-insert"},
    )
    # the report, not an exception: the task decides how a rejection fails
    report = gated_run(pipeline, resource, raise_on_reject=False)
    if report.action == "rejected":
        raise BatchRejected(report.reason, report.quarantine)
    return {
        "action": report.action,
        "reason": report.reason,
        "schema_version": report.schema_version,
        "load_ids": (report.load_info or {}).get("loads_ids", []),
    }


if __name__ == "__main__":
    day = dt.date(2026, 3, 18)
    good = [
        {"order_id": "o-2", "order_date": day, "channel": "web", "amount_cents": 9000},
        {"order_id": "o-3", "order_date": day, "channel": "store", "amount_cents": 5500},
    ]
    print(gated_orders_task(good))
    renamed = [{("sale_date" if k == "order_date" else k): v for k, v in r.items()} for r in good]
    try:
        gated_orders_task(renamed)
    except BatchRejected as exc:
        print(exc)
