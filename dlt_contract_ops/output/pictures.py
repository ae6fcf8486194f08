"""Which pictures the report draws, from what the report gathered (`engine.report.Report`):
per table, each declared column's coverage; per distribution metric, its history and band;
per rename, the handoff; and the findings-per-day timeline. The shapes are `output.charts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dlt_contract_ops.core.distribution import DISTINCT_TOLERANCE, DistributionRule, window
from dlt_contract_ops.core.timeaxis import load_id_epoch
from dlt_contract_ops.output.charts import (
    DEFAULT_LOADS,
    Chart,
    Tick,
    band_of,
    coverage_chart,
    handoff_chart,
    metric_chart,
    timeline_chart,
)
from dlt_contract_ops.output.wording import axis_times, day, metric_words

if TYPE_CHECKING:
    from dlt_contract_ops.core.history import History
    from dlt_contract_ops.core.load_profile import LoadProfile
    from dlt_contract_ops.engine.report import Frame, Handoff, TableLoads
    from dlt_contract_ops.model.findings import DriftFinding


def time_ticks(times: Sequence[float]) -> list[Tick]:
    """The first and the last of `times` (epoch seconds), labelled for a chart's time axis.

    >>> time_ticks([0.0, 1800.0, 3600.0])
    [(0.0, '00:00'), (3600.0, '01:00')]
    """
    ends = sorted(set(times[:1]) | set(times[-1:]))
    return list(zip(ends, axis_times(ends), strict=True))


@dataclass(frozen=True)
class ColumnPicture:
    """One small multiple: a declared column's coverage, flagged when a finding names it."""

    column: str
    chart: Chart
    drifted: bool


def coverage_pictures(
    loads: TableLoads, frame: Frame | None, drifted: set[str], *, last: int = DEFAULT_LOADS
) -> list[ColumnPicture]:
    """Every declared column of a table, drifted ones first, each over its last loads: the
    same loads and scale for each, so their axes are alike (the page draws them once)."""
    history = loads.loads[-last:]
    xticks = time_ticks([p.load_time for p in history])
    out = []
    for column in sorted(loads.columns, key=lambda c: (c not in drifted, c)):
        points = [(p.load_time, None if (r := p.null_rate(column)) is None else 1.0 - r)
                  for p in history]
        chart = coverage_chart(
            column, points,
            boundary=frame.recent_start if frame else None,
            baseline_threshold=frame.baseline_threshold if frame else 0.2,
            recent_threshold=frame.recent_threshold if frame else 0.01,
            xticks=xticks,
        )
        out.append(ColumnPicture(column, chart, column in drifted))
    return out


def _metric_value(p: LoadProfile, metric: Mapping[str, Any]) -> float | None:
    column = str(metric.get("column"))
    kind = metric.get("metric")
    if kind == "null_rate":
        return p.null_rate(column)
    if kind == "distinct_count":
        c = p.columns.get(column)
        return None if c is None or c.distinct is None else float(c.distinct)
    shares = p.shares(column)
    if shares is None:
        return None
    return shares.get(str(metric.get("category")), 0.0)


def metric_picture(
    metric: Mapping[str, Any], loads: TableLoads, rule: DistributionRule, *,
    last: int = DEFAULT_LOADS,
) -> Chart:
    """The metric per load over the last loads, the band around its baseline's median
    (the rule's tolerance: `threshold` robust sigmas, at least `min_change`; for distinct
    counts at least `DISTINCT_TOLERANCE` of the median), the newest load marked."""
    history = list(loads.loads)
    values = [(p.load_time, _metric_value(p, metric)) for p in history[-last:]]
    span = window(history, rule)
    baseline = [v for p in (span.baseline if span else ())
                if (v := _metric_value(p, metric)) is not None]
    percent = metric.get("metric") != "distinct_count"
    if percent:
        band = band_of(baseline, rule.threshold, rule.min_change)
    else:
        centre = sorted(baseline)[len(baseline) // 2] if baseline else 0.0
        band = band_of(baseline, rule.threshold, DISTINCT_TOLERANCE * max(centre, 1.0))
    category = metric.get("category")
    title = f"{metric.get('column')}: {metric_words(metric.get('metric'))}" + (
        f" “{category}”" if category is not None else "")
    return metric_chart(title, values, band, percent=percent,
                        xticks=time_ticks([t for t, _ in values]))


def handoff_pictures(
    finding: DriftFinding, handoffs: Sequence[Handoff], *, last: int = DEFAULT_LOADS
) -> list[Chart]:
    """A rename's two columns' coverage per load, from the report's handoff query."""
    out = []
    for h in handoffs:
        if (h.old, h.new) != (finding.renamed_from, finding.renamed_to):
            continue
        points = [(load_id_epoch(load) or 0.0, o / rows if rows else None,
                   n / rows if rows else None) for load, rows, o, n in h.loads[-last:]]
        out.append(handoff_chart(h.old, h.new, points,
                                 xticks=time_ticks([t for t, _, _ in points])))
    return out


def timeline_picture(history: History) -> Chart | None:
    """Findings per day, or None when no sweep was ever recorded."""
    if not history.sweeps:
        return None
    return timeline_chart([(day(d, year=False), day(d), n) for d, n in history.per_day])
