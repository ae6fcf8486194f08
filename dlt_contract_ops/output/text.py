"""Text and JSON renderings of results: the same objects feed both."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dlt_contract_ops.core.escaping import visible
from dlt_contract_ops.detectors.registry import get
from dlt_contract_ops.model.findings import (
    NOT_LOADED,
    NOTHING_CHECKED,
    DriftFinding,
    ReconcileResult,
    by_severity,
    results_document,
)
from dlt_contract_ops.output.documents import json_text


def to_json(results: Sequence[ReconcileResult]) -> str:
    """The `--format json` document (finding key `alert` only where a decision was made)."""
    return json_text(results_document(list(results)))


def text_name(name: str) -> str:
    r"""An identifier as text output shows it: one line, commas and quotes unambiguous.

    A column called `a, b` or holding a line break must not forge a second column or line,
    and one holding a terminal control or a bidi override (ESC, BEL, U+202E) must not reach
    the terminal: such a name is quoted, its unprintable characters escaped (`visible`).

    >>> text_name('Weird "Name"'), text_name("a, b"), text_name("x\ny\u202e")
    ('Weird "Name"', '"a, b"', '"x\\ny\\u202e"')
    """
    plain = all(c.isprintable() and c != "," for c in name)
    if plain and name and name.strip() == name and not name.startswith('"'):
        return name
    return visible(json.dumps(name, ensure_ascii=False))


def to_text(results: Sequence[ReconcileResult], *, dry_run: bool = False) -> str:
    lines: list[str] = []
    if dry_run:
        lines += ["Dry-run: alert emission suppressed", ""]
    for r in results:
        # a detector's block shows only when it has news, if the registry says so
        if get(r.detector).quiet_when_clean and not (r.findings or r.error or r.notes):
            continue
        label = r.source if r.detector == "additive" else f"{r.source} ({r.detector})"
        lines.append(
            f"Source: {label}  |  Findings: {len(r.findings)}  |  Duration: {r.duration_s:.2f}s"
        )
        if r.error:
            # dlt's own multi-line text (the keys it tried) on its lines, indented
            first, *more = r.error.strip().splitlines() or [""]
            lines.append(f"  ✗ Error: {_one_line(first)}")
            lines += [f"      {_one_line(line)}" for line in more if line.strip()]
        elif r.error_kind == NOT_LOADED:
            lines.append("  ○ Not loaded yet: nothing to check (see the note)")
        elif any(n.startswith(NOTHING_CHECKED) for n in r.notes):
            lines.append("  ! Nothing checked (see the note below)")
        elif not r.findings:
            lines.append(f"  ✓ {get(r.detector).clean_text}")
        for f in by_severity(r.findings):  # worst first
            mark = f" [{f.alert_reason or f.alert}]" if f.alert else ""
            if f.ack is not None:
                state = "ack expired" if f.ack.get("expired") else "acked"
                mark += (
                    f" [{state} until {str(f.ack.get('until', ''))[:10]} by "
                    f"{_one_line(str(f.ack.get('by')))}: {_one_line(str(f.ack.get('reason')))}]"
                )
            # the table is what the user finds in the warehouse; the resource too when the
            # resource writes to a table of another name (`table_name="shop_orders"`)
            shown = text_name(f.table)
            if f.resource and f.resource != f.table:
                shown += f" (resource {text_name(f.resource)})"
            lines.append(
                f"  • {shown}: {f.drift_type} drift ({len(f.columns)} column(s)){mark} "
                f"[{f.severity}]  id {f.id}"
            )
            lines.append(f"      Columns: {', '.join(text_name(c) for c in f.columns)}")
            lines += [f"      {_one_line(line)}" for line in finding_lines(f)]
            lines.append(f"      First seen: {f.first_seen or 'n/a'}")
        for note in r.notes:
            lines.append(f"  ! {_one_line(note)}")
        lines.append("")
    # every line once more: a type, a source or a value a line did not pass through
    # `text_name` or `_one_line` reaches the terminal escaped all the same
    return "\n".join(visible(line) for line in lines).rstrip() + "\n"


def finding_lines(finding: DriftFinding) -> list[str]:
    """The detail lines of one finding, between its `Columns:` and `First seen:` lines: its
    detector's own (`Detector.lines`), else the built-in ones.

    >>> finding_lines(DriftFinding(drift_type="additive", source="s", resource="r",
    ...                            table="t", columns=["c"]))
    []
    """
    own = get(finding.drift_type).line_renderer()
    if own is not None:
        return [str(line) for line in own(finding)]
    return builtin_lines(finding)


def builtin_lines(f: DriftFinding) -> list[str]:
    """What the built-in detectors measured beside the columns (violations, the rename,
    coverage, shifted metrics, declared types, why a type cannot hold)."""
    out: list[str] = []
    out += [violation_line(doc) for doc in f.violations or []]
    if f.renamed_from and f.renamed_to:
        out.append(
            f"Renamed: {text_name(f.renamed_from)} → {text_name(f.renamed_to)} "
            f"(confidence {f.confidence}): {_one_line('; '.join(f.reasons or []))}"
        )
    if f.coverage:
        cov = ", ".join(
            f"{text_name(c)} {_pct(v.baseline)} → {_pct(v.recent)}"
            for c, v in f.coverage.items()
        )
        out.append(f"Coverage: {cov}")
    out += [metric_line(m) for m in f.metrics or []]
    if f.expected_types:
        types = ", ".join(
            f"{text_name(c)} declared {t}, live {f.column_types.get(c, '?')}"
            for c, t in f.expected_types.items()
        )
        out.append(f"Types: {types}")
    if f.drift_type == "type":  # what each live type cannot hold, and what it needs
        out.extend(f"Why: {_one_line(reason)}" for reason in f.reasons or [])
    return out


def _one_line(text: str) -> str:
    """Free text (notes, errors) on one line: a name holding a line break cannot forge one,
    nor a terminal control or bidi override reach the terminal."""
    return visible(text)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _example_text(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def metric_line(doc: Mapping[str, Any]) -> str:
    """One shifted metric of a distribution finding as the text output prints it: rates and
    shares as percentages, distinct counts as counts.

    >>> metric_line({"column": "status", "metric": "category_share", "category": "other",
    ...              "baseline": 0.0, "current": 0.04, "change": 0.04})
    'Metric: status category_share `other` 0.0% → 4.0% (+4.0 points)'
    >>> metric_line({"column": "code", "metric": "distinct_count", "category": None,
    ...              "baseline": 98.0, "current": 1.0, "change": -97.0})
    'Metric: code distinct_count 98 → 1 (-97)'
    """
    name = text_name(str(doc.get("column")))
    metric = doc.get("metric")
    category = doc.get("category")
    what = f"{name} {metric}" + (f" `{category}`" if category is not None else "")
    base, now, change = (float(doc.get(k) or 0.0) for k in ("baseline", "current", "change"))
    if metric == "distinct_count":
        return f"Metric: {what} {base:g} → {now:g} ({change:+g})"
    return f"Metric: {what} {base:.1%} → {now:.1%} ({change * 100:+.1f} points)"


def violation_line(doc: Mapping[str, Any]) -> str:
    """One violation of a finding's `violations` as the text output prints it.

    >>> violation_line({"column": "kind", "rule": "code_set", "count": 2,
    ...                 "examples": ["x"], "declared": "in {a, b}"})
    'kind: code_set, 2 row(s) not in {a, b}; e.g. "x"'
    """
    what = {
        "not_null": "NULL",
        "code_set": f"not {doc.get('declared', '')}",
        "range": f"outside {doc.get('declared', '')}",
        "pattern": f"not matching {doc.get('declared', '')}",
        "unique_key": "beyond the first of their key",
    }.get(str(doc["rule"]), "")
    names = ", ".join(text_name(str(c)) for c in doc.get("columns") or [doc["column"]])
    line = f"{names}: {doc['rule']}, {doc['count']} row(s) {what}"
    examples = doc.get("examples") or []
    if examples:
        line += "; e.g. " + ", ".join(_example_text(e) for e in examples)
    return line
