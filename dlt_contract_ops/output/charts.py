"""The report's pictures as data: pure functions from numbers to shapes in pixels, which
`templates/chart.html.j2` draws as inline SVG (autoescaped; every label is data).

- `coverage_chart`: one declared column's non-NULL share per load, with the removal
  window's boundary (a vertical line) and the baseline/recent thresholds (dashed lines);
- `metric_chart`: a distribution metric per load, its baseline band (median ± the rule's
  tolerance) and the newest load marked;
- `handoff_chart`: a rename's old and new column's coverage on one axis;
- `timeline_chart`: findings seen per day.

Shapes carry formatted coordinates, so the template does no arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median

#: how many of a table's newest loads a chart shows
DEFAULT_LOADS = 30
#: a series of at most this many loads marks each load with a dot
POINTS_UP_TO = 12
_MAD_SIGMA = 1.4826  # as `core.distribution`: MAD to a normal sigma


@dataclass(frozen=True)
class Line:
    """An SVG path (`d`: "M4 5L9 4", "M4 33H146"): a series or a rule."""

    d: str
    css: str
    title: str = ""


@dataclass(frozen=True)
class Box:
    x: str
    y: str
    w: str
    h: str
    css: str
    title: str = ""


@dataclass(frozen=True)
class Dot:
    x: str
    y: str
    css: str
    title: str = ""


@dataclass(frozen=True)
class Label:
    x: str
    y: str
    text: str
    anchor: str = "start"


@dataclass(frozen=True)
class Chart:
    """One picture: its size, what a screen reader says, and its shapes (drawn in order:
    boxes, lines, dots, labels)."""

    width: int
    height: int
    label: str
    boxes: list[Box] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    dots: list[Dot] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)


def _f(value: float) -> str:
    """A coordinate: whole pixels are sharp enough at these sizes, and keep 6000 charts
    small."""
    return f"{value:.0f}"


@dataclass(frozen=True)
class _Scale:
    """Maps (x, y) data to pixels inside a padded plot area; y grows upwards."""

    x0: float
    x1: float
    y0: float
    y1: float
    width: int
    height: int
    pad: float = 4.0
    top: float = 4.0

    def x(self, value: float) -> float:
        span = self.x1 - self.x0
        at = 0.5 if span <= 0 else (value - self.x0) / span
        return self.pad + at * (self.width - 2 * self.pad)

    def y(self, value: float) -> float:
        span = self.y1 - self.y0
        at = 0.5 if span <= 0 else (value - self.y0) / span
        at = max(0.0, min(1.0, at))
        return self.height - self.pad - at * (self.height - self.pad - self.top)

    def runs(self, series: Sequence[tuple[float, float | None]]) -> list[list[tuple[str, str]]]:
        """Runs of consecutive known values as pixel pairs (None breaks a run)."""
        runs: list[list[tuple[str, str]]] = [[]]
        for x, y in series:
            if y is None:
                runs.append([])
            else:
                runs[-1].append((_f(self.x(x)), _f(self.y(y))))
        return [r for r in runs if r]


def _hline(s: _Scale, value: float) -> str:
    return f"M{_f(s.pad)} {_f(s.y(value))}H{_f(s.width - s.pad)}"


def _series(s: _Scale, values: Sequence[tuple[float, float | None]], css: str, title: str,
            chart: Chart) -> None:
    """One path through every run of known values; a lone point between gaps is a dot."""
    runs = s.runs(values)
    # after `L` further pairs are lines too: "M4 4L9 4 14 5"
    d = "".join(f"M{run[0][0]} {run[0][1]}L" + " ".join(f"{x} {y}" for x, y in run[1:])
                for run in runs if len(run) > 1)
    if d:
        chart.lines.append(Line(d, css, title))
    chart.dots.extend(Dot(x, y, css, title) for [(x, y)] in (r for r in runs if len(r) == 1))
    if len(values) <= POINTS_UP_TO:  # few loads: mark each, so a line is not read as a trend
        chart.dots.extend(Dot(x, y, f"point {css}") for run in runs if len(run) > 1
                          for x, y in run)


def coverage_chart(
    column: str, loads: Sequence[tuple[float, float | None]], *, boundary: float | None,
    baseline_threshold: float, recent_threshold: float, width: int = 150, height: int = 44,
) -> Chart:
    """`column`'s non-NULL share per load ((load time, share), oldest first).

    >>> c = coverage_chart("ip", [(0, 1.0), (10, 1.0), (20, 0.0)], boundary=15,
    ...                    baseline_threshold=0.2, recent_threshold=0.01)
    >>> [(l.css, l.d) for l in c.lines]  # doctest: +NORMALIZE_WHITESPACE
    [('threshold', 'M4 33H146M4 40H146'), ('boundary', 'M110 0V44'),
     ('series', 'M4 4L75 4 146 40')]
    """
    times = [t for t, _ in loads]
    s = _Scale(min(times, default=0.0), max(times, default=0.0), 0.0, 1.0, width, height)
    last = next((v for _, v in reversed(loads) if v is not None), None)
    label = (f"{column}: coverage, {len(loads)} load(s)"
             + ("" if last is None else f", newest {last:.0%}"))
    chart = Chart(width, height, label)
    # the frame is the svg's own CSS background: one rect fewer in each of thousands
    chart.lines.append(Line(_hline(s, baseline_threshold) + _hline(s, recent_threshold),
                            "threshold"))
    if boundary is not None and times and times[0] <= boundary <= times[-1]:
        chart.lines.append(Line(f"M{_f(s.x(boundary))} 0V{height}", "boundary"))
    _series(s, loads, "series", "", chart)
    return chart


def band_of(baseline: Sequence[float], threshold: float, floor: float) -> tuple[float, float]:
    """Median ± max(threshold robust sigmas, floor): where a metric does not alert.

    >>> band_of([0.0, 0.0, 0.0], 4.0, 0.02)
    (-0.02, 0.02)
    """
    if not baseline:
        return (0.0, 0.0)
    centre = median(baseline)
    sigma = _MAD_SIGMA * median(abs(x - centre) for x in baseline)
    spread = max(threshold * sigma, floor)
    return (centre - spread, centre + spread)


def metric_chart(
    title: str, values: Sequence[tuple[float, float | None]], band: tuple[float, float],
    *, percent: bool = True, width: int = 260, height: int = 70,
) -> Chart:
    """A metric per load (oldest first; the last one is the newest load, marked) and its
    baseline band."""
    known = [v for _, v in values if v is not None]
    low = min([*known, band[0]], default=0.0)
    high = max([*known, band[1]], default=1.0)
    if percent:
        low, high = max(0.0, min(low, 0.0)), min(1.0, max(high, low + 0.05))
    times = [t for t, _ in values]
    s = _Scale(min(times, default=0.0), max(times, default=0.0), low, high or 1.0,
               width, height, pad=6.0, top=14.0)

    def shown(v: float) -> str:
        return f"{v:.1%}" if percent else f"{v:g}"

    chart = Chart(width, height, f"{title}: band {shown(max(band[0], 0))} to "
                                 f"{shown(band[1])}, {len(values)} load(s)")
    chart.boxes.append(Box("0", "0", str(width), str(height), "frame"))
    top, bottom = s.y(band[1]), s.y(max(band[0], low))
    chart.boxes.append(Box(_f(s.pad), _f(top), _f(width - 2 * s.pad), _f(max(bottom - top, 1)),
                           "band", "baseline band (median ± tolerance)"))
    _series(s, values, "series", title, chart)
    newest = values[-1] if values else None
    if newest is not None and newest[1] is not None:
        chart.dots.append(Dot(_f(s.x(newest[0])), _f(s.y(newest[1])), "newest",
                              f"newest load: {shown(newest[1])}"))
        chart.labels.append(Label(_f(width - s.pad), "11", f"newest {shown(newest[1])}",
                                  "end"))
    chart.labels.append(Label(_f(s.pad), "11", title))
    return chart


def handoff_chart(
    old: str, new: str, loads: Sequence[tuple[float, float | None, float | None]],
    *, width: int = 260, height: int = 70,
) -> Chart:
    """Both columns' coverage per load ((time, old share, new share)) on one axis."""
    times = [t for t, _, _ in loads]
    s = _Scale(min(times, default=0.0), max(times, default=0.0), 0.0, 1.0, width, height,
               pad=6.0, top=14.0)
    chart = Chart(width, height, f"coverage of {old} (old) and {new} (new) over "
                                 f"{len(loads)} load(s)")
    chart.boxes.append(Box("0", "0", str(width), str(height), "frame"))
    _series(s, [(t, o) for t, o, _ in loads], "series", f"{old} (old)", chart)
    _series(s, [(t, n) for t, _, n in loads], "series2", f"{new} (new)", chart)
    chart.labels.append(Label(_f(s.pad), "11", f"{old} → {new}"))
    return chart


def timeline_chart(days: Sequence[tuple[str, int]], *, width: int = 600,
                   height: int = 80) -> Chart:
    """One bar per day (label, findings seen that day), oldest first."""
    most = max((n for _, n in days), default=0)
    chart = Chart(width, height, f"findings per day, last {len(days)} day(s), most {most}")
    chart.boxes.append(Box("0", "0", str(width), str(height), "frame"))
    step = (width - 8) / max(len(days), 1)
    for i, (day, n) in enumerate(days):
        h = 0.0 if most == 0 else (height - 22) * n / most
        chart.boxes.append(Box(_f(4 + i * step + 1), _f(height - 14 - h), _f(max(step - 2, 1)),
                               _f(h), "bar", f"{day}: {n} finding(s)"))
    if days:
        chart.labels.append(Label("4", str(height - 2), days[0][0]))
        chart.labels.append(Label(str(width - 4), str(height - 2), days[-1][0], "end"))
        chart.labels.append(Label(str(width - 4), "11", f"max {most}", "end"))
    return chart
