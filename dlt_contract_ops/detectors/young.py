"""What a table with no baseline yet gets (a young pipeline: every row in the recent window):
a note naming it and when it can be judged, from the oldest moment its windows hold."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone
from typing import Any

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.core.load_profile import LoadProfile
from dlt_contract_ops.core.timeaxis import load_id_moment

#: a naive time is read as UTC by dlt, but a destination may compare it in its session's time
#: zone: a naive load range must clear a window's start by more than any zone offset
_NAIVE_MARGIN = timedelta(hours=26)


def profiled_moment(text: str | None, upper: bool) -> tuple[datetime, timedelta] | None:
    """A profiled min or max as an aware moment and its uncertainty; None if unreadable."""
    if text is None:
        return None
    try:
        if len(text) == 10:  # a date: its whole day, in an unknown time zone
            day = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
            return (day + timedelta(days=1) if upper else day), _NAIVE_MARGIN
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc), _NAIVE_MARGIN
    return moment, timedelta(0)


def young_note(table: str, oldest: datetime | None, recent_window: timedelta) -> str:
    """What a table whose every row is in the recent window gets: no baseline yet, so a
    column gone dark (removal) or renamed cannot show, and when that changes.

    >>> note = young_note("users", datetime(2026, 12, 2, 18, tzinfo=timezone.utc),
    ...                   timedelta(hours=6))
    >>> note.split("judge it ")[1]
    'before 2026-12-03 00:00 UTC, when its oldest load leaves the recent window'
    """
    from dlt_contract_ops.settings.duration import human

    when = (
        f"before {(oldest + recent_window).astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC, when "
        "its oldest load leaves the recent window"
        if oldest is not None else "until its oldest load is older than the recent window"
    )
    return (
        f"table `{table}`: no baseline yet (every row is in the recent window of "
        f"{human(recent_window)}): removal and rename cannot judge it {when}"
    )


def as_moment(value: Any, axis: TimeAxis) -> datetime | None:
    """An axis value as an aware moment (a load id's epoch; a naive time read as UTC)."""
    if value is None:
        return None
    if axis.kind == "load_id":
        return load_id_moment(value)
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    return None


def oldest_queried(rows: Any, axis: TimeAxis) -> datetime | None:
    """The recent window's oldest axis value, from the coverage aggregate's last column."""
    if isinstance(rows, Exception):
        return None
    return min((m for row in rows if int(row[0]) == 1
                for m in [as_moment(row[-1], axis)] if m), default=None)


def oldest_profiled(history: Sequence[LoadProfile], axis: TimeAxis, baseline: datetime
                     ) -> datetime | None:
    """The oldest moment of the profiled loads within the windows."""
    if axis.kind == "load_id":
        return min((m for load in history for m in [as_moment(load.load_id, axis)]
                    if m and m >= baseline), default=None)
    lows = (profiled_moment(c.min_value, False) for load in history
            for c in [load.columns.get(axis.column)] if c is not None)
    return min((low[0] for low in lows if low and low[0] >= baseline), default=None)
