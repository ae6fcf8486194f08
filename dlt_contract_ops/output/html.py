"""The self-contained HTML page of `dlt-contract-ops report`.

One file with inline CSS and inline SVG and nothing else: no script, no font, no image to
fetch (a Content-Security-Policy in the page forbids it), so it can be mailed, attached to a
CI run or opened from disk. Per source and table it shows the findings with their reproduce
SQL (an acknowledged finding with an "acknowledged" badge: by whom, why, until when), and
per declared column that drifted a coverage sparkline: the removal detector's
non-NULL share in the baseline window, then in the recent window. Per-load history for
every declared column arrives with load profiles; `sparkline` already draws any number of
points.

The page is `templates/report.html.j2` (Jinja2, autoescaped): every name and value is
escaped, since column names may hold `<`, `&`, quotes, line breaks and any unicode.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

from dlt_contract_ops.model.findings import NOTHING_CHECKED, DriftFinding, ReconcileResult

TITLE = "dlt-contract-ops drift report"
#: drift types that name declared columns (the model has them); additive columns it lacks
DECLARED_KINDS = ("removal", "missing", "type")
#: how long one sample value may show before it is cut
SAMPLE_CHARS = 80

def shown(value: object) -> object:
    r"""Every value a template prints: characters HTML cannot show are written as `\uXXXX`
    (line breaks and tabs stay); the template's autoescape then escapes `<`, `>`, `&` and
    quotes. Markup (a rendered macro or sparkline) passes as it is.

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
    """The package's templates (`output/templates/*.html.j2`), autoescaped."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("dlt_contract_ops.output", "templates"),
        autoescape=True,
        finalize=shown,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def sparkline(
    values: Sequence[float | None], label: str, *, width: int = 120, height: int = 28
) -> Markup:
    """An inline SVG line through shares in [0, 1], oldest first; None leaves a gap.

    >>> sparkline([0.8, 0.0], "ip").startswith('<svg class="spark"')
    True
    """
    pad = 4.0
    step = (width - 2 * pad) / max(len(values) - 1, 1)
    points = [
        (f"{pad + i * step:.1f}",
         f"{height - pad - max(0.0, min(1.0, v)) * (height - 2 * pad):.1f}")
        for i, v in enumerate(values)
        if v is not None
    ]
    return Markup(_templates().get_template("sparkline.html.j2").render(
        label=label, width=width, height=height, pad=pad, points=points,
    ))


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _sample(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"


def _detector_lines(f: DriftFinding) -> list[str]:
    """The lines a detector writes of its findings (`Detector.lines`), one `div` each; the
    built-ins show theirs in the table and the coverage rows instead."""
    from dlt_contract_ops.detectors.registry import get

    own = get(f.drift_type).line_renderer()
    return [str(line) for line in own(f)] if own else []


def _acked_count(findings: Sequence[DriftFinding]) -> str:
    acked = sum(1 for f in findings if f.acknowledged)
    return f" ({acked} acknowledged)" if acked else ""


@dataclass(frozen=True)
class _CoverageRow:
    column: str
    kinds: str
    graph: Markup | str
    text: str


def _coverage_rows(findings: Sequence[DriftFinding]) -> list[_CoverageRow]:
    """One row per declared column the findings name: its coverage sparkline where the
    removal detector measured it."""
    kinds: dict[str, list[str]] = {}
    measured: dict[str, tuple[float | None, float | None]] = {}
    for f in findings:
        if f.drift_type not in DECLARED_KINDS:
            continue
        for c in f.columns:
            kinds.setdefault(c, []).append(f.drift_type)
        for c, cov in (f.coverage or {}).items():
            measured[c] = (cov.baseline, cov.recent)
    rows = []
    for c in sorted(kinds):
        graph: Markup | str = ""
        if c in measured:
            baseline, recent = measured[c]
            text = f"baseline {_pct(baseline)} → recent {_pct(recent)}"
            graph = sparkline([baseline, recent], f"{c}: {text}")
        elif "missing" in kinds[c]:
            text = "absent from the live table"
        else:
            text = "not measured (run with removal included)"
        rows.append(_CoverageRow(c, ", ".join(kinds[c]), graph, text))
    return rows


def _source(name: str, blocks: Sequence[ReconcileResult]) -> dict[str, Any]:
    """What the page shows of one source."""
    first = blocks[0]
    findings = [f for r in blocks for f in r.findings]
    tables: dict[str, list[DriftFinding]] = {}
    for f in findings:
        tables.setdefault(f.table, []).append(f)
    unchecked = any(n.startswith(NOTHING_CHECKED) for r in blocks for n in r.notes)
    return {
        "name": name,
        "where": [
            (label, value)
            for label, value in (
                ("pipeline", first.pipeline),
                ("destination", first.destination),
                ("dataset", first.dataset),
            )
            if value
        ],
        "findings": findings,
        "errors": [r for r in blocks if r.error],
        "tables": tables,
        "ok": not findings and not any(r.error for r in blocks) and not unchecked,
        "notes": list(dict.fromkeys(n for r in blocks for n in r.notes)),
    }


def to_html(results: Sequence[ReconcileResult], *, generated: str | None = None) -> str:
    """The report page for `results` (`dlt-contract-ops report --html FILE`).

    `generated` is shown as the report's time when given (the renderer reads no clock).

    >>> page = to_html([ReconcileResult(source="<shop>")])
    >>> "<h2>&lt;shop&gt;</h2>" in page, "<script" in page
    (True, False)
    """
    by_source: dict[str, list[ReconcileResult]] = {}
    for r in results:
        by_source.setdefault(r.source, []).append(r)
    return _templates().get_template("report.html.j2").render(
        title=TITLE,
        generated=generated,
        sources=[_source(name, blocks) for name, blocks in by_source.items()],
        findings=[f for r in results for f in r.findings],
        errors=sum(1 for r in results if r.error),
        acked_count=_acked_count,
        coverage_rows=_coverage_rows,
        detector_lines=_detector_lines,
        sample=_sample,
    )
