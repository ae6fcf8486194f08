"""A time zone outside the IANA table (`local_no_offset`, a misspelled `Europe/Berln`) is still
the zone a model declares: snapshots and checks accept it (it made `contract snapshot` exit 2),
compare it by its exact text, a change of that text is a `timezone.changed`, and `contract
lint` warns with a suggestion (`local`, or the IANA name meant), as for a unit outside the
unit table (tests/contracts/test_unknown_units.py).

The CLI in process on a real project (tests/contracts/air_project.py).
"""

from __future__ import annotations

import json

import pytest

from dlt_contract_ops.contracts.diff import diff_resources
from dlt_contract_ops.contracts.lint import lint_resources
from dlt_contract_ops.contracts.timezones import same_timezone
from tests.contracts.air_project import in_project, invoke
from tests.contracts.air_project import write_source as write_any
from tests.contracts.builders import col, member, res
from tests.projects import Project

__all__ = ["in_project"]  # the fixture, used by every test here


def write_source(project: Project, zone: str) -> None:
    write_any(project, zone, declares="timezone")



@pytest.mark.parametrize("zone", ["local_no_offset", "Europe/Berln"])
def test_snapshot_and_check_accept_a_zone_outside_the_table(project: Project, zone: str) -> None:
    write_source(project, zone)
    code, out = invoke(project, "snapshot", "-s", "air", "--version", "1.0.0")
    assert code == 0, out
    (doc_path,) = (project.root / "contracts" / "air" / "1.0.0").iterdir()
    doc = json.loads(doc_path.read_text())
    assert {c["name"]: c.get("timezone") for c in doc["columns"]}["departs"] == zone
    code, out = invoke(project, "check", "-s", "air")
    assert code == 0, out
    assert "✓ no contract changes" in out


def test_a_change_of_the_text_blocks_the_release_as_a_zone_change(project: Project) -> None:
    write_source(project, "local_no_offset")
    assert invoke(project, "snapshot", "-s", "air", "--version", "1.0.0")[0] == 0
    write_source(project, "local")
    code, out = invoke(project, "check", "-s", "air")
    assert code == 1, out
    assert "✗ breaking  timezone.changed  flights.departs  local_no_offset → local" in out


def test_lint_warns_on_an_unknown_zone_and_suggests_local(project: Project) -> None:
    write_source(project, "local_no_offset")
    code, out = invoke(project, "lint", "-s", "air", "--format", "json")
    assert code == 0, out
    (finding,) = json.loads(out)["findings"]
    assert (finding["rule"], finding["level"], finding["column"]) == (
        "lint.timezone_unknown", "warning", "departs",
    )
    assert "Did you mean `local`" in finding["message"]


# (old zone, new zone, rule ids of the diff)
CHANGES: list[tuple[str | None, str | None, list[str]]] = [
    ("local_no_offset", "local_no_offset", []),
    ("local_no_offset", " local_no_offset ", []),
    ("local_no_offset", "Local_No_Offset", ["timezone.changed"]),
    ("local_no_offset", "local", ["timezone.changed"]),  # unknown -> known
    ("UTC", "local_no_offset", ["timezone.changed"]),  # known -> unknown
    ("Europe/Berln", "Europe/Berlin", ["timezone.changed"]),  # lint's advice is a change
    (None, "local_no_offset", ["timezone.declared"]),
    ("local_no_offset", None, ["timezone.dropped"]),
]


@pytest.mark.parametrize(("old", "new", "rules"), CHANGES)
def test_unknown_zones_compare_by_text(old: str | None, new: str | None,
                                       rules: list[str]) -> None:
    before = res(col("departs", "timestamp", timezone=old))
    after = res(col("departs", "timestamp", timezone=new))
    assert [c.rule_id for c in diff_resources(before, after)] == rules
    assert same_timezone(old, new) is (not rules)


# (declared zone, what the lint message suggests; None when the zone is known)
ADVICE: list[tuple[str, str | None]] = [
    ("local_no_offset", "Did you mean `local`"),
    ("utc", "Did you mean `UTC`?"),
    ("Europe/Berln", "Did you mean `Europe/Berlin`?"),
    ("Mars/Olympus", "a fixed offset (`+05:30`), or `local`"),
    ("UTC", None),
    ("+05:30", None),
    ("local", None),
]


@pytest.mark.parametrize(("zone", "advice"), ADVICE)
def test_lint_advice_for_a_zone(zone: str, advice: str | None) -> None:
    report = lint_resources("erp", [res(col("departs", "timestamp", timezone=zone), owner="Ops")])
    if advice is None:
        assert report.findings == ()
        return
    (finding,) = report.findings
    assert (finding.rule_id, finding.level, finding.subject) == (
        "lint.timezone_unknown", "warning", "orders.departs",
    )
    assert advice in finding.message
    assert "compared by its exact text" in finding.message
    assert not report.failed


def test_lint_warns_on_an_unknown_zone_inside_a_json_column() -> None:
    legs = col("legs", "json", True, members=(member("[]", timezone="local_no_offset"),))
    (finding,) = lint_resources("erp", [res(legs, owner="Ops")]).findings
    assert (finding.rule_id, finding.subject) == ("lint.timezone_unknown", "orders.legs[]")
