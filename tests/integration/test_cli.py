"""The `reconcile` command as a user runs it: exit codes, the JSON document, streams."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.model.findings import FINDING_KEYS, OPTIONAL_FINDING_KEYS, RESULT_KEYS
from tests.inprocess import run_cli
from tests.integration import shop
from tests.projects import Project

#: the logging sink's drift line, as the CLI's log format prints it on stderr
ALERT = "|[WARNING]|dlt_contract_ops.alerts|schema drift"
#: keys a finding may carry beyond the documented ones: detector-specific values, and what
#: alert dedup decided ("new" / "repeat") when it ran
EXTRA_FINDING_KEYS = {*OPTIONAL_FINDING_KEYS, "alert"}


def _json(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    # stdout carries only the document: it must parse as a whole
    doc = json.loads(proc.stdout)
    assert isinstance(doc, dict)
    return doc


def _results(doc: dict[str, Any], detector: str = "additive") -> dict[str, dict[str, Any]]:
    return {r["source"]: r for r in doc["results"] if r["detector"] == detector}


@pytest.mark.parametrize(
    ("args", "code"),
    [
        # findings alone are an alert to route, not a failure
        (("-s", "shop"), 0),
        (("--all",), 0),
        (("-s", "shop_clean"), 0),
        # --fail-on-drift: 3 only with findings...
        (("-s", "shop", "--fail-on-drift"), 3),
        (("-s", "shop_clean", "-s", "shop_extra", "--fail-on-drift"), 3),
        # ...and only when nothing errored
        (("-s", "shop_clean", "--fail-on-drift"), 0),
        # an unknown source is a usage error: refused before anything runs or alerts
        (("-s", "shop", "-s", "nope", "--fail-on-drift"), 2),
        (("-s", "nope"), 2),
        (("-s", "shop", "-s", "nope"), 2),
        # neither or both of -s/--all is a usage error
        ((), 2),
        (("-s", "shop", "--all"), 2),
        (("-s", "shop", "--format", "yaml"), 2),
    ],
)
def test_exit_codes(shop_project: Project, args: tuple[str, ...], code: int) -> None:
    proc = shop_project.cli("reconcile", "--dry-run", *args)
    assert proc.returncode == code, (proc.stdout, proc.stderr)


def test_usage_error_says_what_to_give(shop_project: Project) -> None:
    proc = shop_project.cli("reconcile")
    assert proc.returncode == 2
    assert "-s/--source NAME" in proc.stderr
    assert "--all" in proc.stderr
    assert proc.stdout == ""


def test_unknown_source_is_a_usage_error(shop_project: Project) -> None:
    """A mistyped `-s` is the request's fault: one line, exit 2, nothing runs or alerts."""
    proc = shop_project.cli("reconcile", "-s", "nope", "-s", "shop", "--format", "json")
    assert (proc.returncode, proc.stdout) == (2, "")
    [line] = proc.stderr.splitlines()
    assert line.startswith("Error: Unknown source `nope`")
    assert "Declared sources: shop, shop_clean, shop_extra." in line


def test_unknown_source_still_reports_the_others_from_python(shop_project: Project) -> None:
    proc = shop_project.python(
        "import json; from dlt_contract_ops.model.findings import results_document; "
        "from dlt_contract_ops.engine.reconcile import run; "
        "print(json.dumps(results_document(run(['nope', 'shop'], dry_run=True))))"
    )
    doc = json.loads(proc.stdout)
    sources = [r["source"] for r in doc["results"]]
    assert sources[0] == "nope"
    (nope,) = [r for r in doc["results"] if r["source"] == "nope"]
    assert nope["error"].startswith("Unknown source `nope`")
    assert "Declared sources: shop, shop_clean, shop_extra." in nope["error"]
    assert nope["findings"] == []
    shop_result = _results(doc)["shop"]
    assert shop_result["error"] is None
    assert {f["resource"] for f in shop_result["findings"]} == {"OrderItems", "plain"}


def test_json_document_shape(shop_project: Project) -> None:
    proc = shop_project.cli("reconcile", "--all", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = _json(proc)
    assert list(doc) == ["format_version", "results"]
    assert doc["format_version"] == 1
    assert {r["source"] for r in doc["results"]} == {"shop", "shop_clean", "shop_extra"}
    for result in doc["results"]:
        assert list(result) == list(RESULT_KEYS)
    additive = _results(doc)
    assert set(additive) == {"shop", "shop_clean", "shop_extra"}
    for source, result in additive.items():
        assert (result["source"], result["detector"]) == (source, "additive")
        assert (result["pipeline"], result["destination"], result["dataset"]) == (
            shop.PIPELINE,
            "duckdb",
            shop.DATASET,
        )
        assert result["error"] is None
        assert isinstance(result["notes"], list)
        assert isinstance(result["duration_s"], float)
        for finding in result["findings"]:
            # the stable finding id first (what `ack` takes), then the documented keys
            assert list(finding)[: len(FINDING_KEYS) + 1] == ["id", *FINDING_KEYS]
            assert set(finding) - {"id", *FINDING_KEYS} <= EXTRA_FINDING_KEYS
            assert finding["drift_type"] == "additive"
            assert finding["source"] == source
            assert finding["columns"] == sorted(finding["columns"])
            assert set(finding["column_types"]) == set(finding["columns"])
            assert set(finding["samples"]) == set(finding["columns"])
            assert finding["reproduce"].startswith("SELECT ")
    (refunds,) = additive["shop_extra"]["findings"]
    assert (refunds["resource"], refunds["table"]) == ("refunds", "refunds")


def test_stdout_holds_only_json_and_logs_go_to_stderr(shop_project: Project) -> None:
    proc = shop_project.cli("reconcile", "-s", "shop", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    _json(proc)
    # the logging sink's alerts are on stderr
    assert proc.stderr.count(ALERT) == 2
    assert ALERT not in proc.stdout


def test_alerts_are_emitted_unless_dry_run(shop_project: Project) -> None:
    emitted = shop_project.cli("reconcile", "-s", "shop")
    assert emitted.returncode == 0, emitted.stderr
    alerts = [line for line in emitted.stderr.splitlines() if ALERT in line]
    assert len(alerts) == 2  # one per drifted resource, not one per column
    assert any("shop.OrderItems" in a and '"Weird \\"Name\\""' in a for a in alerts)

    quiet = shop_project.cli("reconcile", "-s", "shop", "--dry-run")
    assert quiet.returncode == 0, quiet.stderr
    assert ALERT not in quiet.stderr
    assert quiet.stdout.startswith("Dry-run: alert emission suppressed")
    # the findings are printed either way
    assert "  • order_items (resource OrderItems): additive drift (4 column(s))" in (
        quiet.stdout
    )


def test_project_dir_from_another_directory(shop_project: Project, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_cli(["reconcile", "-s", "shop", "--format", "json", "--dry-run",
                    "--project-dir", str(shop_project.root)], elsewhere)
    assert proc.returncode == 0, proc.stderr
    result = _results(_json(proc))["shop"]
    assert {f["resource"] for f in result["findings"]} == {"OrderItems", "plain"}
    # nothing was created where the command ran
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    ("anchor", "typo", "message"),
    [
        # the project table: the run cannot start
        ("[contract_ops]\n", "injected_colums = []\n",
         "Unknown key `injected_colums` in `[contract_ops]`"),
        # one source's table: that source fails as a config error
        ("[sources.shop.contract_ops]\n", "datset_name = 'x'\n",
         "Unknown key `datset_name` in `[sources.shop.contract_ops]`"),
    ],
)
def test_config_errors_exit_2(shop_project: Project, anchor: str, typo: str, message: str) -> None:
    config = shop_project.root / ".dlt" / "config.toml"
    config.write_text(config.read_text().replace(anchor, anchor + typo))
    proc = shop_project.cli("reconcile", "-s", "shop", "--dry-run")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert message in proc.stdout + proc.stderr
    assert "Did you mean" in proc.stdout + proc.stderr


def test_unreachable_destination_is_a_source_error_and_creates_nothing(
    shop_project: Project,
) -> None:
    config = shop_project.root / ".dlt" / "config.toml"
    config.write_text(
        config.read_text()
        + '\n[sources.ghost.contract_ops]\nref = "pipelines.shop:shop"\n'
        + 'pipeline_name = "ghost_pipe"\ndestination = "duckdb"\ndataset_name = "ghost_raw"\n'
    )
    proc = shop_project.cli("reconcile", "--all", "--format", "json", "--dry-run")
    assert proc.returncode == 1, proc.stderr
    results = _json(proc)["results"]
    (ghost,) = [r for r in results if r["source"] == "ghost"]
    assert "`duckdb`" in ghost["error"]
    assert "ghost_pipe.duckdb" in ghost["error"]
    # the others are still reported
    assert len(_results(_json(proc))["shop"]["findings"]) == 2
    # read-only: reconciling never creates the database it could not find
    assert not (shop_project.root / "ghost_pipe.duckdb").exists()
