"""The fold of what a finding explains (`Detector.explains`, `detector_runs.explain`) as a case
table: one source's results in, the findings left out. Pure: no warehouse.

`removal` and `rename` declare that their finding explains the `null_rate` metric of its
columns in the `distribution` finding of the same table; only that metric of those columns
moves, another metric or column stays."""

from __future__ import annotations

from typing import Any

import pytest

from dlt_contract_ops.engine.detector_runs import explain
from dlt_contract_ops.model.findings import Coverage, DriftFinding, ReconcileResult
from dlt_contract_ops.model.severity import Severity


def _metric(column: str, metric: str = "null_rate", category: str | None = None) -> dict[str, Any]:
    return {"column": column, "metric": metric, "category": category, "baseline": 0.1,
            "current": 1.0, "change": 0.9}


def _finding(kind: str, columns: list[str], *, table: str = "orders",
             severity: Severity = "error", **details: Any) -> DriftFinding:
    return DriftFinding(drift_type=kind, source="shop", resource=table, table=table,
                        columns=columns, severity=severity, **details)


def dark(*columns: str, table: str = "orders", severity: Severity = "error") -> DriftFinding:
    return _finding("removal", list(columns), table=table, severity=severity,
                    coverage={c: Coverage(baseline=0.9, recent=0.0) for c in columns})


def shifted(*metrics: dict[str, Any], table: str = "orders",
            severity: Severity = "warning") -> DriftFinding:
    return _finding("distribution", sorted({m["column"] for m in metrics}), table=table,
                    severity=severity, metrics=list(metrics))


def renamed(old: str, new: str) -> DriftFinding:
    return _finding("rename", [old, new], renamed_from=old, renamed_to=new, confidence=0.8,
                    components=[{"id": "0a1b2c3d4e5f", "drift_type": "removal",
                                 "columns": [old]}])


def _results(*findings: DriftFinding) -> list[ReconcileResult]:
    by: dict[str, list[DriftFinding]] = {}
    for f in findings:
        by.setdefault(f.drift_type, []).append(f)
    return [ReconcileResult(source="shop", detector=k, findings=v) for k, v in by.items()]


def _seen(results: list[ReconcileResult]) -> list[tuple[str, list[str], list[tuple[str, str]]]]:
    return [(f.drift_type, f.columns, [(m["column"], m["metric"]) for m in f.metrics or []])
            for r in results for f in r.findings]


CASES = [
    ("a dark column's NULL rate folds in; another column's share stays",
     [dark("note"), shifted(_metric("note"), _metric("status", "category_share", "other"))],
     [("removal", ["note"], [("note", "null_rate")]),
      ("distribution", ["status"], [("status", "category_share")])]),
    ("a distribution finding of the folded NULL rate alone is dropped",
     [dark("note"), shifted(_metric("note"))],
     [("removal", ["note"], [("note", "null_rate")])]),
    ("another metric of the same column stays",
     [dark("note"), shifted(_metric("note"), _metric("note", "distinct_count"))],
     [("removal", ["note"], [("note", "null_rate")]),
      ("distribution", ["note"], [("note", "distinct_count")])]),
    ("another column's NULL rate stays",
     [dark("note"), shifted(_metric("code"))],
     [("removal", ["note"], []), ("distribution", ["code"], [("code", "null_rate")])]),
    ("the same column of another table stays",
     [dark("note"), shifted(_metric("note"), table="users")],
     [("removal", ["note"], []), ("distribution", ["note"], [("note", "null_rate")])]),
    ("distribution alone keeps its NULL rate",
     [shifted(_metric("note"))],
     [("distribution", ["note"], [("note", "null_rate")])]),
    ("a rename takes its old column's NULL rate",
     [renamed("order_date", "sale_date"), shifted(_metric("order_date"))],
     [("rename", ["order_date", "sale_date"], [("order_date", "null_rate")])]),
    ("two dark columns of one finding take both",
     [dark("code", "note"), shifted(_metric("code"), _metric("note"))],
     [("removal", ["code", "note"], [("code", "null_rate"), ("note", "null_rate")])]),
]


@pytest.mark.parametrize(("given", "left"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_explain(given: list[DriftFinding], left: list[Any]) -> None:
    assert _seen(explain(_results(*given))) == left


def test_the_folded_finding_names_what_it_took_and_keeps_its_own_components() -> None:
    rename, shift = renamed("order_date", "sale_date"), shifted(_metric("order_date"))
    [[folded]] = [r.findings for r in explain(_results(rename, shift)) if r.findings]
    assert folded.components == [
        *(rename.components or []),
        {"id": shift.id, "drift_type": "distribution", "columns": ["order_date"],
         "metrics": ["null_rate"]},
    ]
    assert (folded.renamed_from, folded.confidence) == ("order_date", 0.8)


@pytest.mark.parametrize(("removal", "distribution", "merged"), [
    ("error", "warning", "error"),
    ("info", "warning", "warning"),
    ("warning", "error", "error"),
    ("info", "info", "info"),
])
def test_the_merged_finding_has_the_higher_severity(
    removal: Severity, distribution: Severity, merged: Severity,
) -> None:
    results = explain(_results(dark("note", severity=removal),
                               shifted(_metric("note"), severity=distribution)))
    [finding] = [f for r in results for f in r.findings]
    assert finding.severity == merged


def test_nothing_to_explain_returns_the_results_as_they_were() -> None:
    given = _results(dark("note"), shifted(_metric("code")))
    assert [r.findings for r in explain(given)] == [r.findings for r in given]
