"""Removal drift: declared columns whose non-NULL coverage collapsed.

Pure: takes the counts one aggregate query per table returns and decides which columns went
dark. A window with no rows yields no ratio and never flags: an idle resource looks exactly
like a dropped field, and guessing would alert on every quiet weekend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

DEFAULT_RECENT_WINDOW = timedelta(hours=6)
DEFAULT_BASELINE_WINDOW = timedelta(days=7)
DEFAULT_BASELINE_THRESHOLD = 0.20
DEFAULT_RECENT_THRESHOLD = 0.01


@dataclass(frozen=True)
class WindowCounts:
    """Rows per window and non-NULL values per column per window, for one table."""

    baseline_rows: int
    recent_rows: int
    baseline_non_null: Mapping[str, int]
    recent_non_null: Mapping[str, int]

    def plus(self, other: WindowCounts) -> WindowCounts:
        """Both counts added, window by window and column by column.

        >>> a = WindowCounts(2, 1, {"x": 2}, {"x": 0})
        >>> a.plus(a)
        WindowCounts(baseline_rows=4, recent_rows=2, baseline_non_null={'x': 4}, \
recent_non_null={'x': 0})
        """
        def add(x: Mapping[str, int], y: Mapping[str, int]) -> dict[str, int]:
            return {k: x.get(k, 0) + y.get(k, 0) for k in {**x, **y}}

        return WindowCounts(
            self.baseline_rows + other.baseline_rows,
            self.recent_rows + other.recent_rows,
            add(self.baseline_non_null, other.baseline_non_null),
            add(self.recent_non_null, other.recent_non_null),
        )


@dataclass(frozen=True)
class DarkColumn:
    name: str
    baseline: float
    recent: float


def ratio(non_null: int, rows: int) -> float | None:
    return None if rows <= 0 else non_null / rows


def detect_dark_columns(
    counts: WindowCounts,
    *,
    baseline_threshold: float = DEFAULT_BASELINE_THRESHOLD,
    recent_threshold: float = DEFAULT_RECENT_THRESHOLD,
) -> list[DarkColumn]:
    """Columns whose baseline coverage exceeds `baseline_threshold` and whose recent
    coverage is below `recent_threshold`, sorted by name.

    >>> c = WindowCounts(10, 5, {"a": 8, "b": 1}, {"a": 0, "b": 0})
    >>> [d.name for d in detect_dark_columns(c)]
    ['a']
    >>> detect_dark_columns(WindowCounts(10, 0, {"a": 8}, {"a": 0}))  # idle: no ratio
    []
    """
    dark: list[DarkColumn] = []
    for name in sorted(counts.baseline_non_null):
        base = ratio(counts.baseline_non_null[name], counts.baseline_rows)
        recent = ratio(counts.recent_non_null.get(name, 0), counts.recent_rows)
        if base is None or recent is None:
            continue
        if base > baseline_threshold and recent < recent_threshold:
            dark.append(DarkColumn(name, base, recent))
    return dark


@dataclass(frozen=True)
class LoadCount:
    """One load's rows and one column's non-NULL values in it (a load id is dlt's
    `_dlt_load_id`, epoch seconds as text)."""

    load_id: str
    rows: int
    non_null: int


def went_dark(loads: Sequence[LoadCount], recent_threshold: float) -> str | None:
    """The load where a column went dark: the first of the newest run of loads in which its
    coverage is below `recent_threshold`; None when the newest load with rows still carries
    values. Stable across runs (unlike "the start of the recent window"), and the same whether
    the loads' counts came from the load profiles or a coverage query.

    >>> L = LoadCount
    >>> went_dark([L("1", 10, 10), L("2", 10, 0), L("3", 0, 0), L("4", 5, 0)], 0.01)
    '2'
    >>> went_dark([L("1", 10, 0), L("2", 10, 9)], 0.01) is None
    True
    """
    start: str | None = None
    for load in sorted(loads, key=lambda x: x.load_id, reverse=True):
        if load.rows <= 0:
            continue  # an empty load says nothing either way
        if carries(load, recent_threshold):
            break
        start = load.load_id
    return start


def carries(load: LoadCount, recent_threshold: float) -> bool:
    """Whether the column still carries values in `load`: it has rows and its coverage
    is at least `recent_threshold` (where `went_dark`'s walk stops).

    >>> carries(LoadCount("1", 10, 1), 0.01), carries(LoadCount("1", 0, 0), 0.01)
    (True, False)
    """
    return load.rows > 0 and load.non_null / load.rows >= recent_threshold
