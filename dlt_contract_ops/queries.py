"""Query builders for the detectors, as sqlglot expressions (rendered by the adapter)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from sqlglot import exp

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.destinations.sql import any_not_null, col

SAMPLE_ROWS = 50
"""Rows the sample query reads to find up to 5 non-NULL values per drifted column."""
SAMPLES_PER_COLUMN = 5

FIRST_SEEN_ALIAS = "_co_first_seen"


def sample_query(
    table: exp.Table, columns: Sequence[str], axis: TimeAxis | None, limit: int = SAMPLE_ROWS
) -> exp.Select:
    """Recent rows where any drifted column holds a value, plus when one first did.

    One query per drifted table: `MIN(axis) OVER ()` is evaluated over every matching row
    before the LIMIT applies, so `first_seen` is exact while only `limit` rows travel.
    """
    select: list[exp.Expression] = [col(c) for c in columns]
    q = exp.select(*select).from_(table).where(any_not_null(columns))
    if axis is not None:
        first = exp.Window(this=exp.Min(this=col(axis.column)))
        q = q.select(exp.alias_(first, FIRST_SEEN_ALIAS, quoted=True))
        q = q.order_by(exp.Ordered(this=col(axis.column), desc=True))
    return q.limit(limit)


def reproduce_sample_query(
    table: exp.Table, columns: Sequence[str], axis: TimeAxis | None
) -> exp.Select:
    """What a user pastes to see the drifted values, most recent first."""
    select: list[exp.Expression] = [col(c) for c in columns]
    q = exp.select(*select).from_(table).where(any_not_null(columns))
    if axis is not None:
        q = q.select(col(axis.column)).order_by(exp.Ordered(this=col(axis.column), desc=True))
    return q.limit(SAMPLES_PER_COLUMN)


def axis_time(value: Any, axis: TimeAxis) -> str | None:
    """An axis value as ISO-8601 text (UTC for `_dlt_load_id` epochs)."""
    if value is None:
        return None
    if axis.kind == "load_id":
        try:
            return datetime.fromtimestamp(float(value), tz=timezone.utc).isoformat()
        except (TypeError, ValueError, OverflowError):
            return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def axis_bound(moment: datetime, axis: TimeAxis) -> Any:
    """A parameter comparable with the axis column: a timestamp, or an epoch string."""
    if axis.kind == "load_id":
        return f"{moment.timestamp():.7f}"
    return moment
