"""The report's pictures as data (`output.charts`, `output.pictures`) and the history behind
them (`core.history`): pure, as case tables."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from dlt_contract_ops.core.distribution import DistributionRule
from dlt_contract_ops.core.history import Sweep, summarize
from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile
from dlt_contract_ops.engine.report import Frame, Report, TableLoads
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.output.charts import (
    Chart,
    Label,
    band_of,
    coverage_chart,
    handoff_chart,
    metric_chart,
    timeline_chart,
)
from dlt_contract_ops.output.html import to_html
from dlt_contract_ops.output.pictures import coverage_pictures, metric_picture, time_ticks


def _ys(d: str) -> list[int]:
    """The y of every point of a path ("M4 4L9 5 14 6")."""
    numbers = d.replace("M", " ").replace("L", " ").split()
    return [int(v) for v in numbers[1::2]]


@pytest.mark.parametrize(
    ("shares", "runs", "dots"),
    [
        ([1.0, 1.0, 0.0], 1, 0),
        ([1.0, None, 0.5, 0.0], 1, 1),  # a gap splits the series; the lone point is a dot
        ([None, None], 0, 0),
    ],
)
def test_coverage_chart_series_breaks_at_gaps(shares: list[float | None], runs: int,
                                              dots: int) -> None:
    c = coverage_chart("c", [(float(i), v) for i, v in enumerate(shares)], boundary=None,
                       baseline_threshold=0.2, recent_threshold=0.01)
    series = [line for line in c.lines if line.css == "series"]
    assert sum(line.d.count("M") for line in series) == runs
    assert len([d for d in c.dots if d.css == "series"]) == dots


def test_coverage_chart_draws_thresholds_and_the_window_boundary() -> None:
    c = coverage_chart("c", [(0.0, 1.0), (100.0, 0.0)], boundary=50.0,
                       baseline_threshold=0.5, recent_threshold=0.0, width=108, height=44)
    [rules] = [line.d for line in c.lines if line.css == "threshold"]
    # the plot is x 30..102 (the y axis's values left of it), y 5..31 (the x axis's under it)
    assert rules == "M30 18H102M30 31H102"  # 50% halfway up, 0% on the floor
    [boundary] = [line.d for line in c.lines if line.css == "boundary"]
    assert boundary == "M66 5V31"
    [series] = [line.d for line in c.lines if line.css == "series"]
    assert _ys(series) == [5, 31]
    # a boundary outside the loads shown is not drawn
    outside = coverage_chart("c", [(0.0, 1.0), (10.0, 1.0)], boundary=50.0,
                             baseline_threshold=0.5, recent_threshold=0.0)
    assert not [line for line in outside.lines if line.css == "boundary"]


@pytest.mark.parametrize(
    ("baseline", "threshold", "floor", "band"),
    [
        ([0.0] * 5, 4.0, 0.02, (-0.02, 0.02)),
        ([0.1, 0.2, 0.3], 1.0, 0.0, (0.2 - 0.14826, 0.2 + 0.14826)),
        ([], 4.0, 0.02, (0.0, 0.0)),
    ],
)
def test_band_is_the_median_plus_minus_the_rules_tolerance(
    baseline: list[float], threshold: float, floor: float, band: tuple[float, float]
) -> None:
    assert band_of(baseline, threshold, floor) == pytest.approx(band)


def _loads(shares_other: list[float]) -> TableLoads:
    loads = []
    for i, other in enumerate(shares_other):
        n = 100
        cats = {"open": n - round(other * n), "other": round(other * n)}
        loads.append(LoadProfile(f"{1_700_000_000 + i * 86400}", n,
                                 {"status": ColumnProfile("status", n, 2, categories=cats)}))
    return TableLoads(("status",), tuple(loads))


def test_metric_picture_marks_the_newest_load_outside_its_band() -> None:
    metric = {"column": "status", "metric": "category_share", "category": "other",
              "baseline": 0.0, "current": 0.1, "change": 0.1}
    chart = metric_picture(metric, _loads([0.0] * 7 + [0.1]), DistributionRule())
    [newest] = [d for d in chart.dots if d.css == "newest"]
    [band] = [b for b in chart.boxes if b.css == "band"]
    assert float(newest.y) < float(band.y)  # above the band's top edge: the shift is visible
    assert "newest 10.0%" in [label.text for label in chart.labels]
    assert "status: share of a category “other”" in [label.text for label in chart.labels]


def test_coverage_pictures_put_drifted_columns_first() -> None:
    loads = TableLoads(("a", "b", "z"), (LoadProfile("1", 10, {
        c: ColumnProfile(c, 10) for c in ("a", "b", "z")}),))
    frame = Frame(0.0, 0.0, 0.2, 0.01)
    shown = coverage_pictures(loads, frame, {"z"})
    assert [(p.column, p.drifted) for p in shown] == [("z", True), ("a", False), ("b", False)]


def test_a_tables_small_multiples_have_the_same_axes() -> None:
    # the page draws them once per table and each chart `use`s them: they must be alike
    loads = TableLoads(("a", "b", "z"), tuple(LoadProfile(str(1_700_000_000 + i * 3600), 10, {
        c: ColumnProfile(c, 10 - i * (c == "z")) for c in ("a", "b", "z")}) for i in range(5)))
    shown = coverage_pictures(loads, Frame(1_700_003_600.0, 0.0, 0.2, 0.01), {"z"})
    axes = {(tuple(line.d for line in p.chart.lines if line.css == "axis"),
             tuple(t for t in p.chart.labels if t.css == "tick")) for p in shown}
    assert len(axes) == 1
    [(_, ticks)] = axes
    assert [t.text for t in ticks] == ["0%", "100%", "14 Nov 22:13", "15 Nov 02:13"]
    assert len({tuple(line.d for line in p.chart.lines if line.css == "series")
                for p in shown}) == 2  # what differs is the data


def test_history_counts_first_last_and_sweeps_and_days() -> None:
    now = datetime(2026, 3, 10, 12, tzinfo=timezone.utc)
    sweeps = [Sweep(now - timedelta(days=2), ("a",)), Sweep(now - timedelta(hours=1), ("a", "b")),
              Sweep(now, ("a", "a")), Sweep(now - timedelta(days=40), ("old",))]
    h = summarize(sweeps, now, days=3)
    assert h.sweeps == 4
    assert (h.seen["a"].first, h.seen["a"].last, h.seen["a"].sweeps) == (
        now - timedelta(days=2), now, 3)
    assert h.seen["old"].sweeps == 1  # older than the timeline, still a first sighting
    assert h.per_day == ((date(2026, 3, 8), 1), (date(2026, 3, 9), 0), (date(2026, 3, 10), 2))


def test_timeline_bars_scale_to_the_busiest_day() -> None:
    chart = timeline_chart([("1", "day 1", 0), ("2", "day 2", 2), ("3", "day 3", 4)],
                           width=68, height=80)
    bars = [b for b in chart.boxes if b.css == "bar"]
    assert [float(b.h) for b in bars] == [0.0, 30.0, 60.0]  # the plot is 60 pixels high
    assert [b.title for b in bars][-1] == "day 3: 4 finding(s)"


def _tick(chart: Chart, text: str) -> Label:
    [label] = [t for t in chart.labels if t.css == "tick" and t.text == text]
    return label


T0 = datetime(2026, 12, 1, 6, 0, tzinfo=timezone.utc).timestamp()
HOUR = 3600.0


@pytest.mark.parametrize(("chart", "ticks", "legend"), [
    (coverage_chart("c", [(T0, 1.0), (T0 + 5 * HOUR, 0.0)], boundary=T0 + 2 * HOUR,
                    baseline_threshold=0.2, recent_threshold=0.01,
                    xticks=time_ticks([T0, T0 + 5 * HOUR])),
     ["0%", "100%", "06:00", "11:00"],
     ["non-NULL share per load", "baseline / recent threshold (20% / 1%)",
      "recent window starts"]),
    (metric_chart("status: share of a category", [(T0, 0.0), (T0 + 3 * 86400, 0.1)],
                  (0.0, 0.02), xticks=time_ticks([T0, T0 + 3 * 86400])),
     ["0.0%", "10.0%", "1 Dec", "4 Dec"],
     ["value per load", "baseline band (median ± tolerance)", "newest load"]),
    (metric_chart("id: distinct values", [(T0, 90.0), (T0 + 30 * HOUR, 120.0)],
                  (95.0, 105.0), percent=False, xticks=time_ticks([T0, T0 + 30 * HOUR])),
     ["90", "120", "1 Dec 06:00", "2 Dec 12:00"],
     ["value per load", "baseline band (median ± tolerance)", "newest load"]),
    (handoff_chart("order_date", "sale_date", [(T0, 1.0, 0.0), (T0 + HOUR, 0.0, 1.0)],
                   xticks=time_ticks([T0, T0 + HOUR])),
     ["0%", "100%", "06:00", "07:00"],
     ["order_date (old): non-NULL share per load", "sale_date (new): non-NULL share per load"]),
    (timeline_chart([(f"{d} Dec", f"{d} Dec 2026", d % 3) for d in range(1, 8)]),
     ["0", "2", "1 Dec", "4 Dec", "7 Dec"],
     ["findings seen that day (each finding once)"]),
], ids=["coverage", "metric", "distinct", "handoff", "timeline"])
def test_every_chart_has_its_axis_values_and_a_legend(chart: Chart, ticks: list[str],
                                                      legend: list[str]) -> None:
    assert chart.ticks == ticks
    assert [k.text for k in chart.legend] == legend
    assert {k.css for k in chart.legend} <= {
        *(line.css for line in chart.lines), *(b.css for b in chart.boxes),
        *(d.css for d in chart.dots)}  # each key is drawn as the chart draws it
    [axis] = [line for line in chart.lines if line.css == "axis"]
    # every value inside the picture: the y axis's left of the axis line, the x axis's under
    left = float(axis.d[1:].split()[0])
    for label in (t for t in chart.labels if t.css == "tick"):
        assert 0 <= float(label.x) <= chart.width
        assert 0 < float(label.y) <= chart.height
    ys, xs = ticks[:2], ticks[2:]
    assert all(float(_tick(chart, t).x) < left and _tick(chart, t).anchor == "end" for t in ys)
    assert float(_tick(chart, ys[0]).y) > float(_tick(chart, ys[1]).y)  # low under high
    floor = max(float(_tick(chart, t).y) for t in ys)
    assert all(float(_tick(chart, t).y) > floor for t in xs)
    assert [float(_tick(chart, t).x) for t in xs] == sorted(float(_tick(chart, t).x) for t in xs)


def test_a_y_value_sits_at_its_height() -> None:
    c = coverage_chart("c", [(0.0, 1.0), (10.0, 0.0)], boundary=None, baseline_threshold=0.5,
                       recent_threshold=0.0)
    [series] = [line.d for line in c.lines if line.css == "series"]
    top, bottom = _ys(series)  # 100% and 0%
    assert float(_tick(c, "100%").y) - 3 == top
    assert float(_tick(c, "0%").y) - 3 == bottom


def test_a_third_party_findings_details_render_without_its_detector() -> None:
    # a detector's plugin no longer installed (or without `lines`): its own keys still show
    f = DriftFinding(drift_type="freshness_gone", source="s", resource="r", table="t",
                     columns=["c"], details={"age_hours": 49, "note": "<late>"})
    page = to_html([ReconcileResult(source="s", detector="freshness_gone", findings=[f])],
                   report=Report([]))
    assert "<td>age_hours</td><td><code>49</code></td>" in page
    assert "<code>&lt;late&gt;</code>" in page
