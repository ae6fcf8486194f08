"""A unit outside the unit table (`seat`) is still a unit: snapshots and checks accept it as
0.1.0 did, compare it by its exact text (with or without UCUM's braces), classify a change to or
from it as any unit change, and `contract lint` warns with a suggestion.

The CLI in process on a real project (tests/contracts/air_project.py).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from dlt_contract_ops.contracts.canonical import from_document, to_document
from dlt_contract_ops.contracts.diff import diff_resources
from dlt_contract_ops.contracts.lint import lint_resources
from dlt_contract_ops.contracts.units import same_unit
from tests.contracts.air_project import in_project, invoke, write_source
from tests.contracts.builders import col, res
from tests.projects import Project

__all__ = ["in_project"]  # the fixture, used by every test here

def test_snapshot_and_check_accept_a_unit_outside_the_table(project: Project) -> None:
    write_source(project, "seat")
    code, out = invoke(project, "snapshot", "-s", "air", "--version", "1.0.0")
    assert code == 0, out
    (doc_path,) = (project.root / "contracts" / "air" / "1.0.0").iterdir()
    doc = json.loads(doc_path.read_text())
    assert {c["name"]: c.get("unit") for c in doc["columns"]}["capacity"] == "seat"
    code, out = invoke(project, "check", "-s", "air")
    assert code == 0, out
    assert "✓ no contract changes" in out


def test_a_format_1_snapshot_with_an_unknown_unit_still_reads_and_checks(
    project: Project,
) -> None:
    write_source(project, "seat")
    assert invoke(project, "snapshot", "-s", "air", "--version", "1.0.0")[0] == 0
    (doc_path,) = (project.root / "contracts" / "air" / "1.0.0").iterdir()
    # rewrite it as 0.1.0 wrote it: format 1, its own hash
    contract, version = from_document(doc_path.read_text(), str(doc_path))
    old = to_document(replace(contract, format_version=1), version)
    assert '"format": "dlt-contract-ops/contract@1"' in old
    assert '"unit":"seat"' in old
    doc_path.write_text(old)
    code, out = invoke(project, "check", "-s", "air")
    assert code == 0, out
    assert "unit." not in out


def test_seat_to_seats_blocks_the_release_as_a_unit_change(project: Project) -> None:
    write_source(project, "seat")
    assert invoke(project, "snapshot", "-s", "air", "--version", "1.0.0")[0] == 0
    write_source(project, "seats")
    code, out = invoke(project, "check", "-s", "air")
    assert code == 1, out
    assert "✗ breaking  unit.changed  flights.capacity  seat → seats" in out


def test_lint_warns_on_an_unknown_unit_and_suggests_braces(project: Project) -> None:
    write_source(project, "seat")
    code, out = invoke(project, "lint", "-s", "air", "--format", "json")
    assert code == 0, out
    (finding,) = json.loads(out)["findings"]
    assert (finding["rule"], finding["level"], finding["column"]) == (
        "lint.unit_unknown", "warning", "capacity",
    )
    assert "`{seat}`" in finding["message"]


# (old unit, new unit, rule ids of the diff)
CHANGES: list[tuple[str | None, str | None, list[str]]] = [
    ("seat", "seat", []),
    ("seat", " seat ", []),
    ("seat", "{seat}", []),  # following lint's advice is no change
    ("seat", "seats", ["unit.changed"]),
    ("seat", "Seat", ["unit.changed"]),
    ("seat", "item", ["unit.changed"]),  # unknown -> known
    ("m", "seat", ["unit.changed"]),  # known -> unknown
    (None, "seat", ["unit.declared"]),
    ("seat", None, ["unit.dropped"]),
]


@pytest.mark.parametrize(("old", "new", "rules"), CHANGES)
def test_unknown_units_compare_by_text(old: str | None, new: str | None,
                                       rules: list[str]) -> None:
    before = res(col("capacity", "bigint", unit=old))
    after = res(col("capacity", "bigint", unit=new))
    assert [c.rule_id for c in diff_resources(before, after)] == rules
    assert same_unit(old, new) is (not rules)


# (declared unit, what the lint message suggests; None when the table knows the unit)
ADVICE: list[tuple[str, str | None]] = [
    ("seat", "`{seat}`"),
    ("M", "Did you mean `m`?"),
    ("usd", "Did you mean `USD`?"),
    ("{seat}", None),
    ("metres", None),
]


@pytest.mark.parametrize(("unit", "advice"), ADVICE)
def test_lint_advice_for_a_unit(unit: str, advice: str | None) -> None:
    report = lint_resources("erp", [res(col("capacity", "bigint", unit=unit), owner="Ops")])
    if advice is None:
        assert report.findings == ()
        return
    (finding,) = report.findings
    assert (finding.rule_id, finding.level, finding.subject) == (
        "lint.unit_unknown", "warning", "orders.capacity",
    )
    assert advice in finding.message
    assert not report.failed


def test_lint_warns_on_an_unknown_unit_inside_a_json_column() -> None:
    legs = col("legs", "json", True, members=(col("[]", None, unit="hops"),))
    (finding,) = lint_resources("erp", [res(legs, owner="Ops")]).findings
    assert (finding.rule_id, finding.subject) == ("lint.unit_unknown", "orders.legs[]")
