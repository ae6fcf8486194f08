"""The self-contained HTML page of `dlt-contract-ops report`.

One file with inline CSS and inline SVG and nothing else: no script, no font, no image to
fetch (a Content-Security-Policy in the page forbids it), so it can be mailed, attached to a
CI run or opened from disk. Per source and table it shows the findings with their reproduce
SQL (an acknowledged finding with an "acknowledged" badge: by whom, why, until when), and
per declared column that drifted a coverage sparkline: the removal detector's
non-NULL share in the baseline window, then in the recent window. Per-load history for
every declared column arrives with load profiles; `sparkline` already draws any number of
points.

Every name and value is escaped: column names may hold `<`, `&`, quotes, line breaks and
any unicode.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from dlt_contract_ops.model.findings import NOTHING_CHECKED, DriftFinding, ReconcileResult

TITLE = "dlt-contract-ops drift report"
#: drift types that name declared columns (the model has them); additive columns it lacks
DECLARED_KINDS = ("removal", "missing", "type")
#: how long one sample value may show before it is cut
SAMPLE_CHARS = 80

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       margin: 0; background: #f4f5f7; color: #1d2330; }
header { background: #1d2330; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px; font-size: 20px; }
header p { margin: 0; color: #c5cad6; }
main { padding: 18px 28px 40px; max-width: 1100px; }
section.source { background: #fff; border: 1px solid #d9dce3; border-radius: 6px;
                 margin: 0 0 18px; padding: 14px 18px; }
section.source h2 { margin: 0; font-size: 18px; }
.where { color: #5b6475; margin: 2px 0 10px; }
.table { border-top: 1px solid #eceef2; padding-top: 10px; margin-top: 10px; }
.table h3 { margin: 0 0 6px; font-size: 15px; }
.finding { margin: 6px 0 10px 4px; }
.badge { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px;
         font-weight: 600; color: #fff; background: #6b7280; margin-right: 6px; }
.badge.additive { background: #b45309; }
.badge.removal { background: #b91c1c; }
.badge.missing { background: #7c3aed; }
.badge.type { background: #0369a1; }
.badge.acknowledged { background: #15803d; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
            font-size: 12.5px; }
code.col { background: #eef0f4; border-radius: 3px; padding: 0 4px; }
pre { background: #f6f8fa; border: 1px solid #e1e4ea; border-radius: 4px; padding: 8px;
      white-space: pre-wrap; word-break: break-all; margin: 4px 0; }
table.kv, table.coverage { border-collapse: collapse; margin: 4px 0; }
table.kv td, table.coverage td, table.coverage th { padding: 2px 10px 2px 0;
                                                     vertical-align: middle; text-align: left; }
table.coverage th { color: #5b6475; font-weight: 600; font-size: 12px; }
.muted { color: #5b6475; }
.ok { color: #15803d; font-weight: 600; }
.error { background: #fef2f2; border: 1px solid #fecaca; color: #991b1b; border-radius: 4px;
         padding: 6px 10px; margin: 6px 0; white-space: pre-wrap; }
ul.notes { color: #5b6475; margin: 8px 0 0; padding-left: 18px; }
svg.spark { vertical-align: middle; }
footer { color: #5b6475; padding: 0 28px 28px; max-width: 1100px; }
"""


def esc(value: object) -> str:
    r"""Text for the page: characters HTML cannot show are written as `\uXXXX`, then
    `<`, `>`, `&` and both quotes are escaped.

    >>> esc('<b a="1">\x07')
    '&lt;b a=&quot;1&quot;&gt;\\u0007'
    """
    text = "".join(
        c if c.isprintable() or c in "\n\t" else f"\\u{ord(c):04x}" for c in str(value)
    )
    return html.escape(text, quote=True)


def sparkline(
    values: Sequence[float | None], label: str, *, width: int = 120, height: int = 28
) -> str:
    """An inline SVG line through shares in [0, 1], oldest first; None leaves a gap.

    >>> sparkline([0.8, 0.0], "ip").startswith('<svg class="spark"')
    True
    """
    pad = 4.0
    step = (width - 2 * pad) / max(len(values) - 1, 1)
    points = [
        (pad + i * step, height - pad - max(0.0, min(1.0, v)) * (height - 2 * pad))
        for i, v in enumerate(values)
        if v is not None
    ]
    parts = [
        f'<svg class="spark" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{esc(label)}">',
        f"<title>{esc(label)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" rx="3" fill="#f1f3f7"/>',
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
        'stroke="#d3d7df" stroke-width="1"/>',
    ]
    if len(points) > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        parts.append(
            f'<polyline points="{path}" fill="none" stroke="#2563eb" stroke-width="2"/>'
        )
    parts += [
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="#2563eb"/>' for x, y in points
    ]
    parts.append("</svg>")
    return "".join(parts)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _sample(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"


def _finding(f: DriftFinding) -> str:
    rows = []
    for c in f.columns:
        cells = [f'<code class="col">{esc(c)}</code>']
        live = f.column_types.get(c)
        declared = (f.expected_types or {}).get(c)
        if declared:
            cells.append(f"declared {esc(declared)}, live {esc(live or '?')}")
        elif live:
            cells.append(esc(live))
        else:
            cells.append("")
        samples = f.samples.get(c) or []
        cells.append(
            ", ".join(f"<code>{esc(_sample(v))}</code>" for v in samples)
            if samples else '<span class="muted">no samples</span>'
        )
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    out = [
        '<div class="finding">',
        f'<span class="badge {esc(f.drift_type)}">{esc(f.drift_type)}</span>'
        f"{len(f.columns)} column(s) of resource <code>{esc(f.resource)}</code>"
        + (f" · alert {esc(f.alert)}" if f.alert else ""),
        *_acknowledged(f),
        f'<table class="kv">{"".join(rows)}</table>',
        *_detector_lines(f),
        f'<div class="muted">First seen: {esc(f.first_seen or "n/a")}</div>',
    ]
    if f.sample_error:
        out.append(f'<div class="error">sample query failed: {esc(f.sample_error)}</div>')
    if f.reproduce:
        out.append(f"<div>Reproduce:</div><pre><code>{esc(f.reproduce)}</code></pre>")
    out.append("</div>")
    return "\n".join(out)


def _detector_lines(f: DriftFinding) -> list[str]:
    """The lines a detector writes of its findings (`Detector.lines`), one `div` each; the
    built-ins show theirs in the table and the coverage rows instead."""
    from dlt_contract_ops.detectors.registry import get

    own = get(f.drift_type).line_renderer()
    return [f'<div class="detail">{esc(str(line))}</div>' for line in own(f)] if own else []


def _acknowledged(f: DriftFinding) -> list[str]:
    """The acknowledgement that keeps `f` from failing, as a badge line; none when expired."""
    if not f.acknowledged:
        return []
    ack = f.ack or {}
    return [
        '<div><span class="badge acknowledged">acknowledged</span>'
        f"until {esc(str(ack.get('until', ''))[:10])} by <code>{esc(ack.get('by'))}</code>: "
        f"{esc(ack.get('reason'))}</div>"
    ]


def _acked_count(findings: Sequence[DriftFinding]) -> str:
    acked = sum(1 for f in findings if f.acknowledged)
    return f" ({acked} acknowledged)" if acked else ""


def _coverage(findings: Sequence[DriftFinding]) -> str:
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
    if not kinds:
        return ""
    rows = []
    for c in sorted(kinds):
        if c in measured:
            baseline, recent = measured[c]
            label = f"{c}: baseline {_pct(baseline)} → recent {_pct(recent)}"
            graph = sparkline([baseline, recent], label)
            text = f"baseline {_pct(baseline)} → recent {_pct(recent)}"
        elif "missing" in kinds[c]:
            graph, text = "", "absent from the live table"
        else:
            graph, text = "", "not measured (run with removal included)"
        rows.append(
            f'<tr><td><code class="col">{esc(c)}</code></td><td>{esc(", ".join(kinds[c]))}'
            f'</td><td>{graph}</td><td class="muted">{esc(text)}</td></tr>'
        )
    return (
        '<table class="coverage"><tr><th>declared column</th><th>drift</th>'
        "<th>non-NULL coverage</th><th></th></tr>" + "".join(rows) + "</table>"
    )


def _source(name: str, blocks: Sequence[ReconcileResult]) -> str:
    first = blocks[0]
    where = " · ".join(
        f"{label} <code>{esc(value)}</code>"
        for label, value in (
            ("pipeline", first.pipeline),
            ("destination", first.destination),
            ("dataset", first.dataset),
        )
        if value
    )
    findings = [f for r in blocks for f in r.findings]
    out = [
        '<section class="source">',
        f"<h2>{esc(name)}</h2>",
        f'<p class="where">{where or "not reached"} · {len(findings)} finding(s)'
        f"{_acked_count(findings)}</p>",
    ]
    out += [
        f'<div class="error">{esc(r.detector)}: {esc(r.error)}</div>' for r in blocks if r.error
    ]
    tables: dict[str, list[DriftFinding]] = {}
    for f in findings:
        tables.setdefault(f.table, []).append(f)
    for table, found in tables.items():
        out.append('<div class="table">')
        out.append(f"<h3>table <code>{esc(table)}</code></h3>")
        out += [_finding(f) for f in found]
        out.append(_coverage(found))
        out.append("</div>")
    unchecked = any(n.startswith(NOTHING_CHECKED) for r in blocks for n in r.notes)
    if not findings and not any(r.error for r in blocks) and not unchecked:
        out.append('<p class="ok">✓ No drift</p>')
    notes = list(dict.fromkeys(n for r in blocks for n in r.notes))
    if notes:
        out.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


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
    every = [f for r in results for f in r.findings]
    findings = f"{len(every)} finding(s){_acked_count(every)}"
    errors = sum(1 for r in results if r.error)
    stamp = f" · generated {esc(generated)}" if generated else ""
    body = "\n".join(_source(name, blocks) for name, blocks in by_source.items())
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<link rel="icon" href="data:,">
<title>{esc(TITLE)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>{esc(TITLE)}</h1>
<p>{len(by_source)} source(s) · {findings} · {errors} error(s){stamp}</p>
</header>
<main>
{body}
</main>
<footer>
Coverage is a declared column's share of non-NULL values in the baseline window and then in
the recent window, as the removal detector measured it; it is shown for the declared columns
that drifted. Per-load history for every declared column comes with load profiles.
</footer>
</body>
</html>
"""
