"""Render a `ReleaseReport` (`contract diff`, `contract check`) for people (text) and
machines (json); the CI formats live in `contract_ci.py`.

Every renderer reads the same report object and returns a string ending in a newline.
"""

from __future__ import annotations

from typing import Any

from dlt_contract_ops.contracts.model import Locations
from dlt_contract_ops.contracts.release import Assessment, Finding, ReleaseReport
from dlt_contract_ops.output import CONTRACT_FORMATS as FORMATS
from dlt_contract_ops.output import contract_ci as ci
from dlt_contract_ops.output.contract_wording import blocking_reason, bump_phrase, heading
from dlt_contract_ops.output.documents import json_text

__all__ = ["FORMATS", "render"]

REPORT_FORMAT = "dlt-contract-ops/contract-report@1"

def render(report: ReleaseReport, fmt: str, locations: Locations | None = None) -> str:
    """`report` in `fmt` (one of FORMATS)."""
    if fmt == "text":
        return to_text(report)
    if fmt == "json":
        return to_json(report)
    if fmt == "junit":
        return ci.to_junit(report)
    if fmt == "github":
        return ci.to_github(report, locations or {})
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _marker(f: Finding) -> str:
    if f.blocking:
        return "✗"
    if f.waived:
        return "~"
    return "·"


def _table(findings: tuple[Finding, ...]) -> list[str]:
    rows = [
        (_marker(f), f.severity.value, f.change.rule_id, f.change.subject, f.change.evidence)
        for f in findings
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(1, 4)]
    lines = []
    for f, (mark, sev, rule, subject, evidence) in zip(findings, rows, strict=True):
        lines.append(
            f"  {mark} {sev:<{widths[0]}}  {rule:<{widths[1]}}  {subject:<{widths[2]}}  "
            f"{evidence}".rstrip()
        )
        if f.waiver is not None:
            state = "EXPIRED on" if f.waiver_expired else "waived until"
            lines.append(f"      {state} {f.waiver.expires.isoformat()}: {f.waiver.reason}")
    return lines


def _assessment_text(a: Assessment, kind: str) -> list[str]:
    mode = "schema-only" if a.schema_only else "semantic"
    lines = [f"Contract {kind} {heading(a, kind)}  ({mode} diff, {a.perspective} perspective)"]
    if a.old_version is None:
        lines += [f"  ! {n}" for n in a.notes]
        return [*lines, "Verdict: READY (first release)"]
    if a.findings:
        lines += _table(a.findings)
    else:
        lines.append("  ✓ no contract changes")
    lines.append(f"Bump: {bump_phrase(a)}")
    if a.ready:
        lines.append("Verdict: READY")
    else:
        offending = a.offending
        head = f"Verdict: BLOCKED — {len(offending)} change(s) exceed the declared bump"
        lines.append(head if offending else "Verdict: BLOCKED")
        for f in offending:
            lines.append(f"  ✗ {f.change.rule_id} {f.change.subject}: {blocking_reason(f, a)}")
    view = a.schema_only_view
    if view is not None and a.findings:
        verdict = "READY" if view.ready else "BLOCKED"
        lines.append(
            f"Schema-only view: a names-and-types diff sees {view.visible} of "
            f"{len(a.findings)} change(s), requires {view.required.label}, and would call "
            f"this release {verdict}."
        )
    lines += [f"  ! {n}" for n in a.notes]
    return lines


def to_text(report: ReleaseReport) -> str:
    """The report for a terminal or a CI log."""
    lines: list[str] = []
    for a in report.assessments:
        lines += _assessment_text(a, report.kind)
        lines.append("")
    if len(report.assessments) > 1:
        blocked = ", ".join(str(v) for v in report.blocked_versions)
        tail = f" — breaks {blocked}" if blocked else ""
        lines.append(f"Overall: {report.verdict}{tail}")
    lines += [f"! {n}" for n in report.notes]
    return "\n".join(lines).rstrip() + "\n"


def _finding_document(f: Finding) -> dict[str, Any]:
    c = f.change
    waiver = None
    if f.waiver is not None:
        waiver = {
            "reason": f.waiver.reason,
            "expires": f.waiver.expires.isoformat(),
            "expired": f.waiver_expired,
            "where": f.waiver.where,
        }
    return {
        "rule": c.rule_id,
        "title": c.rule.title,
        "severity": f.severity.value,
        "bump": f.severity.bump.label,
        "structural": c.rule.structural,
        "resource": c.resource,
        "column": c.column,
        "old": c.old,
        "new": c.new,
        "detail": c.detail,
        "message": c.message,
        "blocking": f.blocking,
        "waived": f.waived,
        "waiver": waiver,
    }


def assessment_document(a: Assessment) -> dict[str, Any]:
    """One assessment as a JSON-ready dict."""
    view = a.schema_only_view
    return {
        "source": a.source,
        "old_version": None if a.old_version is None else str(a.old_version),
        "new_version": str(a.new_version),
        "perspective": a.perspective,
        "schema_only": a.schema_only,
        "verdict": a.verdict,
        "required_bump": a.required.label,
        "declared_bump": None if a.declared is None else a.declared.label,
        "changes": [_finding_document(f) for f in a.findings],
        "offending": [
            {"rule": f.change.rule_id, "resource": f.change.resource, "column": f.change.column}
            for f in a.offending
        ],
        "schema_only_view": None
        if view is None
        else {"visible": view.visible, "required_bump": view.required.label,
              "verdict": "READY" if view.ready else "BLOCKED"},
        "notes": list(a.notes),
    }


def to_json(report: ReleaseReport) -> str:
    """The report as JSON (stable key order, for machines and golden files)."""
    doc = {
        "format": REPORT_FORMAT,
        "kind": report.kind,
        "verdict": report.verdict,
        "blocked_versions": [str(v) for v in report.blocked_versions],
        "assessments": [assessment_document(a) for a in report.assessments],
        "notes": list(report.notes),
    }
    return json_text(doc) + "\n"
