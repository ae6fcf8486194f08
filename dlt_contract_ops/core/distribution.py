"""The distribution rule: the newest load of a table against a robust baseline of earlier ones.

Semantic drift keeps a column's name, type and nullability; what moves is its distribution.
So the rule looks at the CHANGE of a per-load metric, never at its level: a `status` column
whose default bucket goes from 0% to 4% of rows is drift, a column that was always 4% NULL is
not. Per column and load it reads the NULL rate, the approximate distinct count and, for a
categorical column, each category's share of the non-NULL values.

The baseline is up to `baseline_loads` loads before the newest one, no older than
`baseline_window` before it. Its centre is the median and its spread the median absolute
deviation (scaled to a normal sigma), so one odd load in the baseline moves neither. A metric
shifts when `|current - median| > max(threshold * sigma, min_change)`: the floor keeps a
perfectly steady baseline (sigma 0) from alerting on a hair's change, and the sampling error of
a share in a small load counts as spread too. Distinct counts are compared on a log scale and
must move by more than `DISTINCT_TOLERANCE` (approximate counts err by a few percent), both as a
count and relative to the load's non-NULL values (a load half the size has half the ids).

A load of fewer than `min_rows` rows is not judged at all: in a 12-row load one row moves a
share by 8 points, so its shares and rates swing on every load whatever the baseline says.

Pure: no I/O; `compare(history, rule)` is the whole decision.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from statistics import median
from typing import Any, Literal

from dlt_contract_ops.core.load_profile import LoadProfile

DEFAULT_BASELINE_LOADS = 30
DEFAULT_BASELINE_WINDOW = timedelta(days=14)
DEFAULT_MIN_BASELINE_LOADS = 5
DEFAULT_MAX_CATEGORIES = 20
#: the fewest rows a load must have to be judged (a smaller newest load: a note)
DEFAULT_MIN_ROWS = 100
#: how many robust sigmas a metric must move
DEFAULT_THRESHOLD = 4.0
#: the least change of a rate or share that may alert (2 percentage points)
DEFAULT_MIN_CHANGE = 0.02
#: the least relative change of a distinct count that may alert (approximate counts)
DISTINCT_TOLERANCE = 0.5
#: MAD to a normal distribution's sigma
_MAD_SIGMA = 1.4826

MetricName = Literal["null_rate", "distinct_count", "category_share", "new_category"]
_ORDER = {"null_rate": 0, "distinct_count": 1, "category_share": 2, "new_category": 3}


@dataclass(frozen=True)
class DistributionRule:
    """`[contract_ops.distribution]`: the baseline and how far a metric must move."""

    baseline_loads: int = DEFAULT_BASELINE_LOADS
    baseline_window: timedelta = DEFAULT_BASELINE_WINDOW
    min_baseline_loads: int = DEFAULT_MIN_BASELINE_LOADS
    max_categories: int = DEFAULT_MAX_CATEGORIES
    threshold: float = DEFAULT_THRESHOLD
    min_change: float = DEFAULT_MIN_CHANGE
    min_rows: int = DEFAULT_MIN_ROWS


@dataclass(frozen=True)
class Metric:
    """One shifted metric of one column: baseline (median), current value and the change."""

    column: str
    metric: MetricName
    baseline: float
    current: float
    category: str | None = None

    @property
    def change(self) -> float:
        return self.current - self.baseline

    def as_dict(self) -> dict[str, Any]:
        """The finding's `metrics` entry.

        >>> Metric("status", "category_share", 0.0, 0.04, "other").as_dict()["change"]
        0.04
        """
        return {
            "column": self.column,
            "metric": self.metric,
            "category": self.category,
            "baseline": round(self.baseline, 6),
            "current": round(self.current, 6),
            "change": round(self.change, 6),
        }


@dataclass(frozen=True)
class Window:
    """The newest load and the baseline it is compared with (oldest first)."""

    current: LoadProfile
    baseline: tuple[LoadProfile, ...] = field(default_factory=tuple)


def window(history: Sequence[LoadProfile], rule: DistributionRule) -> Window | None:
    """The newest load and its baseline: up to `baseline_loads` earlier loads within
    `baseline_window` of it; None for an empty history."""
    if not history:
        return None
    ordered = sorted(history, key=lambda p: p.load_id)
    current = ordered[-1]
    start = current.load_time - rule.baseline_window.total_seconds()
    earlier = [p for p in ordered[:-1] if p.load_time >= start]
    return Window(current, tuple(earlier[-rule.baseline_loads:] if rule.baseline_loads else ()))


def too_small(current: LoadProfile, rule: DistributionRule) -> bool:
    """Whether `current` has too few rows (`min_rows`) for its distribution to be judged.

    >>> too_small(LoadProfile("1", 12, {}), DistributionRule()), DistributionRule().min_rows
    (True, 100)
    """
    return current.rows < rule.min_rows


def shifted(
    baseline: Sequence[float], current: float, threshold: float, floor: float,
    noise: float = 0.0,
) -> bool:
    """Whether `current` is off the baseline's median by more than `threshold` robust sigmas
    (MAD-scaled, at least `noise`) and by more than `floor`.

    >>> shifted([0.0] * 10, 0.04, 4.0, 0.02)
    True
    >>> shifted([0.30, 0.32, 0.28, 0.31, 0.29], 0.33, 4.0, 0.02)
    False
    """
    centre = median(baseline)
    sigma = max(_MAD_SIGMA * median(abs(x - centre) for x in baseline), noise)
    return abs(current - centre) > max(threshold * sigma, floor)


def _share_noise(p: float, n: int) -> float:
    """The sampling error of a share `p` measured on `n` values."""
    return math.sqrt(max(p * (1.0 - p), 0.0) / n) if n > 0 else 0.0


def categorical(
    column: str, baseline: Sequence[LoadProfile], rule: DistributionRule,
    declared: tuple[str, ...] | None,
) -> set[str] | None:
    """The known categories of a categorical column (declared ones and those the baseline
    saw), or None when the column is not categorical: the model declares no code set and the
    baseline does not hold every value of each load, or holds more than `max_categories`."""
    seen: set[str] = set(declared or ())
    for p in baseline:
        c = p.columns[column]
        if c.categories is None or not c.complete:
            if declared is None:
                return None
            continue
        seen.update(c.categories)
    if declared is None and len(seen) > rule.max_categories:
        return None
    return seen


def compare_column(
    column: str, current: LoadProfile, baseline: Sequence[LoadProfile],
    rule: DistributionRule, declared: tuple[str, ...] | None = None,
) -> list[Metric]:
    """The shifted metrics of one column (its baseline: loads that profiled it)."""
    out: list[Metric] = []
    cur = current.columns[column]
    rates = [r for p in baseline if (r := p.null_rate(column)) is not None]
    now_rate = current.null_rate(column)
    if now_rate is not None and rates:
        noise = _share_noise(median(rates), current.rows)
        if shifted(rates, now_rate, rule.threshold, rule.min_change, noise):
            out.append(Metric(column, "null_rate", median(rates), now_rate))
    counts = [(c.distinct, c.non_null) for p in baseline
              if (c := p.columns[column]).distinct is not None]
    if cur.distinct is not None and cur.non_null and len(counts) == len(baseline):
        floor = math.log1p(DISTINCT_TOLERANCE)
        logs = [math.log1p(d or 0) for d, _ in counts]
        ratios = [math.log((d or 0) / n) for d, n in counts if n and d]
        now_log = math.log1p(cur.distinct)
        now_ratio = math.log(cur.distinct / cur.non_null) if cur.distinct else -math.inf
        if (
            len(ratios) == len(counts)
            and shifted(logs, now_log, rule.threshold, floor)
            and shifted(ratios, now_ratio, rule.threshold, floor)
        ):
            out.append(Metric(column, "distinct_count", median(d or 0 for d, _ in counts),
                              float(cur.distinct)))
    known = categorical(column, baseline, rule, declared)
    shares_now = current.shares(column)
    if known is None or shares_now is None:
        return out
    for value in sorted(known):
        history = [s.get(value, 0.0) for p in baseline
                   if (s := p.shares(column)) is not None and (p.columns[column].complete
                                                              or value in s)]
        if not history:
            continue
        now = shares_now.get(value, 0.0)
        if value not in shares_now and not cur.complete:
            continue  # not among the load's most frequent values: its share is unknown
        noise = _share_noise(median(history), cur.non_null)
        if shifted(history, now, rule.threshold, rule.min_change, noise):
            out.append(Metric(column, "category_share", median(history), now, value))
    for value in sorted(set(shares_now) - known):
        out.append(Metric(column, "new_category", 0.0, shares_now[value], value))
    return out


def compare(
    history: Sequence[LoadProfile], rule: DistributionRule,
    declared: Mapping[str, tuple[str, ...]] | None = None,
) -> list[Metric]:
    """Every shifted metric of the newest load of `history` (one table's loads), in column
    order; empty while a column has fewer than `min_baseline_loads` baseline loads (a column
    the model gained later is compared once it has them), and for a newest load of fewer
    than `min_rows` rows (`too_small`). `declared` maps a column to its model's code set
    (`Literal`/`Enum`): such a column is categorical whatever its count."""
    w = window(history, rule)
    if w is None or too_small(w.current, rule):
        return []
    out: list[Metric] = []
    for column in sorted(w.current.columns):
        base = [p for p in w.baseline if column in p.columns]
        if len(base) < max(rule.min_baseline_loads, 1):
            continue
        out += compare_column(column, w.current, base, rule, (declared or {}).get(column))
    return sorted(out, key=lambda m: (m.column, _ORDER[m.metric], m.category or ""))
