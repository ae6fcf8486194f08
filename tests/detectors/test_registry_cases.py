"""The detector registry's checks, as a case table: each entry that cannot register names
its entry point and the offending member; the built-ins register as they are."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

import pytest

from dlt_contract_ops.detection.detector import Detector
from dlt_contract_ops.detectors.registry import register
from dlt_contract_ops.errors import DetectorPluginError

HERE = __name__


def run(run: object) -> None:
    """A runner the cases point at (never called)."""


GOOD = Detector("late_rows", run, "rows loaded late", flag="--include-late-rows")
NAMED_ELSE = Detector("other", run, "x")
BAD_NAME = Detector("Late-Rows", run, "x")
NO_SUMMARY = Detector("late_rows", run, " ")
NOT_CALLABLE = Detector("late_rows", 42, "x")  # type: ignore[arg-type]
BAD_PATH = Detector("late_rows", "late_rows.run", "x")
NO_RUNNER = Detector("late_rows", "", "x")
BAD_FLAG = Detector("late_rows", run, "x", flag="--include-late_rows")
BAD_SETTINGS = Detector("late_rows", run, "x", settings=3)
BAD_LINES = Detector("late_rows", run, "x", lines="not a path")
BAD_ORDER = Detector("late_rows", run, "x", order=True)
BAD_SEVERITY = Detector("late_rows", run, "x", severity="warn")
NO_SEVERITY = Detector("late_rows", run, "x", severity="critical")
BAD_EXPLAINS = Detector("late_rows", run, "x", explains=("distribution",))  # type: ignore[arg-type]
NOT_A_DETECTOR = {"name": "late_rows"}


def ep(name: str, attr: str) -> EntryPoint:
    return EntryPoint(name, f"{HERE}:{attr}", "dlt_contract_ops.detectors")


@pytest.mark.parametrize(("name", "attr", "says"), [
    ("late_rows", "NOT_A_DETECTOR", "is a `dict`, not a `dlt_contract_ops.Detector`"),
    ("late_rows", "NAMED_ELSE", "registers a Detector named `other`: the entry point's name"),
    ("late_rows", "MISSING", "cannot be imported: AttributeError"),
    ("Late-Rows", "BAD_NAME", "`name` is 'Late-Rows': use lower-case letters"),
    ("late_rows", "NO_SUMMARY", "`summary` must be a non-empty string"),
    ("late_rows", "NOT_CALLABLE", "`runner` is a int, not a function"),
    ("late_rows", "BAD_PATH", "`runner` is 'late_rows.run': write an import path"),
    ("late_rows", "NO_RUNNER", "`runner` is empty"),
    ("late_rows", "BAD_FLAG", "an opt-in detector's flag is `--include-late-rows`"),
    ("late_rows", "BAD_SETTINGS", "`settings` is a int: give a pydantic model or a function"),
    ("late_rows", "BAD_LINES", "`lines` is 'not a path': write an import path"),
    ("late_rows", "BAD_ORDER", "`order` is True: a whole number"),
    ("late_rows", "BAD_SEVERITY",
     "`severity` is 'warn': use one of error, warning, info (did you mean `warning`?)."),
    ("late_rows", "NO_SEVERITY", "`severity` is 'critical': use one of error, warning, info."),
    ("late_rows", "BAD_EXPLAINS",
     "`explains` is ('distribution',): a tuple of `Explains(detector, metrics)`"),
])
def test_an_entry_that_cannot_register_names_itself_and_its_member(
    name: str, attr: str, says: str
) -> None:
    with pytest.raises(DetectorPluginError) as caught:
        register([ep(name, attr)])
    message = str(caught.value)
    assert f"entry point `{name} = {HERE}:{attr}`" in message
    assert "(group `dlt_contract_ops.detectors`)" in message
    assert says in message
    assert "\n" not in message


def test_a_duplicate_names_both_entries() -> None:
    with pytest.raises(DetectorPluginError, match=r"`late_rows` is registered twice: by entry "
                       rf"point `late_rows = {HERE}:GOOD` .* and by entry point "
                       rf"`late_rows = {HERE}:BAD_FLAG`"):
        register([ep("late_rows", "GOOD"), ep("late_rows", "BAD_FLAG")])


def test_the_built_ins_register_in_their_order_and_a_plugin_after_them() -> None:
    found = register([*entry_points(group="dlt_contract_ops.detectors"), ep("late_rows", "GOOD")])
    assert [d.name for d in found] == [
        "additive", "removal", "missing", "type", "rename", "gate", "contract", "distribution",
        "late_rows",
    ]


def test_each_built_in_has_its_severity_and_a_plugin_warning_by_default() -> None:
    found = register([*entry_points(group="dlt_contract_ops.detectors"), ep("late_rows", "GOOD")])
    assert {d.name: d.severity for d in found} == {
        "additive": "warning", "removal": "error", "missing": "error", "type": "error",
        "rename": "error", "gate": "error", "contract": "error", "distribution": "warning",
        "late_rows": "warning",
    }
