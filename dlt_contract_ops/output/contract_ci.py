"""CI-native renderings of a `ReleaseReport`: JUnit XML and GitHub Actions annotations, written
by the one JUnit writer (`output.junit`) and workflow-command escaper (`output.github`).

JUnit: one test suite per assessment, one test case per change (a blocking change fails, a
waived one is skipped) plus a `version bump` case that fails when the release is BLOCKED.
GitHub: one workflow command per change (`::error` blocks, `::warning` is waived, `::notice`
is everything else) and a final verdict line.
"""

from __future__ import annotations

from dlt_contract_ops.contracts.model import Locations
from dlt_contract_ops.contracts.release import Assessment, Finding, ReleaseReport
from dlt_contract_ops.output.contract_wording import blocking_reason, bump_phrase, heading
from dlt_contract_ops.output.github import command
from dlt_contract_ops.output.junit import Case, Outcome, Suite, junit_document


def _finding_case(a: Assessment, f: Finding) -> Case:
    c = f.change
    name = f"{c.rule_id} {c.column}" if c.column is not None else c.rule_id
    classname = f"{a.source}.{c.resource}"
    text = f"{f.severity.value}: {c.message}"
    if f.blocking:
        failure = Outcome(f.severity.value, c.message, f"{text}\n{blocking_reason(f, a)}")
        return Case(classname, name, failure=failure)
    if f.waived and f.waiver is not None:
        return Case(classname, name, skipped=(
            f"waived until {f.waiver.expires.isoformat()}: {f.waiver.reason}"
        ))
    return Case(classname, name, out=text)


def _bump_case(a: Assessment) -> Case:
    if a.old_version is None:
        return Case(a.source, "version bump", out="\n".join(a.notes))
    if a.ready:
        return Case(a.source, "version bump", out=f"READY: {bump_phrase(a)}")
    return Case(a.source, "version bump", failure=Outcome(
        "BLOCKED",
        f"BLOCKED: {bump_phrase(a)}",
        "\n".join([f"{f.change.rule_id} {f.change.subject}: {blocking_reason(f, a)}"
                   for f in a.offending] + list(a.notes)),
    ))


def to_junit(report: ReleaseReport) -> str:
    """The report as JUnit XML, which CI systems show as test results."""
    suites = [
        Suite(
            f"contract {heading(a, report.kind)}",
            (*(_finding_case(a, f) for f in a.findings), _bump_case(a)),
        )
        for a in report.assessments
    ]
    return junit_document(f"dlt-contract-ops contract {report.kind}", suites)


def to_github(report: ReleaseReport, locations: Locations) -> str:
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
                lines.append(command("error", title, f"{message} — {blocking_reason(f, a)}",
                                     file=where))
            elif f.waived and f.waiver is not None:
                lines.append(command(
                    "warning", title,
                    f"{message} — waived until {f.waiver.expires.isoformat()}: "
                    f"{f.waiver.reason}", file=where,
                ))
            else:
                lines.append(command("notice", title, message, file=where))
        if a.old_version is None:
            lines.append(command("notice", f"contract READY {a.source}", " ".join(a.notes)))
            continue
        level = "notice" if a.ready else "error"
        summary = f"{heading(a, report.kind)} {bump_phrase(a)}"
        if a.notes:
            summary += "\n" + "\n".join(a.notes)
        lines.append(command(level, f"contract {a.verdict} {a.source}", summary))
    for note in report.notes:
        lines.append(command("notice", "contract note", note))
    return "\n".join(lines) + "\n"
