"""What the finding index says about the sweeps that ran: per finding, when it was first and
last seen and how many sweeps saw it; per day, how many findings were seen.

An hourly cron appends 8,760 sweeps a year, so the index keeps its last `RAW_DAYS` of sweeps
as they are and folds older ones into one `Folded` summary (what `summarize` needs of them:
per finding its first and last sighting and its count, and the number of sweeps); a finding
no sweep has seen for `FORGET_DAYS` is dropped from it.

A sharded sweep (`reconcile --shard 2/3`: N tasks share one sweep) records one line per
shard, each naming its shard and the (source, table) pairs it covered: a finding is absent
from a line only where that line looked (`Sweep.covers`), and a shard's line counts as 1/N
of a sweep.

Each line also names the detectors its sweep ran (`Sweep.detectors`: a cron's hourly
`reconcile --all` runs no removal, its nightly `--include-removal` does), so a finding is only
ever compared with a sweep that looked for it (`Sweep.looked`, `last_looked`): an hourly sweep
that did not run removal says nothing of a removal finding, neither that it went nor that it
came.

Pure: the index (`history/index.py`) reads its lines and hands them over as `Sweep` values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from fractions import Fraction

from dlt_contract_ops.core.shard import Shard

#: how many days the report's timeline covers
DEFAULT_TIMELINE_DAYS = 30
#: sweeps younger than this stay in the index as recorded (the timeline reads them per day)
RAW_DAYS = 90
#: the index is folded once its oldest recorded sweep is this much older than `RAW_DAYS`
FOLD_SLACK_DAYS = 7
#: a finding not seen for this long is dropped from the folded summary
FORGET_DAYS = 400

#: where a finding is looked for: (source, detector, table)
Where = tuple[str, str, str]


@dataclass(frozen=True)
class Sweep:
    """One sweep as the index recorded it: when it ended, the ids of its findings, the
    sources it checked without an error (`sources`; None for a line that does not say: a
    sweep recorded before the sources were, counted as checking every source), and for a
    shard of a sharded sweep its `shard` and the tables it `covered` (source -> tables, roots
    and children; None for a whole sweep: it covered everything), and the `detectors` it ran
    (None for a line that does not say, as versions before it wrote: counted as running every
    detector. That reading can only keep a finding from being resolved, never make one: the
    line that saw a finding surely ran its detector, and a later line that did not see it,
    counted as having looked, is the one it is compared with)."""

    at: datetime
    ids: tuple[str, ...] = ()
    shard: Shard | None = None
    covered: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    sources: tuple[str, ...] | None = None
    detectors: tuple[str, ...] | None = None

    def checked(self, source: str) -> bool:
        """Whether this sweep checked `source` (a sweep that does not say checked all)."""
        return self.sources is None or source in self.sources

    def covers(self, source: str, table: str) -> bool:
        """Whether this sweep looked at `table` of `source`: a finding there that it did not
        see was gone then; elsewhere it says nothing about it.

        >>> s = Sweep(datetime(2026, 1, 1), (), Shard(2, 3), (("shop", ("orders",)),))
        >>> s.covers("shop", "orders"), s.covers("shop", "refunds"), Sweep(s.at).covers("a", "b")
        (True, False, True)
        """
        if not self.checked(source):
            return False
        if self.covered is None:
            return True
        return any(name == source and table in tables for name, tables in self.covered)

    def looked(self, where: Where) -> bool:
        """Whether this sweep looked for a finding at `where` (source, detector, table): it ran
        the detector (`detectors`) and covered the table (`covers`). A finding there that it
        did not see was gone then; anywhere else it says nothing of it.

        >>> s = Sweep(datetime(2026, 1, 1), detectors=("additive", "missing"))
        >>> s.looked(("shop", "additive", "orders")), s.looked(("shop", "removal", "orders"))
        (True, False)
        >>> Sweep(s.at).looked(("shop", "removal", "orders"))  # a line that does not say
        True
        """
        source, detector, table = where
        return (self.detectors is None or detector in self.detectors) and self.covers(
            source, table)

    @property
    def weight(self) -> Fraction:
        """What this line counts for in the number of sweeps: 1, or 1/N for a shard of N."""
        return Fraction(1, self.shard.count) if self.shard is not None else Fraction(1)


def last_looked(sweeps: Sequence[Sweep], where: Where) -> Sweep | None:
    """The latest of `sweeps` (oldest first) that looked for a finding at `where`
    (`Sweep.looked`): what a finding there is compared with. None when none did.

    >>> t = datetime(2026, 1, 1)
    >>> nightly = Sweep(t, ("gone",), detectors=("additive", "removal"))
    >>> hourly = Sweep(t + timedelta(hours=1), detectors=("additive",))
    >>> last_looked([nightly, hourly], ("s", "removal", "t")) is nightly
    True
    >>> last_looked([nightly, hourly], ("s", "distribution", "t")) is None
    True
    """
    return next((s for s in reversed(sweeps) if s.looked(where)), None)


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


@dataclass(frozen=True)
class Folded:
    """Sweeps recorded up to `until`, folded: their number and every finding's `Seen`."""

    until: datetime
    sweeps: int = 0
    seen: dict[str, Seen] = field(default_factory=dict)


def _tally(seen: dict[str, Seen], sweeps: Iterable[Sweep]) -> Fraction:
    """Add `sweeps` (oldest first) to `seen` in place; how many sweeps they make (a shard's
    line is 1/N of one)."""
    count = Fraction(0)
    for s in sweeps:
        count += s.weight
        for i in dict.fromkeys(s.ids):
            old = seen.get(i)
            seen[i] = Seen(s.at, s.at, 1) if old is None else Seen(old.first, s.at, old.sweeps + 1)
    return count


def fold(folded: Folded | None, sweeps: Iterable[Sweep], until: datetime,
         forget_before: datetime) -> tuple[Folded, list[Sweep]]:
    """`folded` with every sweep before `until` added, and the sweeps kept as they are (from
    `until` on, oldest first); a finding last seen before `forget_before` is dropped.

    >>> t = datetime(2026, 1, 10)
    >>> f, kept = fold(None, [Sweep(t - timedelta(days=9), ("old",)), Sweep(t - timedelta(days=5),
    ...                ("a",)), Sweep(t, ("a",))], t - timedelta(days=1), t - timedelta(days=8))
    >>> f.sweeps, sorted(f.seen), f.seen["a"].sweeps, [k.ids for k in kept]
    (2, ['a'], 1, [('a',)])
    """
    ordered = sorted(sweeps, key=lambda s: s.at)
    older = [s for s in ordered if s.at < until]
    seen = dict(folded.seen) if folded else {}
    count = round((folded.sweeps if folded else 0) + _tally(seen, older))
    kept_seen = {i: v for i, v in seen.items() if v.last >= forget_before}
    last = max([until, *([folded.until] if folded else [])])
    return Folded(last, count, kept_seen), [s for s in ordered if s.at >= until]


def summarize(
    sweeps: Iterable[Sweep], now: datetime, *, days: int = DEFAULT_TIMELINE_DAYS,
    folded: Folded | None = None,
) -> History:
    """The history of `sweeps` (any order) after what `folded` holds; a day counts each
    finding once, however many sweeps saw it that day.

    >>> t = datetime(2026, 1, 2, 12)
    >>> h = summarize([Sweep(t - timedelta(days=1), ("a",)), Sweep(t, ("a", "b"))], t, days=3)
    >>> h.seen["a"].sweeps, h.seen["b"].first == t, [n for _, n in h.per_day]
    (2, True, [0, 1, 2])
    >>> f = Folded(t - timedelta(days=100), 5, {"a": Seen(t - timedelta(days=200), t, 5)})
    >>> h = summarize([Sweep(t, ("a",))], t, days=1, folded=f)
    >>> h.sweeps, h.seen["a"].sweeps, h.seen["a"].first == t - timedelta(days=200)
    (6, 6, True)
    >>> shards = [Sweep(t, (i,), Shard(n, 3)) for n, i in enumerate("abc", 1)]
    >>> summarize(shards, t, days=1).sweeps
    1
    """
    ordered = sorted(sweeps, key=lambda s: s.at)
    seen: dict[str, Seen] = dict(folded.seen) if folded else {}
    by_day: dict[date, set[str]] = {}
    for s in ordered:
        by_day.setdefault(s.at.date(), set()).update(s.ids)
    count = round((folded.sweeps if folded else 0) + _tally(seen, ordered))
    first_day = now.date() - timedelta(days=days - 1)
    per_day = tuple(
        (d, len(by_day.get(d, ())))
        for d in (first_day + timedelta(days=n) for n in range(days))
    )
    return History(seen, count, per_day)

