"""A configuration mistake that would silence a page is refused before anything is swept or
alerted: a near miss of a key (`alert_sink` for `alert_sinks`, `timeot`), a webhook `url` that
cannot be POSTed to. `reconcile` exits 2 with one `Error:` line naming the key and what to do,
and `validate` exits 2 on the same problem; the other, valid sink (Sentry, on a loopback
receiver) gets nothing. Before, the sink was dropped with a WARNING and the sweep paged the
rest (exit 0)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from dlt_contract_ops.commands import main
from dlt_contract_ops.commands.common import EXIT_USAGE
from tests.projects import Project
from tests.servers import Receiver, dsn
from tests.sinks.app_project import CONFIG

GOOD_URL = "http://127.0.0.1:{port}/hook"

#: the webhook's table in config.toml (its `url` is a secret)
WEBHOOK = "[contract_ops.alert_sink.webhook]\nretries = 0\n"

#: id -> (`[contract_ops]` lines, the webhook's table in config.toml, its url, what the one
#: line says)
CASES = {
    "singular alert_sink": (
        'alert_sinks = ["sentry"]\nalert_sink = ["webhook"]\n', "", GOOD_URL,
        "Did you mean `alert_sinks`?"),
    "unknown project key": (
        'alert_sinks = ["sentry", "webhook"]\nquery_timout = 30\n', WEBHOOK, GOOD_URL,
        "Did you mean `query_timeout`?"),
    "unknown sink option": (
        'alert_sinks = ["sentry", "webhook"]\n', WEBHOOK + "timeot = 3\n", GOOD_URL,
        "Did you mean `timeout`?"),
    "htps": ('alert_sinks = ["sentry", "webhook"]\n', WEBHOOK, "htps://127.0.0.1:{port}/hook",
             "its scheme is 'htps'"),
    "ftp": ('alert_sinks = ["sentry", "webhook"]\n', WEBHOOK, "ftp://127.0.0.1:{port}/hook",
            "its scheme is 'ftp'"),
    "not a url": ('alert_sinks = ["sentry", "webhook"]\n', WEBHOOK, "not a url",
                  "it has no scheme"),
    "port out of range": ('alert_sinks = ["sentry", "webhook"]\n', WEBHOOK,
                          "http://127.0.0.1:99999/hook", "its port is not 1 to 65535"),
    "no host": ('alert_sinks = ["sentry", "webhook"]\n', WEBHOOK, "http:///hook", "it has no host"),
}


def _cli(project: Project, *args: str) -> Result:
    return CliRunner().invoke(main, [*args, "--project-dir", str(project.root)])


def _swept_nothing() -> None:
    """No finding index, alert state or profile: the sweep never started."""
    folder = Path(os.environ["DLT_DATA_DIR"]) / "contract_ops"
    assert not folder.exists() or not any(p.is_file() for p in folder.rglob("*")), folder


@pytest.mark.parametrize("case", list(CASES))
def test_a_sink_that_cannot_be_built_is_exit_2_in_one_line_and_pages_nothing(
    app_project: Project, case: str
) -> None:
    settings, webhook, url, needle = CASES[case]
    with Receiver() as sentry, Receiver() as hook:
        app_project.config(CONFIG + "\n[contract_ops]\n" + settings + "\n" + webhook)
        app_project.secrets(
            f'[contract_ops.alert_sink.sentry]\ndsn = "{dsn(sentry)}"\n'
            f'[contract_ops.alert_sink.webhook]\nurl = "{url.format(port=hook.port)}"\n'
        )
        result = _cli(app_project, "reconcile", "--all")
        assert (result.exit_code, result.stdout) == (EXIT_USAGE, ""), result.output
        [line] = result.stderr.splitlines()
        assert line.startswith("Error: "), line
        assert needle in line, line
        assert (sentry.requests, hook.requests) == ([], [])
        _swept_nothing()

        checked = _cli(app_project, "validate")
        assert checked.exit_code == EXIT_USAGE, checked.output
        [problem] = [p for p in checked.stdout.splitlines() if p.startswith("✗ ")]
        assert needle in problem, problem
        assert (sentry.requests, hook.requests) == ([], [])


def test_a_valid_sink_config_still_sweeps_and_pages(app_project: Project) -> None:
    """The control: the same project with a good url runs and pages both sinks."""
    with Receiver() as sentry, Receiver() as hook:
        app_project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["sentry", "webhook"]\n')
        app_project.secrets(
            f'[contract_ops.alert_sink.sentry]\ndsn = "{dsn(sentry)}"\n'
            f'[contract_ops.alert_sink.webhook]\nurl = "{GOOD_URL.format(port=hook.port)}"\n'
        )
        assert _cli(app_project, "validate").exit_code == 0
        result = _cli(app_project, "reconcile", "--all")
        assert result.exit_code == 0, result.output
        assert [r.json()["type"] for r in hook.requests] == ["schema_drift"]
        assert sentry.requests


def test_an_unwritable_output_is_refused_before_the_sweep(app_project: Project) -> None:
    with Receiver() as hook:
        app_project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["webhook"]\n')
        app_project.secrets(
            f'[contract_ops.alert_sink.webhook]\nurl = "{GOOD_URL.format(port=hook.port)}"\n'
        )
        for args in (("reconcile", "--all", "--output"), ("report", "--html")):
            result = _cli(app_project, *args, "/nonexistent/dir/x.json")
            assert (result.exit_code, result.stdout) == (EXIT_USAGE, ""), result.output
            [line] = result.stderr.splitlines()
            assert line == ("Error: cannot write `/nonexistent/dir/x.json`: its folder "
                            "`/nonexistent/dir` does not exist; choose another file.")
            assert hook.requests == []
            _swept_nothing()


#: the list of sinks in the environment, as a user may write it: (variable, value, the line)
_JSON_LIST = """CONTRACT_OPS__ALERT_SINKS='["sentry", "webhook"]'"""
ENV_CASES = {
    "singular variable, JSON list": (
        "CONTRACT_OPS__ALERT_SINK", '["sentry","webhook"]',
        "Error: `[contract_ops.alert_sink]` must be a table: environment variable "
        """`CONTRACT_OPS__ALERT_SINK` sets it to '["sentry","webhook"]'. Did you mean """
        f"`{_JSON_LIST}`?"),
    "singular variable, commas": (
        "CONTRACT_OPS__ALERT_SINK", "sentry,webhook",
        "Error: `[contract_ops.alert_sink]` must be a table: environment variable "
        "`CONTRACT_OPS__ALERT_SINK` sets it to 'sentry,webhook'. Did you mean "
        f"`{_JSON_LIST}`?"),
    "commas": (
        "CONTRACT_OPS__ALERT_SINKS", "sentry,webhook",
        "Error: `alert_sinks` in `[contract_ops]` (environment variable "
        "`CONTRACT_OPS__ALERT_SINKS`) names one sink 'sentry,webhook': list each sink on its "
        'own, `alert_sinks = ["sentry", "webhook"]`, in the environment as JSON: '
        f"`{_JSON_LIST}`."),
    "spaces": (
        "CONTRACT_OPS__ALERT_SINKS", "sentry webhook",
        "Error: `alert_sinks` in `[contract_ops]` (environment variable "
        "`CONTRACT_OPS__ALERT_SINKS`) names one sink 'sentry webhook': list each sink on its "
        'own, `alert_sinks = ["sentry", "webhook"]`, in the environment as JSON: '
        f"`{_JSON_LIST}`."),
}


def _sinks_on(project: Project, sentry: Receiver, hook: Receiver) -> None:
    project.config(CONFIG)
    project.secrets(
        f'[contract_ops.alert_sink.sentry]\ndsn = "{dsn(sentry)}"\n'
        f'[contract_ops.alert_sink.webhook]\nurl = "{GOOD_URL.format(port=hook.port)}"\n'
    )


@pytest.mark.parametrize("case", list(ENV_CASES))
def test_a_list_of_sinks_the_environment_cannot_mean_is_one_line_exit_2(
    app_project: Project, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Before, `CONTRACT_OPS__ALERT_SINK` was dlt's "cannot be coerced into dict" naming the
    variable twice, and `CONTRACT_OPS__ALERT_SINKS=sentry,webhook` an unknown sink
    'sentry,webhook' (did you mean 'webhook'?)."""
    var, value, expected = ENV_CASES[case]
    monkeypatch.setenv(var, value)
    with Receiver() as sentry, Receiver() as hook:
        _sinks_on(app_project, sentry, hook)
        result = _cli(app_project, "reconcile", "--all")
        assert (result.exit_code, result.stdout) == (EXIT_USAGE, ""), result.output
        assert result.stderr.splitlines() == [expected]
        checked = _cli(app_project, "validate")
        assert checked.exit_code == EXIT_USAGE, checked.output
        [problem] = [p for p in checked.stdout.splitlines() if p.startswith("✗ ")]
        assert expected.removeprefix("Error: ") in problem, problem
        assert (sentry.requests, hook.requests) == ([], [])
        _swept_nothing()


def test_the_json_list_in_the_environment_pages_both(
    app_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the documented way (docs/configuration.md) runs and pages both sinks."""
    monkeypatch.setenv("CONTRACT_OPS__ALERT_SINKS", '["sentry", "webhook"]')
    with Receiver() as sentry, Receiver() as hook:
        _sinks_on(app_project, sentry, hook)
        assert _cli(app_project, "validate").exit_code == 0
        result = _cli(app_project, "reconcile", "--all")
        assert result.exit_code == 0, result.output
        assert [r.json()["type"] for r in hook.requests] == ["schema_drift"]
        assert sentry.requests


#: the sinks' options set as a table in one variable, which dlt does not read (its options are
#: read one variable each): (variable, value, the line)
_EACH = "set each option in a variable of its own, `CONTRACT_OPS__ALERT_SINK__<NAME>__<KEY>`"
TABLE_ENV_CASES = {
    "the sinks' table as JSON": (
        "CONTRACT_OPS__ALERT_SINK", '{{"webhook": {{"url": "{url}", "timeout": 3}}}}',
        "Error: Environment variable `CONTRACT_OPS__ALERT_SINK` sets "
        "`[contract_ops.alert_sink]` as one value, which is not read: " + _EACH + ": "
        "`CONTRACT_OPS__ALERT_SINK__WEBHOOK__URL=...`, "
        "`CONTRACT_OPS__ALERT_SINK__WEBHOOK__TIMEOUT=...`."),
    "one sink's table as JSON": (
        "CONTRACT_OPS__ALERT_SINK__WEBHOOK", '{{"url": "{url}"}}',
        "Error: Environment variable `CONTRACT_OPS__ALERT_SINK__WEBHOOK` sets "
        "`[contract_ops.alert_sink.webhook]` as one value, which is not read: " + _EACH + ": "
        "`CONTRACT_OPS__ALERT_SINK__WEBHOOK__URL=...`."),
    "an option's key": (
        "CONTRACT_OPS__ALERT_SINK__WEBHOOK__HEADERS__X_TOKEN", "abc",
        "Error: Environment variable `CONTRACT_OPS__ALERT_SINK__WEBHOOK__HEADERS__X_TOKEN` is "
        "not read: option `headers` of alert sink 'webhook' is set whole, as JSON: "
        """`CONTRACT_OPS__ALERT_SINK__WEBHOOK__HEADERS='{"X_TOKEN": "..."}'`."""),
}


@pytest.mark.parametrize("case", list(TABLE_ENV_CASES))
def test_sink_options_the_environment_does_not_read_are_one_line_exit_2(
    app_project: Project, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Before, the variable was ignored: the sweep paged the url of secrets.toml (exit 0),
    not the one the environment gave. Its values (a url, a dsn) are secrets: never shown."""
    var, value, expected = TABLE_ENV_CASES[case]
    monkeypatch.setenv("CONTRACT_OPS__ALERT_SINKS", '["sentry", "webhook"]')
    with Receiver() as sentry, Receiver() as hook, Receiver() as meant:
        monkeypatch.setenv(var, value.format(url=GOOD_URL.format(port=meant.port)))
        _sinks_on(app_project, sentry, hook)
        result = _cli(app_project, "reconcile", "--all")
        assert (result.exit_code, result.stdout) == (EXIT_USAGE, ""), result.output
        assert result.stderr.splitlines() == [expected]
        checked = _cli(app_project, "validate")
        assert checked.exit_code == EXIT_USAGE, checked.output
        [problem] = [p for p in checked.stdout.splitlines() if p.startswith("✗ ")]
        assert expected.removeprefix("Error: ") in problem, problem
        assert (sentry.requests, hook.requests, meant.requests) == ([], [], [])
        _swept_nothing()
