"""The distribution detector through real dlt loads into DuckDB."""

from __future__ import annotations

import json
from typing import Any

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from tests.profiles.conftest import load
from tests.projects import Project

STEADY = [{"batch": b} for b in range(6)]


def _sweep(project: Project) -> ReconcileResult:
    [result] = run(["shop"], detectors=("distribution",), dry_run=True, project_dir=project.root)
    assert result.error is None, result.error
    return result


def _metrics(finding: DriftFinding) -> dict[tuple[str, str, str | None], dict[str, Any]]:
    return {(m["column"], m["metric"], m["category"]): m for m in finding.metrics or []}


def test_a_drifted_newest_load_is_found(shop: Project) -> None:
    load(shop, *STEADY, {"batch": 6, "drift": ["other", "note", "code", "region"]})

    [finding] = _sweep(shop).findings
    assert finding.drift_type == "distribution"
    assert finding.table == "orders"
    metrics = _metrics(finding)
    other = metrics["status", "category_share", "other"]
    assert (other["baseline"], other["current"], other["change"]) == (0.0, 0.04, 0.04)
    null = metrics["note", "null_rate", None]
    assert null["baseline"] == 0.1
    assert null["current"] > 0.7
    collapse = metrics["code", "distinct_count", None]
    assert collapse["current"] == 1
    assert collapse["baseline"] > 80
    assert metrics["region", "new_category", "apac"]["baseline"] == 0.0
    assert finding.columns == ["code", "note", "region", "status"]
    assert finding.reproduce
    assert '"_dlt_load_id"' in finding.reproduce


def test_steady_noisy_loads_and_an_idle_table_raise_nothing(shop: Project) -> None:
    load(shop, *STEADY, {"batch": 6})
    first = _sweep(shop)
    assert first.findings == []
    # nothing loaded since: the same profiles, nothing new, nothing raised
    again = _sweep(shop)
    assert again.findings == []


def test_too_short_a_baseline_never_alerts(shop: Project) -> None:
    load(shop, *STEADY[:3], {"batch": 3, "drift": ["other", "code"]})
    result = _sweep(shop)
    assert result.findings == []
    assert any("5 needed" in n for n in result.notes)


def test_cli_flag_json_and_profile_history(shop: Project) -> None:
    load(shop, *STEADY, {"batch": 6, "drift": ["other"]})
    proc = shop.cli("reconcile", "-s", "shop", "--include-distribution", "--dry-run",
                    "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    [result] = [r for r in doc["results"] if r["detector"] == "distribution"]
    [finding] = result["findings"]
    assert {"column": "status", "metric": "category_share", "category": "other",
            "baseline": 0.0, "current": 0.04, "change": 0.04} in finding["metrics"]

    hist = shop.cli("profile", "-s", "shop", "--column", "status", "--format", "json")
    assert hist.returncode == 0, hist.stderr
    rows = json.loads(hist.stdout)["tables"]["orders"]
    assert len(rows) == 7
    assert rows[-1]["categories"]["other"] == 0.04
    text = shop.cli("profile", "-s", "shop", "--table", "orders")
    assert "Table: orders  |  loads: 7" in text.stdout

    rebuilt = shop.cli("profiles", "rebuild", "-s", "shop")
    assert rebuilt.returncode == 0
    assert "Dropped 7 load profile(s)" in rebuilt.stdout
