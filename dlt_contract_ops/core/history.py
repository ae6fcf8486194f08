"""What the finding index says about the sweeps that ran: per finding, when it was first and
last seen and how many sweeps saw it; per day, how many findings were seen.

Pure: the index (`history/index.py`) reads its lines and hands them over as `Sweep` values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

#: how many days the report's timeline covers
DEFAULT_TIMELINE_DAYS = 30


@dataclass(frozen=True)
class Sweep:
    """One sweep as the index recorded it: when it ended and the ids of its findings."""

    at: datetime
    ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Seen:
    """One finding across the recorded sweeps."""

    first: datetime
    last: datetime
    sweeps: int


@dataclass(frozen=True)
class History:
    """Every finding's `Seen`, the number of sweeps, and findings seen per day (oldest day
    first, `days` of them ending on the day of `now`)."""

    seen: dict[str, Seen] = field(default_factory=dict)
    sweeps: int = 0
    per_day: tuple[tuple[date, int], ...] = ()


def summarize(
    sweeps: Iterable[Sweep], now: datetime, *, days: int = DEFAULT_TIMELINE_DAYS
) -> History:
    """The history of `sweeps` (any order); a day counts each finding once, however many
    sweeps saw it that day.

    >>> t = datetime(2026, 1, 2, 12)
    >>> h = summarize([Sweep(t - timedelta(days=1), ("a",)), Sweep(t, ("a", "b"))], t, days=3)
    >>> h.seen["a"].sweeps, h.seen["b"].first == t, [n for _, n in h.per_day]
    (2, True, [0, 1, 2])
    """
    seen: dict[str, Seen] = {}
    by_day: dict[date, set[str]] = {}
    count = 0
    for s in sorted(sweeps, key=lambda s: s.at):
        count += 1
        by_day.setdefault(s.at.date(), set()).update(s.ids)
        for i in dict.fromkeys(s.ids):
            old = seen.get(i)
            seen[i] = Seen(s.at, s.at, 1) if old is None else Seen(old.first, s.at, old.sweeps + 1)
    first_day = now.date() - timedelta(days=days - 1)
    per_day = tuple(
        (d, len(by_day.get(d, ())))
        for d in (first_day + timedelta(days=n) for n in range(days))
    )
    return History(seen, count, per_day)

