"""JUnit XML: the one writer of every JUnit document, and the reconcile's.

`junit_document` writes suites of `Case` values (`contract diff/check/lint --format junit`
build theirs in `contracts`). The reconcile's document: one test suite per source, one test
case per detector. A test case is named `<source>.<detector>`; it fails (`<failure>`) when
the detector found drift, naming the tables and columns, and errs (`<error>`) when the
detector or the source errored. A finding of severity `info` does not fail its case, nor does
an acknowledged one: both are listed in the case's `<system-out>` (an acknowledged one with
who acknowledged it, why and until when). CI systems show the document as test results.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the contracts' writers use this module: no pydantic at import time
    from dlt_contract_ops.model.findings import ReconcileResult

#: characters XML 1.0 cannot carry at all, escaped or not (a column name may hold them)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(text: str) -> str:
    r"""`text` with the characters XML 1.0 forbids written as `\uXXXX`.

    >>> xml_text("a\x01b")
    'a\\u0001b'
    """
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True)
class Outcome:
    """A `<failure>` or `<error>` of a case: its `type`, `message` and text (None: none)."""

    type: str
    message: str
    text: str | None = None


@dataclass(frozen=True)
class Case:
    """One `<testcase>`: failed, errored, skipped (the reason) and its `<system-out>`."""

    classname: str
    name: str
    seconds: float = 0.0
    failure: Outcome | None = None
    error: Outcome | None = None
    skipped: str | None = None
    out: str | None = None  # None: no `<system-out>`; "" an empty one


@dataclass(frozen=True)
class Suite:
    name: str
    cases: tuple[Case, ...]


def junit_document(name: str, suites: Sequence[Suite], *, timed: bool = False) -> str:
    """The JUnit XML of `suites` under `<testsuites name=...>`, counts from the cases.

    `timed`: each case's `time` in seconds (`0.0000`) and each suite's and the root's sum;
    else every case's `time` is `0` and suites carry none. Every text passes `xml_text`.

    >>> doc = junit_document("x", [Suite("s", (Case("c", "n", failure=Outcome("t", "m")),))])
    >>> print(doc.splitlines()[2].strip())
    <testsuite name="s" tests="1" failures="1" errors="0" skipped="0">
    """
    root = ET.Element("testsuites", {"name": xml_text(name)})
    for s in suites:
        suite = ET.SubElement(root, "testsuite", {"name": xml_text(s.name)})
        for c in s.cases:
            _write_case(suite, c, timed)
        suite.attrib.update(_counts(s.cases, timed))
    root.attrib.update(_counts([c for s in suites for c in s.cases], timed))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _write_case(suite: ET.Element, c: Case, timed: bool) -> None:
    case = ET.SubElement(suite, "testcase", {
        "classname": xml_text(c.classname),
        "name": xml_text(c.name),
        "time": f"{c.seconds:.4f}" if timed else "0",
    })
    for tag, outcome in (("failure", c.failure), ("error", c.error)):
        if outcome is not None:
            element = ET.SubElement(
                case, tag, {"type": xml_text(outcome.type), "message": xml_text(outcome.message)}
            )
            if outcome.text is not None:
                element.text = xml_text(outcome.text)
    if c.skipped is not None:
        ET.SubElement(case, "skipped", {"message": xml_text(c.skipped)})
    if c.out is not None:
        ET.SubElement(case, "system-out").text = xml_text(c.out)


def _counts(cases: Sequence[Case], timed: bool) -> dict[str, str]:
    counts = {
        "tests": str(len(cases)),
        "failures": str(sum(1 for c in cases if c.failure is not None)),
        "errors": str(sum(1 for c in cases if c.error is not None)),
        "skipped": str(sum(1 for c in cases if c.skipped is not None)),
    }
    if timed:
        counts["time"] = f"{sum(c.seconds for c in cases):.4f}"
    return counts


def _case(r: ReconcileResult) -> Case:
    from dlt_contract_ops.model.findings import by_severity
    from dlt_contract_ops.output.text import text_name
    from dlt_contract_ops.output.wording import acknowledgement, columns_phrase, summary

    failure = None
    failing = by_severity(r.failing_at("warning"))  # an `info` finding is no failure
    if failing:
        tables = "; ".join(
            f"`{text_name(f.table)}`: {columns_phrase(f)}" for f in failing
        )
        lines = []
        for f in failing:
            lines.append(summary(f))
            if f.reproduce:
                lines.append(f"  reproduce: {f.reproduce}")
        failure = Outcome(
            f"{r.detector} drift", f"{len(failing)} drifted table(s): {tables}", "\n".join(lines)
        )
    error = Outcome(r.error_kind or "error", r.error, r.error) if r.error else None
    out = [f"{acknowledgement(f)}: {summary(f)}" for f in r.findings if f.acknowledged]
    out += [f"info: {summary(f)}" for f in r.failing_findings if f.severity == "info"]
    return Case(
        r.source,
        f"{r.source}.{r.detector}",
        r.duration_s,
        failure=failure,
        error=error,
        out="\n".join([*out, *r.notes]) if r.notes or out else None,
    )


def to_junit(results: Sequence[ReconcileResult]) -> str:
    """The results as JUnit XML (`reconcile --format junit`).

    >>> from dlt_contract_ops.model.findings import ReconcileResult
    >>> print(to_junit([ReconcileResult(source="shop")]).splitlines()[2].strip())
    <testsuite name="shop" tests="1" failures="0" errors="0" skipped="0" time="0.0000">
    """
    by_source: dict[str, list[ReconcileResult]] = {}
    for r in results:
        by_source.setdefault(r.source, []).append(r)
    suites = [Suite(source, tuple(_case(r) for r in rs)) for source, rs in by_source.items()]
    return junit_document("dlt-contract-ops reconcile", suites, timed=True)
