"""The values a load profile is made of: one load of one table, and its columns.

Pure and frozen, below the profiles that make them: the store (`profiles/store.py`) reads
and writes them, `profiles/query.py` builds them from rows, the distribution rule
(`core/distribution.py`) and the detectors compare them. A load id is dlt's `_dlt_load_id`
(epoch seconds as text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from dlt_contract_ops.core.timeaxis import load_id_epoch


class ColumnProfile(NamedTuple):
    """One column in one load: non-NULL count, approximate distinct count, min/max (numbers
    and times, as text), and the value counts of a categorical column.

    Immutable, and a named tuple rather than a frozen dataclass: a first sweep of hourly
    loads makes one per stored (load, column), 288,000 at 50 tables, and a tuple is made
    several times faster (`ColumnProfile._replace` gives a changed copy).

    `categories` is None when the values were not collected (the column was not categorical
    in that load); when set it holds every value of the load (`complete`), or only the
    most frequent ones (`complete=False`: a value missing from it may still occur).
    """

    column: str
    non_null: int
    distinct: int | None = None
    min_value: str | None = None
    max_value: str | None = None
    categories: dict[str, int] | None = None
    complete: bool = True


@dataclass(frozen=True)
class LoadProfile:
    """One dlt load of one table: its row count and its columns' profiles.

    `detailed` False: only counts were read (rows, non-NULL values; a sweep for removal
    alone), no distinct counts, ranges or categories yet."""

    load_id: str
    rows: int
    columns: dict[str, ColumnProfile] = field(default_factory=dict)
    detailed: bool = True

    @property
    def load_time(self) -> float:
        """The load's start as epoch seconds (0.0 for an id that is not one)."""
        return load_id_epoch(self.load_id) or 0.0

    def null_rate(self, column: str) -> float | None:
        """NULLs over rows, in [0, 1]; None when the column was not profiled in this load."""
        c = self.columns.get(column)
        if c is None or self.rows <= 0:
            return None
        return max(0.0, min(1.0, 1.0 - c.non_null / self.rows))

    def shares(self, column: str) -> dict[str, float] | None:
        """Each collected category's share of the load's non-NULL values."""
        c = self.columns.get(column)
        if c is None or c.categories is None:
            return None
        total = c.non_null or sum(c.categories.values())
        if total <= 0:
            return {}
        return {v: n / total for v, n in c.categories.items()}


@dataclass(frozen=True)
class SummedLoads:
    """Stored loads of one table handed over without their columns (`ProfileStore.read`'s
    thin read): their ids (`loads`; each is in the history as a `LoadProfile` of its rows
    alone), and over those from `since` on, summed in the store, each column's non-NULL
    values and how many of them profiled it (fewer: a load lacks the column).

    >>> s = SummedLoads(frozenset({"1", "2", "3"}), "2", {"a": 7}, {"a": 2})
    >>> sorted(s.summed)
    ['2', '3']
    """

    loads: frozenset[str]
    since: str
    non_null: dict[str, int] = field(default_factory=dict)
    profiled: dict[str, int] = field(default_factory=dict)

    @property
    def summed(self) -> frozenset[str]:
        """The ids the sums cover."""
        return frozenset(i for i in self.loads if i >= self.since)
