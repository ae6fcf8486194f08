"""The report's pictures as data: pure functions from numbers to shapes in pixels, which
`templates/chart.html.j2` draws as inline SVG (autoescaped; every label is data).

- `coverage_chart`: one declared column's non-NULL share per load, with the removal
  window's boundary (a vertical line) and the baseline/recent thresholds (dashed lines);
- `metric_chart`: a distribution metric per load, its baseline band (median ± the rule's
  tolerance) and the newest load marked;
- `handoff_chart`: a rename's old and new column's coverage on one axis;
- `timeline_chart`: findings seen per day.

Every chart carries its axis values (`Label`s of css "tick": the y axis's range on the left,
the given x values under the plot, each with a tick mark on the "axis" line) and its legend
(`Key`s: each mark as the chart draws it and what it stands for), which the template puts
beside the picture. Shapes carry formatted coordinates, so the template does no arithmetic.
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
    """Text in the picture; css "tick" for an axis value."""

    x: str
    y: str
    text: str
    anchor: str = "start"
    css: str = ""


@dataclass(frozen=True)
class Key:
    """One legend entry: a mark (`line`, `box` or `dot`) drawn in the chart's CSS class
    `css`, and what it stands for."""

    css: str
    mark: str
    text: str


#: an axis value: where on the axis (data units) and its label
Tick = tuple[float, str]


@dataclass(frozen=True)
class Chart:
    """One picture: its size, what a screen reader says, its shapes (drawn in order:
    boxes, lines, dots, labels) and its legend."""

    width: int
    height: int
    label: str
    boxes: list[Box] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    dots: list[Dot] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    legend: list[Key] = field(default_factory=list)

    @property
    def ticks(self) -> list[str]:
        """The axis values shown, in order (y axis, then x axis)."""
        return [label.text for label in self.labels if label.css == "tick"]


def _f(value: float) -> str:
    """A coordinate: whole pixels are sharp enough at these sizes, and keep 6000 charts
    small."""
    return f"{value:.0f}"


@dataclass(frozen=True)
class _Scale:
    """Maps (x, y) data to pixels inside the plot area (the picture less its margins: the
    left one holds the y axis's values, the bottom one the x axis's); y grows upwards."""

    x0: float
    x1: float
    y0: float
    y1: float
    width: int
    height: int
    left: float = 4.0
    right: float = 4.0
    top: float = 4.0
    bottom: float = 4.0

    def x(self, value: float) -> float:
        span = self.x1 - self.x0
        at = 0.5 if span <= 0 else (value - self.x0) / span
        return self.left + at * (self.width - self.left - self.right)

    def y(self, value: float) -> float:
        span = self.y1 - self.y0
        at = 0.5 if span <= 0 else (value - self.y0) / span
        at = max(0.0, min(1.0, at))
        return self.height - self.bottom - at * (self.height - self.bottom - self.top)

    def runs(self, series: Sequence[tuple[float, float | None]]) -> list[list[tuple[str, str]]]:
        """Runs of consecutive known values as pixel pairs (None breaks a run)."""
        runs: list[list[tuple[str, str]]] = [[]]
        for x, y in series:
            if y is None:
                runs.append([])
            else:
                runs[-1].append((_f(self.x(x)), _f(self.y(y))))
        return [r for r in runs if r]


def _axes(s: _Scale, chart: Chart, ys: Sequence[Tick], xs: Sequence[Tick]) -> None:
    """The axis line (left and bottom of the plot), a tick mark and a value per tick: y
    values right-aligned left of the plot, x values under it (the ends kept inside the
    picture)."""
    floor = s.height - s.bottom
    d = f"M{_f(s.left)} {_f(s.top)}V{_f(floor)}H{_f(s.width - s.right)}"
    for value, text in ys:
        y = s.y(value)
        d += f"M{_f(s.left - 3)} {_f(y)}H{_f(s.left)}"
        chart.labels.append(Label(_f(s.left - 4), _f(y + 3), text, "end", "tick"))
    for value, text in xs:
        x = s.x(value)
        d += f"M{_f(x)} {_f(floor)}V{_f(floor + 3)}"
        room = len(text) * 2.6  # about half the label's width at the charts' font size
        anchor = ("start" if x - room < 0 else "end" if x + room > s.width else "middle")
        chart.labels.append(Label(_f(x), _f(s.height - 1), text, anchor, "tick"))
    chart.lines.append(Line(d, "axis"))


def _hline(s: _Scale, value: float) -> str:
    return f"M{_f(s.left)} {_f(s.y(value))}H{_f(s.width - s.right)}"


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


def _pct(value: float) -> str:
    """A share as an axis or legend value: "20%", "0.5%"."""
    return f"{value * 100:.3g}%"


def coverage_chart(
    column: str, loads: Sequence[tuple[float, float | None]], *, boundary: float | None,
    baseline_threshold: float, recent_threshold: float, xticks: Sequence[Tick] = (),
    width: int = 176, height: int = 58,
) -> Chart:
    """`column`'s non-NULL share per load ((load time, share), oldest first); `xticks` are
    the load times to label under it.

    >>> c = coverage_chart("ip", [(0, 1.0), (10, 1.0), (20, 0.0)], boundary=15,
    ...                    baseline_threshold=0.2, recent_threshold=0.01)
    >>> [(l.css, l.d) for l in c.lines if l.css != "axis"]  # doctest: +NORMALIZE_WHITESPACE
    [('threshold', 'M30 37H170M30 45H170'), ('boundary', 'M135 5V45'),
     ('series', 'M30 5L100 5 170 45')]
    >>> c.ticks, [k.text for k in c.legend]  # doctest: +NORMALIZE_WHITESPACE
    (['0%', '100%'], ['non-NULL share per load', 'baseline / recent threshold (20% / 1%)',
                      'recent window starts'])
    """
    times = [t for t, _ in loads]
    s = _Scale(min(times, default=0.0), max(times, default=0.0), 0.0, 1.0, width, height,
               left=30, right=6, top=5, bottom=13)
    last = next((v for _, v in reversed(loads) if v is not None), None)
    label = (f"{column}: coverage, {len(loads)} load(s)"
             + ("" if last is None else f", newest {last:.0%}"))
    chart = Chart(width, height, label)
    # the plot's background is the svg's own CSS: one rect fewer in each of thousands
    chart.lines.append(Line(_hline(s, baseline_threshold) + _hline(s, recent_threshold),
                            "threshold"))
    if boundary is not None and times and times[0] <= boundary <= times[-1]:
        chart.lines.append(Line(f"M{_f(s.x(boundary))} {_f(s.top)}V{_f(height - s.bottom)}",
                                "boundary"))
    _series(s, loads, "series", "", chart)
    _axes(s, chart, [(0.0, "0%"), (1.0, "100%")], xticks)
    chart.legend.extend([
        Key("series", "line", "non-NULL share per load"),
        Key("threshold", "line", f"baseline / recent threshold ({_pct(baseline_threshold)} / "
                                 f"{_pct(recent_threshold)})"),
        *([Key("boundary", "line", "recent window starts")] if boundary is not None else []),
    ])
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
    *, percent: bool = True, xticks: Sequence[Tick] = (), width: int = 300, height: int = 84,
) -> Chart:
    """A metric per load (oldest first; the last one is the newest load, marked) and its
    baseline band; `xticks` are the load times to label under it."""
    known = [v for _, v in values if v is not None]
    low = min([*known, band[0]], default=0.0)
    high = max([*known, band[1]], default=1.0)
    if percent:
        low, high = max(0.0, min(low, 0.0)), min(1.0, max(high, low + 0.05))
    times = [t for t, _ in values]
    s = _Scale(min(times, default=0.0), max(times, default=0.0), low, high or 1.0,
               width, height, left=40, right=8, top=16, bottom=13)

    def shown(v: float) -> str:
        return f"{v:.1%}" if percent else f"{v:g}"

    chart = Chart(width, height, f"{title}: band {shown(max(band[0], 0))} to "
                                 f"{shown(band[1])}, {len(values)} load(s)")
    _frame(s, chart)
    top, bottom = s.y(band[1]), s.y(max(band[0], low))
    chart.boxes.append(Box(_f(s.left), _f(top), _f(width - s.left - s.right),
                           _f(max(bottom - top, 1)), "band", "baseline band (median ± tolerance)"))
    _series(s, values, "series", title, chart)
    newest = values[-1] if values else None
    if newest is not None and newest[1] is not None:
        chart.dots.append(Dot(_f(s.x(newest[0])), _f(s.y(newest[1])), "newest",
                              f"newest load: {shown(newest[1])}"))
        chart.labels.append(Label(_f(width - s.right), "11", f"newest {shown(newest[1])}",
                                  "end"))
    chart.labels.append(Label(_f(s.left), "11", title))
    _axes(s, chart, [(low, shown(low)), (high or 1.0, shown(high or 1.0))], xticks)
    chart.legend.extend([Key("series", "line", "value per load"),
                         Key("band", "box", "baseline band (median ± tolerance)"),
                         Key("newest", "dot", "newest load")])
    return chart


def _frame(s: _Scale, chart: Chart) -> None:
    """The plot area's background."""
    chart.boxes.append(Box(_f(s.left), _f(s.top), _f(s.width - s.left - s.right),
                           _f(s.height - s.top - s.bottom), "frame"))


def handoff_chart(
    old: str, new: str, loads: Sequence[tuple[float, float | None, float | None]],
    *, xticks: Sequence[Tick] = (), width: int = 300, height: int = 84,
) -> Chart:
    """Both columns' coverage per load ((time, old share, new share)) on one axis."""
    times = [t for t, _, _ in loads]
    s = _Scale(min(times, default=0.0), max(times, default=0.0), 0.0, 1.0, width, height,
               left=34, right=8, top=16, bottom=13)
    chart = Chart(width, height, f"coverage of {old} (old) and {new} (new) over "
                                 f"{len(loads)} load(s)")
    _frame(s, chart)
    _series(s, [(t, o) for t, o, _ in loads], "series", f"{old} (old)", chart)
    _series(s, [(t, n) for t, _, n in loads], "series2", f"{new} (new)", chart)
    chart.labels.append(Label(_f(s.left), "11", f"{old} → {new}"))
    _axes(s, chart, [(0.0, "0%"), (1.0, "100%")], xticks)
    chart.legend.extend([Key("series", "line", f"{old} (old): non-NULL share per load"),
                         Key("series2", "line", f"{new} (new): non-NULL share per load")])
    return chart


def timeline_chart(days: Sequence[tuple[str, str, int]], *, width: int = 600,
                   height: int = 92) -> Chart:
    """One bar per day ((axis label, full name, findings seen that day), oldest first); the
    first, middle and last day labelled under it.

    >>> c = timeline_chart([("1 Dec", "1 Dec 2026", 0), ("2 Dec", "2 Dec 2026", 4)],
    ...                    width=100, height=60)
    >>> [(b.x, b.y, b.w, b.h, b.title) for b in c.boxes if b.css == "bar"]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('27', '46', '32', '0', '1 Dec 2026: 0 finding(s)'),
     ('61', '6', '32', '40', '2 Dec 2026: 4 finding(s)')]
    >>> c.ticks
    ['0', '4', '1 Dec', '2 Dec']
    """
    most = max((n for _, _, n in days), default=0)
    chart = Chart(width, height, f"findings per day, last {len(days)} day(s), most {most}")
    s = _Scale(0.0, float(max(len(days), 1)), 0.0, float(max(most, 1)), width, height,
               left=26, right=6, top=6, bottom=14)
    _frame(s, chart)
    step = s.x(1.0) - s.x(0.0)
    for i, (_, name, n) in enumerate(days):
        top = s.y(float(n))
        chart.boxes.append(Box(_f(s.x(float(i)) + 1), _f(top), _f(max(step - 2, 1)),
                               _f(height - s.bottom - top), "bar", f"{name}: {n} finding(s)"))
    marked = sorted({0, len(days) // 2, len(days) - 1}) if days else []
    _axes(s, chart, [(0.0, "0"), (float(max(most, 1)), str(max(most, 1)))],
          [(i + 0.5, days[i][0]) for i in marked])
    chart.legend.append(Key("bar", "box", "findings seen that day (each finding once)"))
    return chart
