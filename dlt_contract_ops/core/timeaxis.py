"""The time axis (pure): which column a table is windowed and ordered on, dlt's load ids as
moments and back, and removal's two windows ending at the run's clock.

The one home of the load id <-> time conversion: every module that compares a moment with a
`_dlt_load_id`, or shows a load id as a time, calls these (`tests/unit/test_one_home.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Protocol

from dlt_contract_ops.core.columns import LOAD_ID, LiveTable, TimeAxis


def choose_time_axis(
    live: LiveTable, load_timestamp_column: str | None, partition_column: str | None
) -> TimeAxis | None:
    """In order: the configured load timestamp column (already normalized) if the table has
    it; the destination's partition column; dlt's `_dlt_load_id`; else None.

    >>> from dlt_contract_ops.core.columns import LiveColumn
    >>> t = LiveTable("t", {"_dlt_load_id": LiveColumn("_dlt_load_id", "VARCHAR")})
    >>> choose_time_axis(t, "loaded_at", None)
    TimeAxis(column='_dlt_load_id', kind='load_id')
    """
    if load_timestamp_column and live.has(load_timestamp_column):
        return TimeAxis(load_timestamp_column, "timestamp")
    if partition_column and live.has(partition_column):
        return TimeAxis(partition_column, "partition")
    if live.has(LOAD_ID):
        return TimeAxis(LOAD_ID, "load_id")
    return None


# -- load ids <-> time -------------------------------------------------------------------------


def load_id_text(moment: float | datetime) -> str:
    """An epoch, or an aware moment, as `_dlt_load_id` text, for comparing with load ids as
    text (a fixed seven decimals: see `TimeAxis` for why text compares as numbers do).

    >>> load_id_text(1732900000.5)
    '1732900000.5000000'
    >>> load_id_text(datetime(2024, 11, 29, 17, 6, 40, tzinfo=timezone.utc))
    '1732900000.0000000'
    >>> load_id_text(1732900000.123456) > "1732900000.123456"  # a later bound sorts later
    True
    """
    epoch = moment.timestamp() if isinstance(moment, datetime) else moment
    return f"{epoch:.7f}"


def load_id_epoch(load_id: object) -> float | None:
    """A load id's epoch seconds; None for a value that is not a finite number (a load id
    dlt did not write: nothing to place on the time axis).

    >>> load_id_epoch("1732900000.123456"), load_id_epoch("1732900000"), load_id_epoch(17.5)
    (1732900000.123456, 1732900000.0, 17.5)
    >>> [load_id_epoch(x) for x in ("manual-load", "", None, "nan", "inf", "1e400")]
    [None, None, None, None, None, None]
    """
    try:
        epoch = float(load_id)  # type: ignore[arg-type]  # text, a number, or anything else
    except (TypeError, ValueError):
        return None
    return epoch if math.isfinite(epoch) else None


def load_id_moment(load_id: object) -> datetime | None:
    """A load id as an aware UTC moment; None for one that is not a moment.

    >>> load_id_moment("1732900000.5")
    datetime.datetime(2024, 11, 29, 17, 6, 40, 500000, tzinfo=datetime.timezone.utc)
    >>> load_id_moment("1e18"), load_id_moment("x"), load_id_moment(None)
    (None, None, None)
    """
    epoch = load_id_epoch(load_id)
    if epoch is None:
        return None
    try:
        return datetime.fromtimestamp(epoch, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):  # beyond the years a datetime holds
        return None


def load_id_iso(load_id: object) -> str | None:
    """A load id as ISO-8601 UTC text, for people; text that is not a moment as it is.

    >>> load_id_iso("1732900000.5")
    '2024-11-29T17:06:40.500000+00:00'
    >>> load_id_iso("manual-load"), load_id_iso(None)
    ('manual-load', None)
    """
    if load_id is None:
        return None
    moment = load_id_moment(load_id)
    return str(load_id) if moment is None else moment.isoformat()


# -- windows -----------------------------------------------------------------------------------


class WindowSettings(Protocol):
    """The two durations removal's windows are made of (`settings.project.RemovalSettings`)."""

    @property
    def recent_window(self) -> timedelta: ...

    @property
    def baseline_window(self) -> timedelta: ...


@dataclass(frozen=True)
class Windows:
    """Removal's two windows ending at `now`: the recent window `[recent_start, now)` and the
    baseline window `[baseline_start, recent_start)` before it.

    >>> from datetime import timedelta as td
    >>> w = Windows.ending(datetime(2026, 12, 7, 12, tzinfo=timezone.utc), td(hours=6), td(days=1))
    >>> w.recent_start.isoformat(), w.baseline_start.isoformat()
    ('2026-12-07T06:00:00+00:00', '2026-12-06T06:00:00+00:00')
    >>> w.recent_load_id, w.baseline_load_id
    ('1796623200.0000000', '1796536800.0000000')
    """

    now: datetime
    recent_start: datetime
    baseline_start: datetime

    @classmethod
    def ending(cls, now: datetime, recent: timedelta, baseline: timedelta) -> Windows:
        recent_start = now - recent
        return cls(now, recent_start, recent_start - baseline)

    @classmethod
    def of(cls, now: datetime, settings: WindowSettings) -> Windows:
        """The windows `settings` (removal's) set, ending at `now`."""
        return cls.ending(now, settings.recent_window, settings.baseline_window)

    @property
    def recent_load_id(self) -> str:
        """The recent window's start as load id text."""
        return load_id_text(self.recent_start)

    @property
    def baseline_load_id(self) -> str:
        """The baseline window's start as load id text."""
        return load_id_text(self.baseline_start)
