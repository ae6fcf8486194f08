"""Removal's windows summed from load profiles (pure): whole loads on the `_dlt_load_id`
axis, loads by their profiled range on a time column of the table's own.

On `_dlt_load_id` a repeat sweep reads the stored loads before the recent window thin
(`profiles.sweep`): the store sums their columns and hands over one row per column, and
removal adds those sums to the baseline window (`by_load_id`). Only a table with a column
gone dark wants their counts one by one (`went_dark`), and only where no load read whole
still carries the column: `per_load` says which loads to ask the store for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from dlt_contract_ops.core.load_profile import LoadProfile, SummedLoads
from dlt_contract_ops.core.removal import LoadCount, WindowCounts, carries
from dlt_contract_ops.detectors.young import profiled_moment

#: per load: its rows and the non-NULL values of each column
PerLoad = dict[str, tuple[int, dict[str, int]]]


def _add(counts: dict[str, int], load: LoadProfile, columns: Sequence[str]) -> None:
    counts[""] = counts.get("", 0) + load.rows
    for c in columns:
        counts[c] = counts.get(c, 0) + load.columns[c].non_null


def _counts(recent: dict[str, int], base: dict[str, int], columns: Sequence[str]
            ) -> WindowCounts:
    return WindowCounts(
        baseline_rows=base.get("", 0),
        recent_rows=recent.get("", 0),
        baseline_non_null={c: base.get(c, 0) for c in columns},
        recent_non_null={c: recent.get(c, 0) for c in columns},
    )


def by_load_id(
    history: Sequence[LoadProfile], columns: Sequence[str], recent: str, baseline: str,
    summed: SummedLoads | None = None,
) -> tuple[WindowCounts, list[str]] | None:
    """Windows on `_dlt_load_id`, summed from whole loads (a load sits in one window: the
    comparison is the coverage query's, on the epoch text), and from the store's sums of the
    loads read thin (`summed`). None when a load in the windows was profiled without one of
    `columns`, or when the thin loads in the windows are not exactly the summed ones, all in
    the baseline window (the windows moved past a stored load since the sweep read them).

    >>> from dlt_contract_ops.core.load_profile import ColumnProfile as C
    >>> old = LoadProfile("1700000000.1", 10, {"a": C("a", 10)})
    >>> new = LoadProfile("1700090000.1", 5, {"a": C("a", 0)})
    >>> by_load_id([old, new], ["a"], "1700050000.0000000", "1600000000.0000000")[0]
    WindowCounts(baseline_rows=10, recent_rows=5, baseline_non_null={'a': 10}, \
recent_non_null={'a': 0})
    >>> from dlt_contract_ops.core.load_profile import SummedLoads as S
    >>> thin = LoadProfile("1700000000.1", 10)  # its columns summed in the store
    >>> by_load_id([thin, new], ["a"], "1700050000.0000000", "1600000000.0000000",
    ...            S(frozenset({thin.load_id}), "1600000000.0000000", {"a": 10}, {"a": 1}))[0]
    WindowCounts(baseline_rows=10, recent_rows=5, baseline_non_null={'a': 10}, \
recent_non_null={'a': 0})
    """
    thin = summed.loads if summed is not None else frozenset()
    recent_counts: dict[str, int] = {}
    base_counts: dict[str, int] = {}
    thin_seen: set[str] = set()
    for load in history:
        if load.load_id < baseline:
            continue
        if load.load_id in thin:
            if load.load_id >= recent:
                return None
            thin_seen.add(load.load_id)
            base_counts[""] = base_counts.get("", 0) + load.rows
            continue
        if any(c not in load.columns for c in columns):
            return None
        _add(recent_counts if load.load_id >= recent else base_counts, load, columns)
    if summed is not None:
        if thin_seen != summed.summed or any(
                summed.profiled.get(c, 0) != len(thin_seen) for c in columns):
            return None
        for c in columns:
            base_counts[c] = base_counts.get(c, 0) + summed.non_null.get(c, 0)
    return _counts(recent_counts, base_counts, columns), []


def per_load(
    history: Sequence[LoadProfile], columns: Sequence[str], since: str,
    summed: SummedLoads | None, recent_threshold: float,
) -> tuple[PerLoad, list[str]]:
    """Per load from `since` (the baseline window's start), its rows and each of `columns`'
    non-NULL values: what `went_dark` walks, newest load first. A load read thin has no
    counts here; the second value lists those the store must give one by one, which is
    none unless some column is carried by no load read whole (only then does the walk reach
    them).

    >>> from dlt_contract_ops.core.load_profile import ColumnProfile as C, SummedLoads as S
    >>> old, new = LoadProfile("1", 10), LoadProfile("2", 5, {"a": C("a", 0)})
    >>> per_load([old, new], ["a"], "0", S(frozenset({"1"}), "0"), 0.01)
    ({'2': (5, {'a': 0})}, ['1'])
    >>> per_load([old, new], ["a"], "2", S(frozenset({"1"}), "0"), 0.01)
    ({'2': (5, {'a': 0})}, [])
    """
    thin = summed.loads if summed is not None else frozenset()
    whole: PerLoad = {}
    wanted: list[str] = []
    for load in history:
        if load.load_id < since:
            continue
        if load.load_id in thin:
            wanted.append(load.load_id)
            continue
        whole[load.load_id] = (load.rows, {c: load.columns[c].non_null for c in columns
                                           if c in load.columns})
    carried = all(any(carries(LoadCount(i, rows, counts.get(c, 0)), recent_threshold)
                      for i, (rows, counts) in whole.items()) for c in columns)
    return whole, [] if carried else wanted


def by_axis_range(
    history: Sequence[LoadProfile], columns: Sequence[str], axis: str,
    recent: datetime, baseline: datetime, fresh: Callable[[str], bool] | None = None,
) -> tuple[WindowCounts, list[str]] | None:
    """Windows on a time column of the table's own, summed from the loads whose whole range
    (the axis' profiled min and max, no NULL axis) falls on one side of each window start; the
    others are returned to be counted by the coverage query, and so is a load wholly in the
    recent window that the sweep did not read again (`fresh`: whether it did; its stored
    counts may be stale). None when a load was profiled without the axis, its range, or one
    of `columns`."""
    recent_counts: dict[str, int] = {}
    base_counts: dict[str, int] = {}
    straddling: list[str] = []
    for load in history:
        a = load.columns.get(axis)
        if a is None:
            return None
        if a.non_null == 0:
            continue  # every row has a NULL axis: in no window
        low, high = profiled_moment(a.min_value, False), profiled_moment(a.max_value, True)
        if low is None or high is None:
            return None  # a range it cannot read (not a time): the full coverage query
        (lo, lo_err), (hi, hi_err) = low, high
        if hi + hi_err < baseline:
            continue  # before both windows (its NULL-axis rows are in none either)
        if any(c not in load.columns for c in columns):
            return None
        whole = a.non_null == load.rows
        if whole and lo - lo_err >= recent and (fresh is None or fresh(load.load_id)):
            _add(recent_counts, load, columns)
        elif whole and lo - lo_err >= baseline and hi + hi_err < recent:
            _add(base_counts, load, columns)
        else:
            straddling.append(load.load_id)
    return _counts(recent_counts, base_counts, columns), straddling
