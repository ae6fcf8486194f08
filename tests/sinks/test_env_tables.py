"""A settings table set as one JSON value in an environment variable
(`CONTRACT_OPS__REMOVAL='{"recent_window": "1h"}'`) is not read by dlt, which reads a table
one variable a key (`CONTRACT_OPS__REMOVAL__RECENT_WINDOW`): every table of ours, the
project's and a source's, is refused as the sinks' options are (`settings.problems.
unread_table_variables`, one check): one line naming the variable and the variables to set,
exit 2, before anything is swept or paged; `validate` lists it; its values are never shown.
Before, each was ignored: the sweep ran on the TOML's or the default settings and paged
(exit 0). A key whose value dlt does read as JSON (`models`, a source's bindings) still is."""

from __future__ import annotations

import json

import pytest
from click.testing import Result

from dlt_contract_ops.commands.common import EXIT_USAGE
from dlt_contract_ops.settings import project_context
from dlt_contract_ops.settings.project import load_project_settings, load_source_settings
from tests.projects import Project
from tests.servers import Receiver
from tests.sinks.app_project import CONFIG
from tests.sinks.test_config_mistakes import GOOD_URL, _cli, _swept_nothing

#: a value no line may show (the table may hold a secret)
SECRET = "s3cr3t-value"

#: id -> (variable, its value as JSON, the variables the line names)
CASES = {
    "project removal": (
        "CONTRACT_OPS__REMOVAL", {"recent_window": "1h", "baseline_window": SECRET},
        ["CONTRACT_OPS__REMOVAL__RECENT_WINDOW", "CONTRACT_OPS__REMOVAL__BASELINE_WINDOW"]),
    "project distribution": (
        "CONTRACT_OPS__DISTRIBUTION", {"min_rows": 5},
        ["CONTRACT_OPS__DISTRIBUTION__MIN_ROWS"]),
    "project severity": (
        "CONTRACT_OPS__SEVERITY", {"additive": "info"}, ["CONTRACT_OPS__SEVERITY__ADDITIVE"]),
    "project gate": (
        "CONTRACT_OPS__GATE", {"quarantine_dir": SECRET},
        ["CONTRACT_OPS__GATE__QUARANTINE_DIR"]),
    "project dedup": ("CONTRACT_OPS__DEDUP", {"enabled": False}, ["CONTRACT_OPS__DEDUP__ENABLED"]),
    "project rename": (
        "CONTRACT_OPS__RENAME", {"min_confidence": 0.9}, ["CONTRACT_OPS__RENAME__MIN_CONFIDENCE"]),
    "project infer": (
        "CONTRACT_OPS__INFER", {"code_set_max_values": 3},
        ["CONTRACT_OPS__INFER__CODE_SET_MAX_VALUES"]),
    "the project's table": (
        "CONTRACT_OPS", {"sample_rows": 7, "removal": {"recent_window": SECRET}},
        ["CONTRACT_OPS__SAMPLE_ROWS", "CONTRACT_OPS__REMOVAL__RECENT_WINDOW"]),
    "source removal": (
        "SOURCES__APP__CONTRACT_OPS__REMOVAL", {"recent_window": "1h"},
        ["SOURCES__APP__CONTRACT_OPS__REMOVAL__RECENT_WINDOW"]),
    "source distribution": (
        "SOURCES__APP__CONTRACT_OPS__DISTRIBUTION", {"min_rows": 5},
        ["SOURCES__APP__CONTRACT_OPS__DISTRIBUTION__MIN_ROWS"]),
    "source severity": (
        "SOURCES__APP__CONTRACT_OPS__SEVERITY", {"additive": "info"},
        ["SOURCES__APP__CONTRACT_OPS__SEVERITY__ADDITIVE"]),
    "source gate": (
        "SOURCES__APP__CONTRACT_OPS__GATE", {"allow_coercion": True},
        ["SOURCES__APP__CONTRACT_OPS__GATE__ALLOW_COERCION"]),
    "the source's table": (
        "SOURCES__APP__CONTRACT_OPS", {"dataset_name": SECRET},
        ["SOURCES__APP__CONTRACT_OPS__DATASET_NAME"]),
}


def _line(var: str, named: list[str]) -> str:
    table = ".".join(var.lower().split("__"))
    return (
        f"Environment variable `{var}` sets `[{table}]` as one value, which is not read: "
        f"set each key in a variable of its own, `{var}__<KEY>`: "
        + ", ".join(f"`{n}=...`" for n in named) + "."
    )


@pytest.mark.parametrize("case", list(CASES))
def test_a_table_as_one_json_variable_is_one_line_exit_2_and_pages_nothing(
    app_project: Project, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Before, the variable was ignored: `reconcile` swept with the other settings and paged
    the drift (exit 0), `validate` passed."""
    var, value, named = CASES[case]
    expected = _line(var, named)
    result, checked = _refused(app_project, monkeypatch, var, json.dumps(value), expected)
    [problem] = [p for p in checked.stdout.splitlines() if p.startswith("✗ ")]
    assert expected in problem, problem
    assert SECRET not in result.output + checked.output


def _refused(
    project: Project, monkeypatch: pytest.MonkeyPatch, var: str, value: str, expected: str
) -> tuple[Result, Result]:
    """`reconcile --all` and `validate` with `var` set to `value`, a webhook sink configured:
    `reconcile` is the one line `expected`, exit 2, nothing swept or paged; `validate` exits
    2. Both results, for what a case checks more."""
    with Receiver() as hook:
        project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["webhook"]\n')
        project.secrets(
            f'[contract_ops.alert_sink.webhook]\nurl = "{GOOD_URL.format(port=hook.port)}"\n'
        )
        monkeypatch.setenv(var, value)
        result = _cli(project, "reconcile", "--all")
        assert (result.exit_code, result.stdout) == (EXIT_USAGE, ""), result.output
        assert result.stderr.splitlines() == [f"Error: {expected}"]
        checked = _cli(project, "validate")
        assert checked.exit_code == EXIT_USAGE, checked.output
        assert hook.requests == []
        _swept_nothing()
    return result, checked


def test_the_variables_the_line_names_are_read(
    app_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the same settings one variable a key are read, and nothing is refused."""
    monkeypatch.setenv("CONTRACT_OPS__REMOVAL__RECENT_WINDOW", "1h")
    monkeypatch.setenv("SOURCES__APP__CONTRACT_OPS__DISTRIBUTION__MIN_ROWS", "5")
    with project_context(app_project.root):
        project = load_project_settings()
        source = load_source_settings("app", project)
    assert project.removal.recent_window.total_seconds() == 3600
    assert source.distribution.min_rows == 5


def test_a_key_dlt_reads_as_json_is_read_not_refused(
    app_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`models` is a key whose value is a table (resource -> model): dlt reads it from one
    JSON variable, so it is honoured, not refused."""
    monkeypatch.setenv("SOURCES__APP__CONTRACT_OPS__MODELS", '{"events": "app_models:Event"}')
    with project_context(app_project.root):
        source = load_source_settings("app", load_project_settings())
    assert source.models == (("events", "app_models:Event"),)


#: id -> (variable, a value that is no table, the table it names)
NOT_TABLES = {
    "project gate": ("CONTRACT_OPS__GATE", "true", "contract_ops.gate"),
    "project severity": ("CONTRACT_OPS__SEVERITY", "error", "contract_ops.severity"),
    "project rename": ("CONTRACT_OPS__RENAME", "off", "contract_ops.rename"),
    "source gate": ("SOURCES__APP__CONTRACT_OPS__GATE", "true", "sources.app.contract_ops.gate"),
    "source severity": (
        "SOURCES__APP__CONTRACT_OPS__SEVERITY", "warning", "sources.app.contract_ops.severity"),
}


@pytest.mark.parametrize("case", list(NOT_TABLES))
def test_a_table_set_to_a_plain_value_is_one_line_exit_2_and_pages_nothing(
    app_project: Project, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Before, these tables (the project's gate, severity and rename, a source's gate and
    severity) set to a value that is no table were read as no settings at all: the sweep ran
    on the defaults and paged (exit 0). Every table read key by key is checked now, the
    project's and each source's alike (`settings.problems.tables_of`)."""
    var, value, table = NOT_TABLES[case]
    expected = (f"`[{table}]` must be a table: environment variable `{var}` sets it to "
                f"{value!r}.")
    if table.endswith(".severity"):  # what goes in it
        expected += (f" Name a detector's severity in it, e.g. `[{table}]` "
                     '`additive = "error"`.')
    _, checked = _refused(app_project, monkeypatch, var, value, expected)
    assert len([p for p in checked.stdout.splitlines() if expected in p]) == 1, checked.stdout


def test_the_gate_refuses_its_table_set_to_a_plain_value(
    app_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ingest gate reads its settings before the project's: it checks them itself."""
    from dlt_contract_ops.errors import ConfigError
    from dlt_contract_ops.settings.gate import gate_settings

    monkeypatch.setenv("SOURCES__APP__CONTRACT_OPS__GATE", "strict")
    with project_context(app_project.root), pytest.raises(
            ConfigError, match=r"`\[sources\.app\.contract_ops\.gate\]` must be a table"):
        gate_settings("app")
