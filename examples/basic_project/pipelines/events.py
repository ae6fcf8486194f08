"""A small events source: product events and the accounts that emit them.

Each resource declares a Pydantic model with `columns=`; dlt-contract-ops diffs the live
tables against these models.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import dlt
from pydantic import BaseModel, Field


class Event(BaseModel):
    id: int
    event_type: str
    actor_login: str | None = None
    occurredAt: datetime  # lands as `occurred_at`: dlt's snake_case naming
    repo_name: str | None = Field(default=None, alias="repoName")


class Account(BaseModel):
    account_id: int
    login: str
    plan: str | None = None
    signed_up_at: datetime


_START = datetime(2026, 11, 1, tzinfo=timezone.utc)


@dlt.resource(columns=Event, write_disposition="append", primary_key="id")
def events(
    count: int = 200, start: int = 0, actor_login_dark: bool = False
) -> Iterator[dict[str, object]]:
    """`actor_login_dark=True` plays a provider that silently stopped sending `actor_login`."""
    kinds = ["push", "pull_request", "issue_comment", "release"]
    for i in range(start, start + count):
        yield {
            "id": i,
            "event_type": kinds[i % len(kinds)],
            "actor_login": None if actor_login_dark or i % 5 == 0 else f"user{i % 17}",
            "occurredAt": _START + timedelta(minutes=7 * i),
            "repoName": f"acme/repo-{i % 6}",
        }


@dlt.resource(columns=Account, write_disposition="merge", primary_key="account_id")
def accounts() -> Iterator[dict[str, object]]:
    for i in range(17):
        yield {
            "account_id": i,
            "login": f"user{i}",
            "plan": ["free", "team", "enterprise"][i % 3],
            "signed_up_at": _START - timedelta(days=30 + i),
        }


@dlt.source(name="product_events")
def product_events(start: int = 0, actor_login_dark: bool = False) -> tuple[object, ...]:
    return events(start=start, actor_login_dark=actor_login_dark), accounts
