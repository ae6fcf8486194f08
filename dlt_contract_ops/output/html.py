"""The self-contained HTML page of `dlt-contract-ops report`.

One file with inline CSS, inline SVG and one tiny inline script (the filter box; the page's
Content-Security-Policy allows that script by its hash and nothing else, and no fetch of any
kind), so it can be mailed, attached to a CI run, printed or opened from disk offline.

On top what changed since the last recorded sweep (new, back again and escalated findings,
most severe first; resolved ones), then a summary (sources, tables, findings by severity and
by detector, errors, alerts not delivered, the findings per day of the last 30 days); then
each source and its tables, most severe first,
each table a collapsible block with its findings (every detector's own details) and the
small multiples of its declared columns' coverage. Times read as "7 Dec 2026 04:52 UTC
(3 h ago)" against the report run's moment (`Report.generated`), states and metrics in
words (`output.wording`). The pictures are `output.pictures` / `output.charts`; the markup is
`templates/*.html.j2` (Jinja2, autoescaped): every name and value from the warehouse or the
models is data, escaped, never markup or script.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache, partial
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from dlt_contract_ops.model.findings import NOTHING_CHECKED, DriftFinding, ReconcileResult
from dlt_contract_ops.model.severity import SEVERITIES, rank
from dlt_contract_ops.output import pictures, wording

if TYPE_CHECKING:
    from dlt_contract_ops.engine.report import Report, SinceLastSweep
    from dlt_contract_ops.output.charts import Chart

TITLE = "dlt-contract-ops drift report"
#: how long one sample value or example may show before it is cut
SAMPLE_CHARS = 80
#: how many of the most severe tables open expanded (the rest are one line until clicked)
OPEN_TABLES = 12


def shown(value: object) -> object:
    r"""Every value a template prints: characters HTML cannot show are written as `\uXXXX`
    (line breaks and tabs stay); the template's autoescape then escapes `<`, `>`, `&` and
    quotes. Markup passes as it is.

    >>> shown('<b>\x07'), shown(Markup("<svg/>"))
    ('<b>\\u0007', Markup('<svg/>'))
    """
    if isinstance(value, Markup):
        return value
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else f"\\u{ord(c):04x}" for c in text)


@cache
def _templates() -> jinja2.Environment:
    """The package's templates (`output/templates/*.html.j2`), autoescaped, with the words a
    person reads (`output.wording`) as globals."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("dlt_contract_ops.output", "templates"),
        autoescape=True,
        finalize=shown,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals.update(alert_words=wording.alert_words, metric_words=wording.metric_words)
    return env


@cache
def filter_script() -> tuple[str, str]:
    """The filter box's script (`templates/filter.js.j2`) and its CSP hash."""
    source = _templates().loader.get_source(_templates(), "filter.js.j2")[0]  # type: ignore[union-attr]
    digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
    return source, f"'sha256-{digest}'"


def _sample(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)
    return text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"


def severity(f: DriftFinding) -> int:
    """How bad a finding is, for ranking (higher is worse): its severity (`error` 3,
    `warning` 2, `info` 1), an acknowledged one 0."""
    return 0 if f.acknowledged else len(SEVERITIES) - rank(f.severity)


def ranked(findings: Sequence[DriftFinding]) -> list[DriftFinding]:
    """`findings` most severe first (`severity`), then by source, table and detector."""
    return sorted(findings, key=lambda f: (-severity(f), f.source, f.table, f.drift_type))


def _changes(since: SinceLastSweep | None) -> dict[str, Any] | None:
    """The "since the last sweep" section: the findings that arrived (each with its word:
    new, back again, escalated), most severe first, and the resolved ones by place."""
    if since is None:
        return None
    word = {**{f.id: "escalated" for f in since.escalated},
            **{f.id: "back again" for f in since.reopened},
            **{f.id: "new" for f in since.new}}
    return {
        "previous": since.previous,
        "error": since.error,
        "arrived": [(word[f.id], f) for f in ranked(since.arrived)],
        "resolved": sorted(since.resolved, key=lambda g: (g.source, g.table, g.detector)),
        "unswept": sorted({f.drift_type for f in since.unswept}),
        "unswept_count": len(since.unswept),
    }


def _detector_lines(f: DriftFinding) -> list[str]:
    """The lines a third-party detector writes of its findings (`Detector.lines`)."""
    from dlt_contract_ops.detectors.registry import get

    try:
        own = get(f.drift_type).line_renderer()
    except Exception:  # a detector no longer installed: its details still show
        return []
    return [str(line) for line in own(f)] if own else []


def _plugin_rows(f: DriftFinding) -> list[tuple[str, str]]:
    """A third-party detector's own details as key/value rows (the generic fallback)."""
    from dlt_contract_ops.model.details import PluginDetails

    if not isinstance(f.details, PluginDetails):
        return []
    return [(str(k), _sample(v)) for k, v in f.details.data.items()]


@dataclass
class _Table:
    source: str
    name: str
    findings: list[DriftFinding] = field(default_factory=list)
    coverage: list[pictures.ColumnPicture] = field(default_factory=list)
    open: bool = False
    #: the table's place on the page (names its small multiples' shared axes)
    number: int = 0

    @property
    def rank(self) -> tuple[int, int, str]:
        return (-max((severity(f) for f in self.findings), default=-1),
                -len(self.findings), self.name)

    @property
    def kinds(self) -> list[str]:
        return sorted({f.drift_type for f in self.findings})

    @property
    def filter_text(self) -> str:
        words = [self.source, self.name, *self.kinds,
                 *(c for f in self.findings for c in f.columns)]
        return " ".join(words).lower()


def _source(name: str, blocks: Sequence[ReconcileResult], report: Report | None
            ) -> dict[str, Any]:
    """What the page shows of one source: its tables (with findings or load profiles),
    most severe first."""
    first = blocks[0]
    findings = [f for r in blocks for f in r.findings]
    tables: dict[str, _Table] = {}
    for f in findings:
        tables.setdefault(f.table, _Table(name, f.table)).findings.append(f)
    if report is not None:
        frame = report.frames.get(name)
        for (source, table), loads in report.tables.items():
            if source != name:
                continue
            t = tables.setdefault(table, _Table(name, table))
            drifted = {c for f in t.findings for c in f.columns}
            t.coverage = pictures.coverage_pictures(loads, frame, drifted)
    for t in tables.values():
        t.findings.sort(key=lambda f: (-severity(f), f.drift_type))
    ordered = sorted(tables.values(), key=lambda t: t.rank)
    unchecked = any(n.startswith(NOTHING_CHECKED) for r in blocks for n in r.notes)
    return {
        "name": name,
        "where": [(label, value) for label, value in (
            ("pipeline", first.pipeline), ("destination", first.destination),
            ("dataset", first.dataset)) if value],
        "findings": findings,
        "errors": [r for r in blocks if r.error],
        "tables": ordered,
        "ok": not findings and not any(r.error for r in blocks) and not unchecked,
        "notes": list(dict.fromkeys(n for r in blocks for n in r.notes)),
        "rank": min((t.rank for t in ordered), default=(1, 0, "")),
    }


class _Pictures:
    """The per-finding pictures and history the template asks for."""

    def __init__(self, report: Report | None) -> None:
        self.report = report

    def metrics(self, f: DriftFinding) -> list[tuple[dict[str, Any], Chart | None]]:
        from dlt_contract_ops.core.distribution import DistributionRule

        r = self.report
        loads = r.tables.get((f.source, f.table)) if r is not None else None
        frame = r.frames.get(f.source) if r is not None else None
        rule = frame.rule if frame is not None else DistributionRule()
        return [(m, pictures.metric_picture(m, loads, rule) if loads else None)
                for m in f.metrics or []]

    def handoffs(self, f: DriftFinding) -> list[Chart]:
        if self.report is None:
            return []
        return pictures.handoff_pictures(f, self.report.handoffs.get((f.source, f.table), []))

    def seen(self, f: DriftFinding) -> Any:
        return self.report.history.seen.get(f.id) if self.report is not None else None


def to_html(
    results: Sequence[ReconcileResult], *, generated: str | None = None,
    report: Report | None = None,
) -> str:
    """The report page for `results` (`dlt-contract-ops report --html FILE`); `report`
    adds the pictures, the history and what changed since the last sweep
    (`engine.report.Gatherer`).

    The page's times read against `report.generated` ("3 h ago"); `generated` is shown as
    the report's time when given, else `report.generated` (the renderer reads no clock).

    >>> page = to_html([ReconcileResult(source="<shop>")])
    >>> "<h2>&lt;shop&gt;</h2>" in page, "<script>" in page
    (True, True)
    """
    by_source: dict[str, list[ReconcileResult]] = {}
    for r in results:
        by_source.setdefault(r.source, []).append(r)
    sources = sorted((_source(name, blocks, report) for name, blocks in by_source.items()),
                     key=lambda s: (not s["errors"], s["rank"]))
    budget = OPEN_TABLES
    for number, t in enumerate((t for s in sources for t in s["tables"]), 1):
        t.number = number
        if budget and any(severity(f) for f in t.findings):
            t.open, budget = True, budget - 1
    findings = [f for r in results for f in r.findings]
    by_detector = Counter(f.drift_type for f in findings)
    acked = Counter(f.drift_type for f in findings if f.acknowledged)
    script, script_hash = filter_script()
    drawn = _Pictures(report)
    now: datetime | None = report.generated if report is not None else None
    if generated is None and now is not None:
        generated = wording.when(now)
    by_severity = Counter(f.severity for f in findings)
    return _templates().get_template("report.html.j2").render(
        title=TITLE,
        generated=generated,
        when=partial(wording.when, now=now),
        changes=_changes(report.since if report is not None else None),
        by_severity=[(s, by_severity[s]) for s in SEVERITIES],
        sources=sources,
        findings=findings,
        tables=sum(len(s["tables"]) for s in sources),
        by_detector=sorted(by_detector.items(), key=lambda kv: (-kv[1], kv[0])),
        acked=acked,
        errors=[r for r in results if r.error],
        undelivered=sum(1 for f in findings if f.alert == "undelivered"),
        acknowledged=sum(acked.values()),
        detectors=report.detectors if report is not None else (),
        timeline=pictures.timeline_picture(report.history) if report is not None else None,
        sweeps=report.history.sweeps if report is not None else 0,
        script=Markup(script),  # our own constant file, allowed by its hash in the CSP
        script_hash=script_hash,
        detector_lines=_detector_lines,
        plugin_rows=_plugin_rows,
        sample=_sample,
        drawn=drawn,
    )
