"""Support tickets whose `status` is a closed code set (`Literal`), for the distribution demo.

A week of daily loads keeps the same mix of statuses (with a little day-to-day noise); then the
producer starts mapping a status it does not know to the catch-all `other`: still a declared
value, no schema or contract change, only its share moves from 0% to 4% of the rows.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Literal

import dlt
from pydantic import BaseModel

Status = Literal["open", "pending", "solved", "other"]


class Ticket(BaseModel):
    ticket_id: int
    status: Status
    priority: int
    opened_at: datetime


_START = datetime(2026, 11, 1, tzinfo=timezone.utc)
#: the steady mix of statuses; `other` (the producer's default bucket) never occurs
_MIX = {"open": 0.30, "pending": 0.20, "solved": 0.50}


@dlt.resource(columns=Ticket, write_disposition="append", primary_key="ticket_id")
def tickets(
    day: int = 0, count: int = 500, other_share: float = 0.0
) -> Iterator[dict[str, object]]:
    """One day's tickets, seeded by `day` (the same rows every run); `other_share` of them in
    the default bucket `other`."""
    rng = random.Random(day)
    statuses = rng.choices(list(_MIX), weights=list(_MIX.values()), k=count)
    for i in rng.sample(range(count), round(count * other_share)):
        statuses[i] = "other"
    for i, status in enumerate(statuses):
        yield {
            "ticket_id": day * 10_000 + i,
            "status": status,
            "priority": rng.randint(1, 4),
            "opened_at": _START + timedelta(days=day, minutes=2 * i),
        }


@dlt.source(name="support_tickets")
def support_tickets(day: int = 0, count: int = 500, other_share: float = 0.0) -> object:
    return tickets(day, count, other_share)
