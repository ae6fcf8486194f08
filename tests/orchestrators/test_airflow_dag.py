"""The Airflow example's task functions, run as plain Python against the DuckDB shop project.
Airflow itself is not installed for the tests: the module must import without it."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from dlt_contract_ops.detectors.registry import selected
from tests.orchestrators.conftest import GHOST, load_example

airflow_dag = load_example("airflow_dag")
HAVE_AIRFLOW = importlib.util.find_spec("airflow") is not None


@pytest.mark.skipif(HAVE_AIRFLOW, reason="Airflow is installed here")
def test_imports_without_airflow() -> None:
    assert airflow_dag.DAG is None
    assert "airflow" not in sys.modules
    assert issubclass(airflow_dag.ContractCheckFailed, RuntimeError)


def test_lists_the_declared_sources(project_dir: Path) -> None:
    assert airflow_dag.declared_source_names(project_dir) == sorted(
        [GHOST, "shop", "shop_clean", "shop_extra"]
    )


def test_clean_source_returns_an_xcom_safe_document(project_dir: Path) -> None:
    document = airflow_dag.reconcile_task(project_dir, fail_on_drift=True, sources=["shop_clean"])
    assert document["summary"] == {
        "findings": 0, "acknowledged": 0, "by_detector": {},
        "by_severity": {"error": 0, "warning": 0, "info": 0}, "tables": [], "errors": []
    }
    assert [r["detector"] for r in document["results"]] == list(selected())
    assert json.loads(json.dumps(document)) == document


def test_drift_is_returned_unless_asked_to_fail(project_dir: Path) -> None:
    document = airflow_dag.reconcile_task(project_dir, sources=["shop", "shop_extra"])
    assert document["summary"] == {
        "findings": 3,
        "acknowledged": 0,
        "by_detector": {"additive": 3},
        "by_severity": {"error": 0, "warning": 3, "info": 0},
        "tables": ["order_items", "plain_tbl", "refunds"],
        "errors": [],
    }
    columns = {f["table"]: f["columns"] for r in document["results"] for f in r["findings"]}
    assert columns["refunds"] == ["reason_code"]
    assert json.loads(json.dumps(document)) == document


def test_drift_fails_the_task_when_asked(project_dir: Path) -> None:
    with pytest.raises(airflow_dag.ContractCheckFailed) as caught:
        airflow_dag.reconcile_task(project_dir, True, sources=["shop"])
    message = str(caught.value)
    assert message.startswith('2 drift finding(s): `order_items` (additive: Weird "Name", ')
    assert "`plain_tbl` (additive: extra_col)" in message
    assert caught.value.document["summary"]["tables"] == ["order_items", "plain_tbl"]


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        pytest.param([GHOST], "database does not exist", id="dataset-never-loaded"),
        pytest.param(["nope"], "Unknown source `nope`", id="unknown-source"),
    ],
)
def test_reconciler_errors_fail_the_task(
    project_dir: Path, sources: list[str], expected: str
) -> None:
    with pytest.raises(airflow_dag.ContractCheckFailed, match=r"^reconciler error: ") as caught:
        airflow_dag.reconcile_task(project_dir, sources=sources)
    assert expected in str(caught.value)
    (error,) = caught.value.document["summary"]["errors"]
    assert error.startswith(f"{sources[0]} (additive): ")


def test_an_error_fails_the_task_even_with_drift_elsewhere(project_dir: Path) -> None:
    with pytest.raises(airflow_dag.ContractCheckFailed) as caught:
        airflow_dag.reconcile_task(project_dir)  # every declared source, ghost included
    summary = caught.value.document["summary"]
    assert summary["findings"] == 3
    assert [e.split(" ")[0] for e in summary["errors"]] == [GHOST]


def test_a_missing_project_fails_the_task(tmp_path: Path) -> None:
    with pytest.raises(airflow_dag.ContractCheckFailed, match="does not exist"):
        airflow_dag.reconcile_task(tmp_path / "gone", sources=["shop"])


def test_fail_on_drift_at_a_severity(project_dir: Path) -> None:
    # additive drift is a warning: failing on errors alone returns the document
    document = airflow_dag.reconcile_task(project_dir, "error", sources=["shop"])
    assert document["summary"]["by_severity"] == {"error": 0, "warning": 2, "info": 0}
    with pytest.raises(airflow_dag.ContractCheckFailed, match=r"^2 drift finding\(s\): "):
        airflow_dag.reconcile_task(project_dir, "warning", sources=["shop"])

    config = project_dir / ".dlt" / "config.toml"
    config.write_text(config.read_text() + '\n[contract_ops.severity]\nadditive = "error"\n')
    with pytest.raises(airflow_dag.ContractCheckFailed) as caught:
        airflow_dag.reconcile_task(project_dir, "error", sources=["shop"])
    assert caught.value.document["summary"]["by_severity"]["error"] == 2
