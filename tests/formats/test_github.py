"""`reconcile --format github`: one annotation per finding, errors as `::error`, escaped
so a runner parses back exactly what was meant."""

from __future__ import annotations

import json

import pytest

from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.output.github import to_github
from tests.formats import warehouse
from tests.formats.conftest import finding_count
from tests.projects import Project


def _unescape(text: str, prop: bool) -> str:
    if prop:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def parse(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command as the Actions runner reads it: `::cmd k=v,k=v::message`."""
    assert line.startswith("::"), line
    head, sep, message = line[2:].partition("::")
    assert sep, line
    command, _, props = head.partition(" ")
    properties = {}
    for pair in filter(None, props.split(",")):
        key, eq, value = pair.partition("=")
        assert eq, pair
        properties[key] = _unescape(value, prop=True)
    return command, properties, _unescape(message, prop=False)


def test_one_annotation_per_finding_at_its_severity_naming_table_and_columns(
    results: list[ReconcileResult],
) -> None:
    lines = to_github(results).splitlines()
    commands = [parse(line) for line in lines]
    annotations = [(c, p, m) for c, p, m in commands if not p["title"].endswith("errored")]
    findings = [(r, f) for r in results for f in r.findings]
    assert len(annotations) == finding_count(results) == len(findings)
    # removal drift is an error, additive drift a warning: both levels show
    assert {c for c, _, _ in annotations} == {"error", "warning"}
    for (command, props, message), (r, f) in zip(annotations, findings, strict=True):
        assert command == {"error": "error", "warning": "warning", "info": "notice"}[f.severity]
        assert props == {"title": f"{f.drift_type} drift in {r.source}.{f.table}"}
        assert f"table `{f.table}`" in message
        for column in f.columns:
            assert column in message or json.dumps(column, ensure_ascii=False) in message


def test_the_hostile_column_round_trips(results: list[ReconcileResult]) -> None:
    [line] = [line for line in to_github(results).splitlines()
              if line.startswith("::warning title=additive drift in events_src.events::")]
    _, _, message = parse(line)
    # the name holds `,`, `:` and a literal `%25`: parsed back, it is the name again
    assert json.dumps(warehouse.NASTY, ensure_ascii=False) in message
    assert "%2525" in line


def test_errors_are_error_annotations(results: list[ReconcileResult]) -> None:
    errors = [parse(line) for line in to_github(results).splitlines()
              if line.startswith("::error") and "errored::" in line]
    assert [p["title"] for _, p, _ in errors] == [
        f"{r.source} ({r.detector}) errored" for r in results if r.error
    ]
    assert any("Unknown source `nope`" in m for _, _, m in errors)


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ("t:1,2", "a\nb"),
        ("t", "100%\r\n::error title=forged::x"),
        ("ä", "x,y:z"),
    ],
)
def test_escaping_keeps_one_command_per_line(table: str, column: str) -> None:
    finding = DriftFinding(
        drift_type="additive", source="src", resource="r", table=table, columns=[column]
    )
    lines = to_github([ReconcileResult(source="src", findings=[finding])]).splitlines()
    [(command, props, message)] = [parse(line) for line in lines]
    assert command == "warning"
    assert props["title"] == f"additive drift in src.{json.dumps(table) if ',' in table else table}"
    assert json.dumps(column, ensure_ascii=False) in message


def test_cli_github_exit_codes_unchanged(drifted: Project) -> None:
    proc = drifted.cli("reconcile", "-s", "shop", "--dry-run", "--format", "github",
                       "--fail-on-drift")
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.startswith("::warning title=additive drift in shop.order_items::")
