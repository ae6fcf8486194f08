"""`contract lint`: policy checks on the declared contracts, with configurable levels, in every
output format, and end to end through a real project."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from dlt_contract_ops.contracts.lint import (
    Level,
    LintReport,
    LintRule,
    lint_resources,
    parse_levels,
)
from dlt_contract_ops.contracts.model import ResourceContract
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.output.contract_lint import FORMATS, render_lint
from tests.contracts.builders import col, res
from tests.projects import Project

OWNED = {"owner": "Order Platform"}

# (case, resource, findings as (rule id, subject)) at the default levels
CASES: list[tuple[str, ResourceContract, list[tuple[str, str]]]] = [
    ("measure without unit", res(col("amount", "double"), **OWNED),
     [("lint.unit_missing", "orders.amount")]),
    ("decimal without unit", res(col("price", "decimal"), **OWNED),
     [("lint.unit_missing", "orders.price")]),
    ("measure with unit", res(col("amount", "double", unit="USD"), **OWNED), []),
    ("unit outside the table", res(col("seats", "bigint", unit="seat"), **OWNED),
     [("lint.unit_unknown", "orders.seats")]),
    ("custom unit in braces", res(col("seats", "bigint", unit="{seat}"), **OWNED), []),
    ("zone outside the table", res(col("at", "timestamp", timezone="local_no_offset"),
                                   **OWNED), [("lint.timezone_unknown", "orders.at")]),
    ("identifier is no measure", res(col("id"), col("customer_id"), **OWNED), []),
    ("business key is no measure", res(col("line_no"), keys=("line_no",), **OWNED), []),
    ("dlt primary key is no measure", res(col("seq"), primary_key=("seq",), **OWNED), []),
    ("coded number is no measure", res(col("size", categories=("1", "2")), **OWNED), []),
    ("timestamp without zone", res(col("at", "timestamp"), **OWNED),
     [("lint.timezone_missing", "orders.at")]),
    ("timestamp with zone", res(col("at", "timestamp", timezone="UTC"), **OWNED), []),
    ("a date needs no zone", res(col("day", "date"), **OWNED), []),
    ("status without codes", res(col("status", "text"), **OWNED),
     [("lint.codes_missing", "orders.status")]),
    ("*_code without codes", res(col("country_code", "text"), **OWNED),
     [("lint.codes_missing", "orders.country_code")]),
    ("status with codes", res(col("status", "text", categories=("paid",)), **OWNED), []),
    ("open vocabulary counts", res(col("coupon_code", "text", category_pattern="^[A-Z]+$"),
                                   **OWNED), []),
    ("free text is not categorical", res(col("comment", "text"), **OWNED), []),
    ("no owner", res(col("id")), [("lint.owner_missing", "orders")]),
]


@pytest.mark.parametrize(("resource", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_lint_rule(resource: ResourceContract, expected: list[tuple[str, str]]) -> None:
    report = lint_resources("erp", [resource])
    assert [(f.rule_id, f.subject) for f in report.findings] == expected


def test_default_levels_and_verdict() -> None:
    report = lint_resources("erp", [res(col("amount", "double"))])
    assert [(f.rule_id, f.level) for f in report.findings] == [
        ("lint.owner_missing", "warning"), ("lint.unit_missing", "error"),
    ]
    assert (report.failed, report.verdict) == (True, "FAILED")
    assert not lint_resources("erp", [res(col("id"))]).failed  # a warning alone passes


@pytest.mark.parametrize(
    ("settings", "failed", "levels"),
    [
        (["lint.unit_missing=warning"], False, ["warning", "warning"]),
        (["unit_missing=off"], False, ["warning"]),  # the `lint.` prefix may be left out
        (["lint.owner_missing=error", "lint.unit_missing=off"], True, ["error"]),
        ({"lint.owner_missing": "off"}, True, ["error"]),
    ],
)
def test_levels_are_configurable(settings: object, failed: bool, levels: list[Level]) -> None:
    chosen = parse_levels(settings)  # type: ignore[arg-type]
    report = lint_resources("erp", [res(col("amount", "double"))], chosen)
    assert report.failed is failed
    assert [f.level for f in report.findings] == levels


@pytest.mark.parametrize(
    ("setting", "message"),
    [("lint.unit_mising=off", r"Unknown lint rule `lint.unit_mising`. Did you mean "
                              r"`lint.unit_missing`\?"),
     ("lint.unit_missing=fatal", r"level `fatal` is not one of error, warning, off"),
     ("lint.unit_missing", r"write RULE=LEVEL")],
)
def test_bad_levels_say_what_to_write(setting: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_levels([setting])


def sample() -> LintReport:
    return lint_resources("erp", [res(col("amount", "double"), col("id"))])


def test_text() -> None:
    assert render_lint(sample(), "text") == (
        "Contract lint erp  (1 resource(s), 2 column(s))\n"
        "  ! warning  lint.owner_missing  orders         resource declares no owner\n"
        '      declare it: `@TableSemantics(owner="Order Platform")`\n'
        "  ✗ error    lint.unit_missing   orders.amount  numeric column declares no unit\n"
        '      declare it: `Annotated[float, Semantics(unit="USD")]` (`unit="1"` for a pure '
        "number)\n"
        "Verdict: FAILED — 1 error(s), 1 warning(s)\n"
    )


def test_json() -> None:
    doc = json.loads(render_lint(sample(), "json"))
    assert (doc["format"], doc["verdict"], doc["errors"], doc["warnings"]) == (
        "dlt-contract-ops/contract-lint@1", "FAILED", 1, 1,
    )
    assert doc["levels"]["lint.codes_missing"] == "error"
    assert doc["findings"][1] == {
        "rule": "lint.unit_missing", "title": "numeric column declares no unit",
        "level": "error", "resource": "orders", "column": "amount",
        "message": "numeric column declares no unit: declare it: "
                   '`Annotated[float, Semantics(unit="USD")]` (`unit="1"` for a pure number)',
    }


def test_junit() -> None:
    root = ET.fromstring(render_lint(sample(), "junit"))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("3", "2")
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["lint.unit_missing amount", "lint"]


def test_github_points_at_the_field() -> None:
    locations = {("orders", "amount"): ("pipelines/erp.py", 12), ("orders", None):
                 ("pipelines/erp.py", 9)}
    lines = render_lint(sample(), "github", locations).splitlines()
    assert lines[0].startswith(
        "::warning file=pipelines/erp.py,line=9,title=lint.owner_missing orders::"
    )
    assert lines[1].startswith(
        "::error file=pipelines/erp.py,line=12,title=lint.unit_missing orders.amount::"
    )
    assert lines[-1] == "::error title=contract lint FAILED erp::FAILED — 1 error(s), 1 warning(s)"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_clean_contract_passes_in_every_format(fmt: str) -> None:
    report = lint_resources("erp", [res(col("id"), owner="x")])
    assert not report.failed
    assert "PASSED" in render_lint(report, fmt)


def test_every_rule_has_a_case() -> None:
    covered = {rule for _, _, found in CASES for rule, _ in found}
    assert covered == {r.rule_id for r in LintRule}


SOURCE = '''
from datetime import datetime
from typing import Annotated, Literal

import dlt
from pydantic import BaseModel

from dlt_contract_ops.contracts import Semantics, TableSemantics


@TableSemantics(keys=("order_id",){owner})
class Order(BaseModel):
    order_id: int
    total: Annotated[float, Semantics(unit="USD")]
    weight: float
    status: Literal["paid", "pending"]
    created_at: datetime


@dlt.resource(columns=Order, primary_key="order_id")
def orders():
    yield {{}}


@dlt.source(name="shop")
def shop():
    return orders
'''


def test_cli_lint_exit_codes_severities_and_formats(project: Project) -> None:
    project.module("pipelines.shop", SOURCE.format(owner=""))
    project.source("shop", "pipelines.shop:shop")
    proc = project.cli("contract", "lint", "-s", "shop")
    assert proc.returncode == 1, proc.stderr
    rows = [line.split()[1:4] for line in proc.stdout.splitlines() if line[:3] in ("  ✗", "  !")]
    assert rows == [
        ["warning", "lint.owner_missing", "orders"],
        ["error", "lint.timezone_missing", "orders.created_at"],
        ["error", "lint.unit_missing", "orders.weight"],
    ]
    assert proc.stdout.splitlines()[-1] == "Verdict: FAILED — 2 error(s), 1 warning(s)"

    relaxed = project.cli("contract", "lint", "-s", "shop", "--format", "json",
                          "--severity", "lint.unit_missing=warning",
                          "--severity", "timezone_missing=off")
    assert relaxed.returncode == 0, relaxed.stderr
    doc = json.loads(relaxed.stdout)
    assert [(f["rule"], f["level"]) for f in doc["findings"]] == [
        ("lint.owner_missing", "warning"), ("lint.unit_missing", "warning"),
    ]

    github = project.cli("contract", "lint", "-s", "shop", "--format", "github")
    assert "::error file=pipelines/shop.py,line=15,title=lint.unit_missing orders.weight::" in (
        github.stdout
    )

    bad = project.cli("contract", "lint", "-s", "shop", "--severity", "lint.nope=off")
    assert bad.returncode == 2
    assert "Unknown lint rule `lint.nope`" in bad.stderr


def test_cli_snapshot_records_dlt_key_hints(project: Project) -> None:
    project.module("pipelines.shop", SOURCE.format(owner=', owner="Order Platform"'))
    project.source("shop", "pipelines.shop:shop")
    proc = project.cli("contract", "snapshot", "-s", "shop", "--version", "1.0.0")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((project.root / "contracts" / "shop" / "1.0.0" / "orders.json").read_text())
    assert (doc["format"], doc["primary_key"], doc["owner"]) == (
        "dlt-contract-ops/contract@2", ["order_id"], "Order Platform",
    )
    # dlt's primary key moves: the release needs a major version
    project.module("pipelines.shop", SOURCE.format(owner=', owner="Order Platform"').replace(
        'primary_key="order_id"', 'primary_key=("order_id", "status")'))
    check = project.cli("contract", "check", "-s", "shop", "--version", "1.1.0")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "primary_key.changed" in check.stdout
    assert "(order_id) → (order_id, status)" in check.stdout


def test_every_lint_rule_is_documented_with_its_default() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "contracts.md").read_text("utf-8")
    for rule in LintRule:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{rule.rule_id}`")),
                   None)
        assert row is not None, rule.rule_id
        assert f"| {rule.default} |" in row
