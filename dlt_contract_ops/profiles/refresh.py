"""What a repeat sweep reads again, and what the warehouse changed under the stored profiles.

dlt never adds rows to an earlier load, but rows change in place all the same: an `UPDATE` by
hand, a fix-up job that re-stamps rows onto another load id, a `merge` whose upserts move rows
of earlier loads to the new one. The table's row count shows only some of that. So a repeat
sweep reads the loads of the recent window again (removal's `recent_window` before now), in
the same one profile query per table that reads the new loads, and serves only the loads
before it from the store. A sweep for the distribution rule also reads the newest stored load
again, whatever its age: a daily pipeline's newest load is older than the window most of the
day, and it stays the rule's current load until a newer one brings rows (`profiles.sweep`
lists it where no newer load of the source came, and reads it after where the newer loads
brought the table none). So what removal's recent window and the distribution rule's
current load are summed from is always the warehouse's. A load in the baseline whose values
change in place with its row count kept is the one change the store does not see (reading it
again would read the baseline: the full scan `from_profiles = false` does that).

Pure: no I/O; `refresh(stored, fresh, covers)` is the whole merge.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from dlt_contract_ops.core.load_profile import LoadProfile


@dataclass(frozen=True)
class Reread:
    """The loads a profile query reads: `since` (load id >= `param`) or `after` (> `param`);
    with `ids`, only those of them (`_dlt_load_id IN (...)`, `profiles.loads`)."""

    bound: Literal["since", "after"]
    param: str
    ids: tuple[str, ...] | None = None

    def in_range(self, load_id: str) -> bool:
        return load_id >= self.param if self.bound == "since" else load_id > self.param

    def covers(self, load_id: str) -> bool:
        return self.in_range(load_id) and (self.ids is None or load_id in self.ids)

    def among(self, loads: Sequence[str]) -> Reread:
        """The same read limited to the ids of `loads` (sorted) within its range.

        >>> Reread("after", "2").among(["1", "2", "3", "4"])
        Reread(bound='after', param='2', ids=('3', '4'))
        """
        cut = bisect_left if self.bound == "since" else bisect_right
        return replace(self, ids=tuple(loads[cut(loads, self.param):]))


def reread(history: Sequence[LoadProfile], fresh_from: str, newest: bool = False) -> Reread:
    """A repeat sweep's loads: from `fresh_from` (the recent window's start as load id text) on,
    or, when the last stored load is older than that, after it; with `newest`, that last
    stored load too (the distribution rule's current load, whatever its age).

    >>> reread([LoadProfile("1700000000.1", 1)], "1600000000.0000000")
    Reread(bound='since', param='1600000000.0000000', ids=None)
    >>> reread([LoadProfile("1700000000.1", 1)], "1800000000.0000000")
    Reread(bound='after', param='1700000000.1', ids=None)
    >>> reread([LoadProfile("1700000000.1", 1)], "1800000000.0000000", newest=True)
    Reread(bound='since', param='1700000000.1', ids=None)
    """
    last = history[-1].load_id
    if fresh_from <= last:
        return Reread("since", fresh_from)
    return Reread("since", last) if newest else Reread("after", last)


def same_counts(stored: LoadProfile, fresh: LoadProfile) -> bool:
    """Whether `fresh` (a counts-only read of the load) finds what `stored` recorded: its
    rows, and per column its non-NULL count and any range it read (the time axis)."""
    if stored.rows != fresh.rows or set(stored.columns) != set(fresh.columns):
        return False
    for name, f in fresh.columns.items():
        s = stored.columns[name]
        if s.non_null != f.non_null:
            return False
        if f.min_value is not None and (s.min_value, s.max_value) != (f.min_value, f.max_value):
            return False
    return True


@dataclass(frozen=True)
class Refreshed:
    """The stored history with the loads read again: the history (oldest first), the loads
    to write, the stored ids found gone, and per stored load the rows it lost."""

    history: list[LoadProfile]
    changed: list[LoadProfile] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    shrunk: dict[str, int] = field(default_factory=dict)


def refresh(
    stored: Sequence[LoadProfile], fresh: Sequence[LoadProfile], covers: Reread | None
) -> Refreshed:
    """Merge the loads a sweep read (`fresh`) into the `stored` ones whose ids `covers` (None:
    every stored load). A counts-only read that finds what a detailed stored profile counted
    keeps the stored one (its distinct counts and categories); any other read load replaces
    it, without the columns the stored one lacked. A stored load the read covers but did not
    find is dropped; one that lost rows is `shrunk` (an upsert, a delete or a re-stamp moved
    them away).

    >>> old = [LoadProfile("1", 10), LoadProfile("2", 10), LoadProfile("3", 10)]
    >>> r = refresh(old, [LoadProfile("3", 4), LoadProfile("4", 5)], Reread("since", "2"))
    >>> [(p.load_id, p.rows) for p in r.history], r.dropped, r.shrunk
    ([('1', 10), ('3', 4), ('4', 5)], ['2'], {'2': 10, '3': 6})
    """
    def covered(load_id: str) -> bool:
        return covers is None or covers.covers(load_id)

    by_id = {p.load_id: p for p in stored if covered(p.load_id)}
    found = {p.load_id for p in fresh}
    history = [p for p in stored if not covered(p.load_id)]
    changed: list[LoadProfile] = []
    for p in fresh:
        old = by_id.get(p.load_id)
        if old is not None and set(p.columns) - set(old.columns):
            # a column the model gained after the load was profiled stays unprofiled there,
            # as in a sweep that does not read the load again (`profiles.compare` and removal
            # know a load without the column)
            p = replace(p, columns={k: v for k, v in p.columns.items() if k in old.columns})
        if old is not None and old.detailed and not p.detailed and same_counts(old, p):
            history.append(old)
            continue
        history.append(p)
        if old is None or old != p:
            changed.append(p)
    rows = {p.load_id: p.rows for p in fresh}
    shrunk = {load_id: p.rows - rows.get(load_id, 0) for load_id, p in by_id.items()}
    return Refreshed(
        sorted(history, key=lambda p: p.load_id),
        changed,
        sorted(set(by_id) - found),
        {k: v for k, v in sorted(shrunk.items()) if v > 0},
    )


def covered_rows(stored: Sequence[LoadProfile], covers: Reread) -> int:
    """The stored rows of the loads a read covers: less them, the table's row count must be
    the same as the last sweep's, else rows of loads before them changed."""
    return sum(p.rows for p in stored if covers.covers(p.load_id))
