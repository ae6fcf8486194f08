"""Text and JSON renderings of results: the same objects feed both."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dlt_contract_ops.findings import ReconcileResult, results_document

#: finding key -> "new" | "repeat", what alert dedup decided (see sinks.dedup.AlertLedger)
Alerts = Mapping[Any, str]


def to_json(results: Sequence[ReconcileResult], *, alerts: Alerts | None = None) -> str:
    doc = results_document(list(results))
    if alerts:  # optional finding key `alert`, present when dedup ran
        for r_doc, r in zip(doc["results"], results, strict=True):
            for f_doc, f in zip(r_doc["findings"], r.findings, strict=True):
                if f.key in alerts:
                    f_doc["alert"] = alerts[f.key]
    return json.dumps(doc, indent=2, ensure_ascii=False)


#: declared-side detectors run on every reconcile; their text block shows only when it has news
QUIET_WHEN_CLEAN = frozenset({"missing", "type"})


def to_text(
    results: Sequence[ReconcileResult], *, dry_run: bool = False, alerts: Alerts | None = None
) -> str:
    lines: list[str] = []
    if dry_run:
        lines += ["Dry-run: alert emission suppressed", ""]
    for r in results:
        if r.detector in QUIET_WHEN_CLEAN and not (r.findings or r.error or r.notes):
            continue
        label = r.source if r.detector == "additive" else f"{r.source} ({r.detector})"
        lines.append(
            f"Source: {label}  |  Findings: {len(r.findings)}  |  Duration: {r.duration_s:.2f}s"
        )
        if r.error:
            lines.append(f"  ✗ Error: {r.error}")
        elif not r.findings:
            lines.append("  ✓ No drift")
        for f in r.findings:
            mark = f" [{alerts[f.key]}]" if alerts and f.key in alerts else ""
            lines.append(
                f"  • {f.resource}: {f.drift_type} drift ({len(f.columns)} column(s)){mark}"
            )
            lines.append(f"      Columns: {', '.join(f.columns)}")
            if f.coverage:
                cov = ", ".join(
                    f"{c} {_pct(v.baseline)} → {_pct(v.recent)}" for c, v in f.coverage.items()
                )
                lines.append(f"      Coverage: {cov}")
            if f.expected_types:
                types = ", ".join(
                    f"{c} declared {t}, live {f.column_types.get(c, '?')}"
                    for c, t in f.expected_types.items()
                )
                lines.append(f"      Types: {types}")
            lines.append(f"      First seen: {f.first_seen or 'n/a'}")
        for note in r.notes:
            lines.append(f"  ! {note}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"
