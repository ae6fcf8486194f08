"""Severities as values and how a finding gets one: a case table of the order, of the
failing findings at a threshold, and of the grade a run gives (default, a detector's own
grade, the project's and the source's tables)."""

from __future__ import annotations

from typing import Any

import pytest

from dlt_contract_ops.detectors.severity import graded
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult, by_severity
from dlt_contract_ops.model.severity import SEVERITIES, Severity, as_severity, at_least
from dlt_contract_ops.settings import project_context
from tests.projects import Project


def _finding(drift_type: str = "additive", **extra: Any) -> DriftFinding:
    return DriftFinding(drift_type=drift_type, source="shop", resource="r", table=drift_type,
                        columns=["c"], **extra)


@pytest.mark.parametrize(("severity", "threshold", "fails"), [
    ("error", "error", True), ("error", "warning", True), ("error", "info", True),
    ("warning", "error", False), ("warning", "warning", True), ("warning", "info", True),
    ("info", "error", False), ("info", "warning", False), ("info", "info", True),
])
def test_at_least(severity: Severity, threshold: Severity, fails: bool) -> None:
    assert at_least(severity, threshold) is fails
    result = ReconcileResult(source="shop", findings=[_finding(severity=severity)])
    assert bool(result.failing_at(threshold)) is fails


def test_an_acknowledged_finding_fails_at_no_severity() -> None:
    acked = _finding(severity="error", ack={"until": "2999-01-01T00:00:00+00:00", "by": "a",
                                            "reason": "known"})
    assert ReconcileResult(source="shop", findings=[acked]).failing_at("info") == []


def test_by_severity_lists_the_worst_first_and_keeps_the_order_within_one() -> None:
    found = [_finding("a1", severity="info"), _finding("w1"), _finding("e1", severity="error"),
             _finding("w2")]
    assert [f.drift_type for f in by_severity(found)] == ["e1", "w1", "w2", "a1"]


@pytest.mark.parametrize("value", ["warn", "ERROR", "", None, 2])
def test_only_the_three_names_are_severities(value: object) -> None:
    with pytest.raises(ValueError, match="use one of error, warning, info"):
        as_severity(value)
    assert [as_severity(s) for s in SEVERITIES] == list(SEVERITIES)


@pytest.mark.parametrize(("config", "expected"), [
    ("", {"additive": "warning", "missing": "error", "type": "info"}),
    ('[contract_ops.severity]\nadditive = "error"\ntype = "warning"\n',
     {"additive": "error", "missing": "error", "type": "warning"}),
    ('[contract_ops.severity]\nadditive = "error"\n'
     '[sources.shop.contract_ops.severity]\nadditive = "info"\nmissing = "warning"\n',
     {"additive": "info", "missing": "warning", "type": "info"}),
])
def test_a_run_grades_from_the_default_the_detectors_own_grade_and_the_tables(
    project: Project, config: str, expected: dict[str, str]
) -> None:
    project.config('[sources.shop.contract_ops]\nref = "m:s"\n' + config)
    # `type` graded by its detector (a detector may grade a finding itself): kept unless
    # a table names `type`
    result = ReconcileResult(source="shop", findings=[
        _finding("additive"), _finding("missing"), _finding("type", severity="info")])
    with project_context(project.root):
        found = graded(result, "shop").findings
    assert {f.drift_type: f.severity for f in found} == expected
