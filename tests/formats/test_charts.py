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
from dlt_contract_ops.output.charts import band_of, coverage_chart, timeline_chart
from dlt_contract_ops.output.html import to_html
from dlt_contract_ops.output.pictures import coverage_pictures, metric_picture


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
    assert rules == "M4 22H104M4 40H104"  # 50% halfway up, 0% on the floor
    [boundary] = [line.d for line in c.lines if line.css == "boundary"]
    assert boundary == "M54 0V44"
    [series] = [line.d for line in c.lines if line.css == "series"]
    assert _ys(series) == [4, 40]
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


def test_coverage_pictures_put_drifted_columns_first() -> None:
    loads = TableLoads(("a", "b", "z"), (LoadProfile("1", 10, {
        c: ColumnProfile(c, 10) for c in ("a", "b", "z")}),))
    frame = Frame(0.0, 0.0, 0.2, 0.01)
    shown = coverage_pictures(loads, frame, {"z"})
    assert [(p.column, p.drifted) for p in shown] == [("z", True), ("a", False), ("b", False)]


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
    chart = timeline_chart([("d1", 0), ("d2", 2), ("d3", 4)], width=68, height=80)
    bars = [b for b in chart.boxes if b.css == "bar"]
    assert [float(b.h) for b in bars] == [0.0, 29.0, 58.0]
    assert [b.title for b in bars][-1] == "d3: 4 finding(s)"


def test_a_third_party_findings_details_render_without_its_detector() -> None:
    # a detector's plugin no longer installed (or without `lines`): its own keys still show
    f = DriftFinding(drift_type="freshness_gone", source="s", resource="r", table="t",
                     columns=["c"], details={"age_hours": 49, "note": "<late>"})
    page = to_html([ReconcileResult(source="s", detector="freshness_gone", findings=[f])],
                   report=Report([]))
    assert "<td>age_hours</td><td><code>49</code></td>" in page
    assert "<code>&lt;late&gt;</code>" in page
