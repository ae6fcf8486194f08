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


RECENT_FLAG = "_co_recent"


def coverage_query(table: exp.Table, columns: Sequence[str], axis: TimeAxis) -> exp.Select:
    """ONE aggregate over a table: rows and non-NULL counts per column, per window.

    Parameters, in order: start of the recent window, start of the baseline window. The
    lower bound on the axis lets partitioned destinations prune. Result row:
    `recent_rows, baseline_rows, (recent_non_null, baseline_non_null) per column`.
    """
    flag = exp.Case(
        ifs=[exp.If(this=exp.GTE(this=col(axis.column), expression=exp.Placeholder()),
                    true=exp.Literal.number(1))],
        default=exp.Literal.number(0),
    )
    inner = (
        exp.select(exp.alias_(flag, RECENT_FLAG, quoted=True), *[col(c) for c in columns])
        .from_(table)
        .where(exp.GTE(this=col(axis.column), expression=exp.Placeholder()))
    )
    is_recent = exp.EQ(this=col(RECENT_FLAG), expression=exp.Literal.number(1))
    is_base = exp.EQ(this=col(RECENT_FLAG), expression=exp.Literal.number(0))
    select: list[exp.Expression] = [
        exp.Sum(this=col(RECENT_FLAG)),
        exp.Sub(this=exp.Count(this=exp.Star()), expression=exp.Sum(this=col(RECENT_FLAG))),
    ]
    for c in columns:
        for cond in (is_recent, is_base):
            select.append(exp.Count(this=exp.Case(ifs=[exp.If(this=cond.copy(), true=col(c))])))
    return exp.select(*select).from_(exp.alias_(exp.Subquery(this=inner), "s"))


def reproduce_coverage_query(
    table: exp.Table, columns: Sequence[str], axis: TimeAxis
) -> exp.Select:
    """A readable coverage breakdown per window, for a user's SQL console.

    Parameters, in order: start of the recent window, start of the baseline window.
    """
    window = exp.Case(
        ifs=[exp.If(this=exp.GTE(this=col(axis.column), expression=exp.Placeholder()),
                    true=exp.Literal.string("recent"))],
        default=exp.Literal.string("baseline"),
    )
    select: list[exp.Expr] = [
        exp.alias_(window, "window", quoted=True),
        exp.alias_(exp.Count(this=exp.Star()), "rows", quoted=True),
    ]
    select += [exp.alias_(exp.Count(this=col(c)), f"{c} non-null", quoted=True) for c in columns]
    return (
        exp.select(*select)
        .from_(table)
        .where(exp.GTE(this=col(axis.column), expression=exp.Placeholder()))
        .group_by(exp.Literal.number(1))  # by position: the CASE holds a parameter
    )


def select_columns(table: exp.Table, columns: Sequence[str], limit: int) -> exp.Select:
    """`SELECT cols FROM table LIMIT n`: a reproduce for declared-side drift."""
    return exp.select(*[col(c) for c in columns]).from_(table).limit(limit)
