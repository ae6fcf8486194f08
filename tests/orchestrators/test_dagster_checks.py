"""The Dagster example runs in process against the DuckDB shop project: one check per
declared source; clean passes, drift fails when asked, errors fail with their text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.detectors.registry import selected
from tests.conftest import in_ci
from tests.orchestrators.conftest import GHOST, load_example

#: `dagster` and the example module, imported by `_dagster` when this module's tests run
dg: Any = None
checks: Any = None


@pytest.fixture(scope="module", autouse=True)
def _dagster() -> None:
    """Import dagster (seconds of CPU) when the tests run, not when pytest collects the
    module: every xdist worker collects it, one runs it."""
    global dg, checks
    try:
        import dagster
    except ImportError:  # an optional extra; the dev extra installs it, so CI always runs these
        if in_ci():
            raise
        pytest.skip("dagster is not installed: pip install -e '.[dev]'")
    dg = dagster
    checks = load_example("dagster_checks")

ORDER_COLUMNS = ['Weird "Name"', "größe", "ip-address", "userId"]


def _evaluations(defs: dg.Definitions) -> dict[str, Any]:
    """Execute every check of `defs` in process; evaluations by source."""
    job = defs.resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(raise_on_error=True)
    assert result.success
    evaluations = result.get_asset_check_evaluations()
    by_source = {e.asset_key.path[-1]: e for e in evaluations}
    assert len(by_source) == len(evaluations)
    return by_source


def _meta(evaluation: Any, key: str) -> Any:
    value = evaluation.metadata[key]
    return getattr(value, "data", getattr(value, "value", value))


def test_one_check_per_declared_source(project_dir: Path) -> None:
    defs = checks.build_definitions(project_dir)
    got = _evaluations(defs)
    assert sorted(got) == sorted([GHOST, "shop", "shop_clean", "shop_extra"])
    assert {e.check_name for e in got.values()} == {checks.CHECK_NAME}
    assert {tuple(e.asset_key.path) for e in got.values()} == {("dlt", name) for name in got}

    clean = got["shop_clean"]
    assert clean.passed
    assert _meta(clean, "findings") == 0
    assert _meta(clean, "findings_by_detector") == dict.fromkeys(selected(), 0)
    assert "report" not in clean.metadata

    # drift without fail_on_drift: passed, the findings in the metadata
    drifted = got["shop"]
    assert drifted.passed
    assert _meta(drifted, "findings") == 2
    assert _meta(drifted, "tables") == ["order_items", "plain_tbl"]
    assert drifted.description == "2 drift finding(s) (additive: 2)"


def test_drift_fails_when_asked_and_lists_the_columns(project_dir: Path) -> None:
    got = _evaluations(checks.build_definitions(project_dir, fail_on_drift=True))
    assert got["shop_clean"].passed

    drifted = got["shop"]
    assert not drifted.passed
    # additive drift is a warning: the failed check's severity is WARN, not ERROR
    assert drifted.severity == dg.AssetCheckSeverity.WARN
    assert _meta(drifted, "findings_by_detector") == {**dict.fromkeys(selected(), 0), "additive": 2}
    assert _meta(drifted, "findings_by_severity") == {"error": 0, "warning": 2, "info": 0}
    assert _meta(drifted, "columns") == [
        {"detector": "additive", "severity": "warning", "table": "order_items",
         "columns": ORDER_COLUMNS},
        {"detector": "additive", "severity": "warning", "table": "plain_tbl",
         "columns": ["extra_col"]},
    ]
    report = _meta(drifted, "report")
    assert "| warning | additive | plain_tbl | extra_col |" in report
    assert 'Weird "Name", größe, ip-address, userId' in report
    assert _meta(drifted, "dataset") == "duckdb:shop_raw"

    extra = got["shop_extra"]
    assert not extra.passed
    assert _meta(extra, "columns") == [
        {"detector": "additive", "severity": "warning", "table": "refunds",
         "columns": ["reason_code"]}
    ]


def test_a_dataset_never_loaded_fails_with_the_error(project_dir: Path) -> None:
    ghost = _evaluations(checks.build_definitions(project_dir))[GHOST]
    assert not ghost.passed
    assert ghost.severity == dg.AssetCheckSeverity.ERROR
    assert "ghost_data" in _meta(ghost, "error")
    assert "database does not exist" in _meta(ghost, "error")
    assert ghost.description.startswith("reconciler error: additive: Cannot connect")


def test_an_unknown_source_fails_with_the_error(project_dir: Path) -> None:
    defs = dg.Definitions(
        assets=[dg.AssetSpec(["dlt", "nope"])],
        asset_checks=checks.build_contract_checks(project_dir, sources=["nope"]),
    )
    nope = _evaluations(defs)["nope"]
    assert not nope.passed
    assert "Unknown source `nope`" in _meta(nope, "error")


def test_a_missing_project_fails_the_check_not_the_run(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    result = dg.materialize(
        [dg.AssetSpec(["dlt", "shop"]), *checks.build_contract_checks(gone, sources=["shop"])],
        selection=dg.AssetSelection.all_asset_checks(),
    )
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed
    assert f"`{gone}` does not exist" in _meta(evaluation, "error")


def test_removal_joins_with_include_removal_and_asset_keys_are_yours(project_dir: Path) -> None:
    defs = checks.build_definitions(
        project_dir,
        sources=["shop_clean"],
        include_removal=True,
        asset_key_for=lambda source: dg.AssetKey(["warehouse", source]),
    )
    evaluation = _evaluations(defs)["shop_clean"]
    assert evaluation.asset_key == dg.AssetKey(["warehouse", "shop_clean"])
    assert list(_meta(evaluation, "findings_by_detector")) == list(selected({"removal"}))


def test_dagster_dev_entry_point_reads_the_project_from_the_environment(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTRACT_OPS_PROJECT_DIR", str(project_dir))
    defs = checks.defs()
    assert isinstance(defs, dg.Definitions)
    keys = {k.asset_key.path[-1] for c in defs.asset_checks or [] for k in c.check_keys}
    assert keys == {GHOST, "shop", "shop_clean", "shop_extra"}


def test_an_acknowledged_finding_passes_with_fail_on_drift(acked_project: Path) -> None:
    defs = checks.build_definitions(acked_project, sources=["shop_extra"], fail_on_drift=True)
    evaluation = _evaluations(defs)["shop_extra"]
    assert evaluation.passed
    assert _meta(evaluation, "findings") == 1
    assert _meta(evaluation, "acknowledged") == 1
    assert evaluation.description == "1 drift finding(s) (additive: 1), 1 acknowledged"
    assert "| warning | additive | refunds | reason_code | acknowledged until " in _meta(
        evaluation, "report")


def test_fail_on_drift_at_a_severity_and_the_checks_severity(project_dir: Path) -> None:
    # additive drift is a warning: a check failing on errors alone passes
    got = _evaluations(checks.build_definitions(project_dir, sources=["shop"],
                                                fail_on_drift="error"))
    assert got["shop"].passed
    assert _meta(got["shop"], "findings_by_severity") == {"error": 0, "warning": 2, "info": 0}

    config = project_dir / ".dlt" / "config.toml"
    config.write_text(config.read_text() + '\n[sources.shop.contract_ops.severity]\n'
                      'additive = "error"\n')
    drifted = _evaluations(checks.build_definitions(project_dir, sources=["shop"],
                                                    fail_on_drift="error"))["shop"]
    assert not drifted.passed
    assert drifted.severity == dg.AssetCheckSeverity.ERROR
    assert _meta(drifted, "findings_by_severity") == {"error": 2, "warning": 0, "info": 0}
