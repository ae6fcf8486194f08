"""`reconcile --format junit`: one suite per source, one case per detector, valid XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.output.junit import to_junit
from dlt_contract_ops.output.text import text_name
from tests.formats.conftest import declare_broken, finding_count
from tests.projects import Project


def test_one_suite_per_source_one_case_per_detector(results: list[ReconcileResult]) -> None:
    root = ET.fromstring(to_junit(results))
    sources = list(dict.fromkeys(r.source for r in results))
    assert [s.get("name") for s in root.iter("testsuite")] == sources
    for suite in root.iter("testsuite"):
        blocks = [r for r in results if r.source == suite.get("name")]
        assert [c.get("name") for c in suite.iter("testcase")] == [
            f"{r.source}.{r.detector}" for r in blocks
        ]
        assert suite.get("tests") == str(len(blocks))
        assert suite.get("failures") == str(sum(1 for r in blocks if r.findings))
        assert suite.get("errors") == str(sum(1 for r in blocks if r.error))
    assert root.get("failures") == str(sum(1 for r in results if r.findings))


def test_a_failure_names_every_drifted_table_and_column(results: list[ReconcileResult]) -> None:
    root = ET.fromstring(to_junit(results))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert finding_count(results) >= 4  # additive on three sources, removal on events
    for r in results:
        case = cases[f"{r.source}.{r.detector}"]
        failure = case.find("failure")
        if not r.findings:
            assert failure is None
            continue
        assert failure is not None
        message = failure.get("message") or ""
        for f in r.findings:
            assert f"`{f.table}`" in message
            assert all(text_name(c) in message for c in f.columns), (message, f.columns)
            if f.reproduce:
                assert f.reproduce in (failure.text or "")


def test_an_errored_source_is_an_error_case(results: list[ReconcileResult]) -> None:
    root = ET.fromstring(to_junit(results))
    [suite] = [s for s in root.iter("testsuite") if s.get("name") == "nope"]
    [case] = suite.iter("testcase")
    error = case.find("error")
    assert error is not None
    assert "Unknown source `nope`" in (error.get("message") or "")
    assert suite.get("errors") == "1"


def test_characters_xml_cannot_carry_are_escaped() -> None:
    # a column name may hold a control character; XML 1.0 cannot, not even as a reference
    finding = DriftFinding(
        drift_type="additive", source="s", resource="r", table="t", columns=["bell\x07 <&>"]
    )
    document = to_junit([ReconcileResult(source="s", findings=[finding])])
    failure = ET.fromstring(document).find(".//failure")
    assert failure is not None
    assert "bell\\u0007 <&>" in (failure.get("message") or "")


def test_cli_writes_junit_to_output_with_the_usual_exit_code(drifted: Project) -> None:
    out = drifted.root / "drift.xml"
    declare_broken(drifted)
    proc = drifted.cli("reconcile", "-s", "shop", "-s", "nope", "--dry-run",
                       "--format", "junit", "--output", str(out))
    assert proc.returncode == 1, proc.stderr  # a source errored
    assert proc.stdout == ""
    names = [c.get("name") for c in ET.parse(out).getroot().iter("testcase")]
    assert "shop.additive" in names
    assert "nope.additive" in names
