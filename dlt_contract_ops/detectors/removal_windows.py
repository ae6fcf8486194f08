"""Removal's windows summed from load profiles (pure): whole loads on the `_dlt_load_id`
axis, loads by their profiled range on a time column of the table's own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from dlt_contract_ops.core.load_profile import LoadProfile
from dlt_contract_ops.core.removal import WindowCounts
from dlt_contract_ops.detectors.young import profiled_moment


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
    history: Sequence[LoadProfile], columns: Sequence[str], recent: str, baseline: str
) -> tuple[WindowCounts, list[str]] | None:
    """Windows on `_dlt_load_id`, summed from whole loads (a load sits in one window: the
    comparison is the coverage query's, on the epoch text). None when a load in the windows
    was profiled without one of `columns`.

    >>> from dlt_contract_ops.core.load_profile import ColumnProfile as C
    >>> old = LoadProfile("1700000000.1", 10, {"a": C("a", 10)})
    >>> new = LoadProfile("1700090000.1", 5, {"a": C("a", 0)})
    >>> by_load_id([old, new], ["a"], "1700050000.0000000", "1600000000.0000000")[0]
    WindowCounts(baseline_rows=10, recent_rows=5, baseline_non_null={'a': 10}, \
recent_non_null={'a': 0})
    """
    recent_counts: dict[str, int] = {}
    base_counts: dict[str, int] = {}
    for load in history:
        if load.load_id < baseline:
            continue
        if any(c not in load.columns for c in columns):
            return None
        _add(recent_counts if load.load_id >= recent else base_counts, load, columns)
    return _counts(recent_counts, base_counts, columns), []


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
