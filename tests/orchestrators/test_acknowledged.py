"""An acknowledged finding (recorded with the real `ack` command) is reported by every
consumer and fails none: the Airflow task, the CI formats and the HTML report (the Dagster
check is in test_dagster_checks.py). Each reads `ReconcileResult.failing_findings`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from tests.orchestrators.conftest import ACK_BY, ACK_REASON, cli, load_example

airflow_dag = load_example("airflow_dag")
SARIF_SCHEMA = Path(__file__).parents[1] / "formats" / "sarif-schema-2.1.0.json"


def test_the_airflow_task_does_not_fail_on_an_acknowledged_finding(acked_project: Path) -> None:
    document = airflow_dag.reconcile_task(acked_project, True, sources=["shop_extra"])
    # still reported, counted apart from the drift that fails
    assert document["summary"]["findings"] == 1
    assert document["summary"]["acknowledged"] == 1
    (finding,) = [f for r in document["results"] for f in r["findings"]]
    assert finding["ack"]["by"] == ACK_BY


def test_the_airflow_task_still_fails_on_the_unacknowledged_rest(acked_project: Path) -> None:
    with pytest.raises(airflow_dag.ContractCheckFailed, match=r"^2 drift finding\(s\): ") as got:
        airflow_dag.reconcile_task(acked_project, True, sources=["shop", "shop_extra"])
    assert "refunds" not in str(got.value)


def _reconcile(root: Path, fmt: str) -> str:
    return cli(root, "reconcile", "-s", "shop_extra", "--dry-run", "--format", fmt)


def test_junit_passes_the_case_and_names_the_acknowledgement(acked_project: Path) -> None:
    root = ET.fromstring(_reconcile(acked_project, "junit"))
    assert root.get("failures") == "0"
    (case,) = [c for c in root.iter("testcase") if c.get("name") == "shop_extra.additive"]
    assert case.find("failure") is None
    out = case.findtext("system-out") or ""
    assert "acknowledged until " in out
    assert f"by {ACK_BY}: {ACK_REASON}" in out
    assert "`refunds`" in out


def test_github_writes_a_notice_not_a_warning(acked_project: Path) -> None:
    (line,) = _reconcile(acked_project, "github").splitlines()
    assert line.startswith("::notice title=acknowledged additive drift in shop_extra.refunds::")
    assert f"by {ACK_BY}: {ACK_REASON}" in line


def test_sarif_marks_the_result_suppressed_at_note_level(acked_project: Path) -> None:
    log = json.loads(_reconcile(acked_project, "sarif"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    (result,) = log["runs"][0]["results"]
    assert result["level"] == "note"
    (suppression,) = result["suppressions"]
    assert suppression["kind"] == "external"
    assert suppression["status"] == "accepted"
    assert suppression["justification"] == ACK_REASON
    assert suppression["properties"]["by"] == ACK_BY


def test_the_html_report_shows_the_acknowledgement(acked_project: Path, tmp_path: Path) -> None:
    page_file = tmp_path / "report.html"
    cli(acked_project, "report", "--html", str(page_file), "-s", "shop_extra")
    page = page_file.read_text(encoding="utf-8")
    assert '<span class="badge acknowledged">acknowledged</span>' in page
    assert f"by <code>{ACK_BY}</code>" in page
    assert "refunds.reason_code is expected" in page
    assert "1 finding(s) (1 acknowledged)" in page
