"""Render a `LintReport` in the formats `contract check` speaks: text, json, junit, github.

Every renderer reads the same report and returns a string ending in a newline.
"""

from __future__ import annotations

from typing import Any

from dlt_contract_ops.contracts.lint import LintFinding, LintReport
from dlt_contract_ops.contracts.model import Locations
from dlt_contract_ops.output import CONTRACT_FORMATS as FORMATS
from dlt_contract_ops.output.documents import json_text
from dlt_contract_ops.output.github import command
from dlt_contract_ops.output.junit import Case, Outcome, Suite, junit_document

LINT_FORMAT = "dlt-contract-ops/contract-lint@1"
_MARK = {"error": "✗", "warning": "!"}


def render_lint(report: LintReport, fmt: str, locations: Locations | None = None) -> str:
    """`report` in `fmt` (one of FORMATS)."""
    if fmt == "text":
        return lint_text(report)
    if fmt == "json":
        return lint_json(report)
    if fmt == "junit":
        return lint_junit(report)
    if fmt == "github":
        return lint_github(report, locations or {})
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _summary(report: LintReport) -> str:
    errors, warnings = len(report.errors), len(report.warnings)
    return f"{report.verdict} — {errors} error(s), {warnings} warning(s)"


def lint_text(report: LintReport) -> str:
    lines = [
        f"Contract lint {report.source}  ({report.resources} resource(s), "
        f"{report.columns} column(s))"
    ]
    rows = [(f.level, f.rule_id, f.subject) for f in report.findings]
    if rows:
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        for f, (level, rule, subject) in zip(report.findings, rows, strict=True):
            lines.append(f"  {_MARK[level]} {level:<{widths[0]}}  {rule:<{widths[1]}}  "
                         f"{subject:<{widths[2]}}  {f.rule.title}")
            lines.append(f"      {f.fix}")
    else:
        lines.append("  ✓ no findings")
    lines.append(f"Verdict: {_summary(report)}")
    lines += [f"! {n}" for n in report.notes]
    return "\n".join(lines) + "\n"


def _finding_document(f: LintFinding) -> dict[str, Any]:
    return {
        "rule": f.rule_id,
        "title": f.rule.title,
        "level": f.level,
        "resource": f.resource,
        "column": f.column,
        "message": f.message,
    }


def lint_json(report: LintReport) -> str:
    doc = {
        "format": LINT_FORMAT,
        "source": report.source,
        "verdict": report.verdict,
        "resources": report.resources,
        "columns": report.columns,
        "errors": len(report.errors),
        "warnings": len(report.warnings),
        "levels": dict(report.levels),
        "findings": [_finding_document(f) for f in report.findings],
        "notes": list(report.notes),
    }
    return json_text(doc) + "\n"


def lint_junit(report: LintReport) -> str:
    """One test case per finding (an error fails, a warning passes with its text) plus a
    `lint` case that fails when any error was found."""
    cases = []
    for f in report.findings:
        name = f"{f.rule_id} {f.column}" if f.column is not None else f.rule_id
        classname = f"{report.source}.{f.resource}"
        if f.level == "error":
            cases.append(Case(classname, name, failure=Outcome("error", f.rule.title, f.message)))
        else:
            cases.append(Case(classname, name, out=f"warning: {f.message}"))
    if report.failed:
        cases.append(Case(report.source, "lint", failure=Outcome("FAILED", _summary(report))))
    else:
        cases.append(Case(report.source, "lint", out=_summary(report)))
    suite = Suite(f"contract lint {report.source}", tuple(cases))
    return junit_document("dlt-contract-ops contract lint", [suite])


def lint_github(report: LintReport, locations: Locations) -> str:
    """`::error` / `::warning` per finding, at the field's line when known, and a verdict."""
    lines = []
    for f in report.findings:
        where = locations.get((f.resource, f.column)) or locations.get((f.resource, None))
        lines.append(command(f.level, f"{f.rule_id} {f.subject}", f.message, file=where))
    level = "error" if report.failed else "notice"
    lines.append(command(level, f"contract lint {report.verdict} {report.source}",
                         _summary(report)))
    lines += [command("notice", "contract lint note", n) for n in report.notes]
    return "\n".join(lines) + "\n"
