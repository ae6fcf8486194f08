"""CI-native renderings of a `GateReport`: JUnit XML and GitHub Actions annotations.

JUnit: one test suite per assessment, one test case per change (a blocking change fails, a
waived one is skipped) plus a `version bump` case that fails when the release is BLOCKED.
GitHub: one workflow command per change (`::error` blocks, `::warning` is waived, `::notice`
is everything else) and a final verdict line.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from dlt_contract_ops.contracts.release import Assessment, Finding, GateReport
from dlt_contract_ops.contracts.wording import Locations, blocking_reason, bump_phrase, heading


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", {"classname": classname, "name": name, "time": "0"})


def _finding_case(suite: ET.Element, a: Assessment, f: Finding) -> None:
    c = f.change
    name = f"{c.rule_id} {c.column}" if c.column is not None else c.rule_id
    case = _case(suite, f"{a.source}.{c.resource}", name)
    text = f"{f.severity.value}: {c.message}"
    if f.blocking:
        failure = ET.SubElement(
            case, "failure", {"type": f.severity.value, "message": f"{c.message}"}
        )
        failure.text = f"{text}\n{blocking_reason(f, a)}"
    elif f.waived and f.waiver is not None:
        ET.SubElement(
            case,
            "skipped",
            {"message": f"waived until {f.waiver.expires.isoformat()}: {f.waiver.reason}"},
        )
    else:
        ET.SubElement(case, "system-out").text = text


def to_junit(report: GateReport) -> str:
    """The report as JUnit XML, which CI systems show as test results."""
    root = ET.Element("testsuites", {"name": f"dlt-contract-ops contract {report.kind}"})
    total = failures = skipped = 0
    for a in report.assessments:
        suite = ET.SubElement(root, "testsuite", {"name": f"contract {heading(a, report.kind)}"})
        for f in a.findings:
            _finding_case(suite, a, f)
        bump = _case(suite, f"{a.source}", "version bump")
        if a.old_version is None:
            ET.SubElement(bump, "system-out").text = "\n".join(a.notes)
        elif a.ready:
            ET.SubElement(bump, "system-out").text = f"READY: {bump_phrase(a)}"
        else:
            failure = ET.SubElement(
                bump, "failure", {"type": "BLOCKED", "message": f"BLOCKED: {bump_phrase(a)}"}
            )
            failure.text = "\n".join(
                [f"{f.change.rule_id} {f.change.subject}: {blocking_reason(f, a)}"
                 for f in a.offending] + list(a.notes)
            )
        cases = len(a.findings) + 1
        fails = len(a.offending) + (0 if a.ready else 1)
        skips = sum(1 for f in a.findings if f.waived)
        suite.attrib.update(
            {"tests": str(cases), "failures": str(fails), "errors": "0", "skipped": str(skips)}
        )
        total, failures, skipped = total + cases, failures + fails, skipped + skips
    root.attrib.update(
        {"tests": str(total), "failures": str(failures), "errors": "0", "skipped": str(skipped)}
    )
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(level: str, title: str, message: str, where: tuple[str, int] | None) -> str:
    props = []
    if where is not None:
        props += [f"file={_escape_property(where[0])}", f"line={where[1]}"]
    props.append(f"title={_escape_property(title)}")
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


def to_github(report: GateReport, locations: Locations) -> str:
    """The report as GitHub Actions workflow commands (annotations on the run and the PR).

    `locations` points an annotation at the model's source line when it is known.
    """
    lines: list[str] = []
    for a in report.assessments:
        for f in a.findings:
            c = f.change
            where = locations.get((c.resource, c.column)) or locations.get((c.resource, None))
            title = f"{c.rule_id} {c.subject} ({f.severity.value})"
            message = f"{heading(a, report.kind)}: {c.message}"
            if f.blocking:
                lines.append(_command("error", title, f"{message} — {blocking_reason(f, a)}",
                                      where))
            elif f.waived and f.waiver is not None:
                lines.append(_command(
                    "warning", title,
                    f"{message} — waived until {f.waiver.expires.isoformat()}: "
                    f"{f.waiver.reason}", where,
                ))
            else:
                lines.append(_command("notice", title, message, where))
        if a.old_version is None:
            lines.append(_command("notice", f"contract READY {a.source}", " ".join(a.notes),
                                  None))
            continue
        level = "notice" if a.ready else "error"
        summary = f"{heading(a, report.kind)} {bump_phrase(a)}"
        if a.notes:
            summary += "\n" + "\n".join(a.notes)
        lines.append(_command(level, f"contract {a.verdict} {a.source}", summary, None))
    for note in report.notes:
        lines.append(_command("notice", "contract note", note, None))
    return "\n".join(lines) + "\n"
