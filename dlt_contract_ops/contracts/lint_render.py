"""Render a `LintReport` in the formats `contract check` speaks: text, json, junit, github.

Every renderer reads the same report and returns a string ending in a newline.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

# the GitHub workflow-command writer (escaping included) is shared with `check`'s annotations
from dlt_contract_ops.contracts.ci import _command
from dlt_contract_ops.contracts.lint import LintFinding, LintReport
from dlt_contract_ops.contracts.wording import Locations

LINT_FORMAT = "dlt-contract-ops/contract-lint@1"
FORMATS = ("text", "json", "junit", "github")
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
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def lint_junit(report: LintReport) -> str:
    """One test case per finding (an error fails, a warning passes with its text) plus a
    `lint` case that fails when any error was found."""
    root = ET.Element("testsuites", {"name": "dlt-contract-ops contract lint"})
    suite = ET.SubElement(root, "testsuite", {"name": f"contract lint {report.source}"})
    for f in report.findings:
        name = f"{f.rule_id} {f.column}" if f.column is not None else f.rule_id
        case = ET.SubElement(suite, "testcase", {
            "classname": f"{report.source}.{f.resource}", "name": name, "time": "0",
        })
        if f.level == "error":
            ET.SubElement(case, "failure", {"type": "error", "message": f.rule.title}).text = (
                f.message
            )
        else:
            ET.SubElement(case, "system-out").text = f"warning: {f.message}"
    verdict = ET.SubElement(suite, "testcase", {
        "classname": report.source, "name": "lint", "time": "0",
    })
    if report.failed:
        ET.SubElement(verdict, "failure", {"type": "FAILED", "message": _summary(report)})
    else:
        ET.SubElement(verdict, "system-out").text = _summary(report)
    counts = {"tests": str(len(report.findings) + 1),
              "failures": str(len(report.errors) + (1 if report.failed else 0)),
              "errors": "0", "skipped": "0"}
    suite.attrib.update(counts)
    root.attrib.update(counts)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def lint_github(report: LintReport, locations: Locations) -> str:
    """`::error` / `::warning` per finding, at the field's line when known, and a verdict."""
    lines = []
    for f in report.findings:
        where = locations.get((f.resource, f.column)) or locations.get((f.resource, None))
        lines.append(_command(f.level, f"{f.rule_id} {f.subject}", f.message, where))
    level = "error" if report.failed else "notice"
    lines.append(_command(level, f"contract lint {report.verdict} {report.source}",
                          _summary(report), None))
    lines += [_command("notice", "contract lint note", n, None) for n in report.notes]
    return "\n".join(lines) + "\n"
