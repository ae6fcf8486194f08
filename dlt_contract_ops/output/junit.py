"""JUnit XML: one test suite per source, one test case per detector.

A test case is named `<source>.<detector>`; it fails (`<failure>`) when the detector found
drift, naming the tables and columns, and errs (`<error>`) when the detector or the source
errored. An acknowledged finding does not fail its case: it is listed in the case's
`<system-out>` with who acknowledged it, why and until when. CI systems show the document
as test results.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from dlt_contract_ops.model.findings import ReconcileResult
from dlt_contract_ops.output.text import text_name
from dlt_contract_ops.output.wording import acknowledgement, columns_phrase, summary

#: characters XML 1.0 cannot carry at all, escaped or not (a column name may hold them)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(text: str) -> str:
    r"""`text` with the characters XML 1.0 forbids written as `\uXXXX`.

    >>> xml_text("a\x01b")
    'a\\u0001b'
    """
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _case(suite: ET.Element, r: ReconcileResult) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        {
            "classname": xml_text(r.source),
            "name": xml_text(f"{r.source}.{r.detector}"),
            "time": f"{r.duration_s:.4f}",
        },
    )
    failing = r.failing_findings
    if failing:
        tables = "; ".join(
            f"`{text_name(f.table)}`: {columns_phrase(f)}" for f in failing
        )
        failure = ET.SubElement(
            case,
            "failure",
            {
                "type": f"{r.detector} drift",
                "message": xml_text(f"{len(failing)} drifted table(s): {tables}"),
            },
        )
        lines = []
        for f in failing:
            lines.append(summary(f))
            if f.reproduce:
                lines.append(f"  reproduce: {f.reproduce}")
        failure.text = xml_text("\n".join(lines))
    if r.error:
        error = ET.SubElement(
            case, "error", {"type": r.error_kind or "error", "message": xml_text(r.error)}
        )
        error.text = xml_text(r.error)
    out = [f"{acknowledgement(f)}: {summary(f)}" for f in r.findings if f.acknowledged]
    if r.notes or out:
        ET.SubElement(case, "system-out").text = xml_text("\n".join([*out, *r.notes]))


def to_junit(results: Sequence[ReconcileResult]) -> str:
    """The results as JUnit XML (`reconcile --format junit`).

    >>> print(to_junit([ReconcileResult(source="shop")]).splitlines()[2].strip())
    <testsuite name="shop" tests="1" failures="0" errors="0" skipped="0" time="0.0000">
    """
    root = ET.Element("testsuites", {"name": "dlt-contract-ops reconcile"})
    by_source: dict[str, list[ReconcileResult]] = {}
    for r in results:
        by_source.setdefault(r.source, []).append(r)
    for source, blocks in by_source.items():
        suite = ET.SubElement(root, "testsuite", {"name": xml_text(source)})
        for r in blocks:
            _case(suite, r)
        suite.attrib.update(_counts(blocks))
    root.attrib.update(_counts(results))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _counts(results: Sequence[ReconcileResult]) -> dict[str, str]:
    return {
        "tests": str(len(results)),
        "failures": str(sum(1 for r in results if r.failing_findings)),
        "errors": str(sum(1 for r in results if r.error)),
        "skipped": "0",
        "time": f"{sum(r.duration_s for r in results):.4f}",
    }
