"""Each finding's severity: its detector's default (`Detector.severity`), unless the
project's `[contract_ops.severity]` or the source's `[sources.<X>.contract_ops.severity]`
names another (`settings.severity`). A detector that grades a finding itself (sets its
`severity`) keeps its grade unless the configuration names the detector.
"""

from __future__ import annotations

from dlt_contract_ops.detectors.registry import get
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.model.severity import Severity, as_severity
from dlt_contract_ops.settings.severity import severity_overrides


def _own(finding: DriftFinding) -> Severity:
    """The grade its detector gave it, else the detector's default."""
    if "severity" in finding.model_fields_set:
        return finding.severity
    return as_severity(get(finding.drift_type).severity)


def severity_of(finding: DriftFinding, source: str) -> Severity:
    """The severity of `finding` of the source whose settings table is `[sources.<source>...]`."""
    return severity_overrides(source).get(finding.drift_type) or _own(finding)


def graded(result: ReconcileResult, source: str) -> ReconcileResult:
    """`result` with each finding's severity set (`severity_of`)."""
    if not result.findings:
        return result
    overrides = severity_overrides(source)
    findings = [
        f.model_copy(update={"severity": overrides.get(f.drift_type) or _own(f)})
        for f in result.findings
    ]
    return result.model_copy(update={"findings": findings})
