"""A user's mistake never pages the on-call: an unknown source, an unknown key, a bad option
or a missing credential is exit 2 with a plain message and reaches no alert sink; a failure of
a configured, valid sweep still alerts. In process (CliRunner), with a real loopback webhook
receiver configured as the sink."""

from __future__ import annotations

import duckdb
import pytest
from click.testing import CliRunner, Result

from dlt_contract_ops.commands import main
from dlt_contract_ops.commands.common import EXIT_SOURCE_ERROR, EXIT_USAGE
from tests.projects import Project
from tests.servers import Receiver, free_port
from tests.sinks.app_project import CONFIG, DATASET, DB_FILE

PG = """
[sources.pg.contract_ops]
ref = "pipelines.app:app"
pipeline_name = "pg_pipeline"
destination = "postgres"
dataset_name = "usage_errors_pg"
"""


def _configure(project: Project, url: str, extra: str = "", secrets: str = "") -> None:
    project.config(
        CONFIG + extra + '\n[contract_ops]\nalert_sinks = ["webhook"]\n'
        "[contract_ops.alert_sink.webhook]\ntimeout = 2\nretries = 1\nbackoff = 0.05\n"
    )
    project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{url}"\n' + secrets)


def _reconcile(project: Project, *args: str) -> Result:
    return CliRunner().invoke(main, ["reconcile", *args, "--project-dir", str(project.root)])


def _plain(text: str) -> None:
    assert "Traceback" not in text
    assert "\\n" not in text  # one line of its own, no line break of dlt's escaped in it


def test_unknown_source_is_one_line_exit_2_and_no_alert(app_project: Project) -> None:
    with Receiver() as hook:
        _configure(app_project, hook.url)
        result = _reconcile(app_project, "-s", "appp")
        assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
        [line] = result.stderr.splitlines()
        assert line.startswith("Error: Unknown source `appp`")
        assert "Did you mean `app`?" in line
        # a known source next to the typo: the request is wrong, nothing runs
        result = _reconcile(app_project, "-s", "app", "-s", "appp")
        assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
        assert len(result.stderr.splitlines()) == 1
        assert hook.requests == []


def test_unknown_key_is_exit_2_and_no_alert(app_project: Project) -> None:
    with Receiver() as hook:
        _configure(app_project, hook.url,
                   "\n[sources.app.contract_ops.removal]\nrecent_windw = \"1h\"\n")
        result = _reconcile(app_project, "-s", "app")
        assert result.exit_code == EXIT_USAGE, result.output
        assert "recent_windw" in result.output
        _plain(result.output)
        assert hook.requests == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--all", "--recent-window", "six hours"), "--recent-window"),
        (("--all", "--baseline-threshold", "7"), "--baseline-threshold"),
        (("--all", "-s", "app"), "not both"),
    ],
)
def test_bad_option_is_exit_2_and_no_alert(
    app_project: Project, args: tuple[str, ...], needle: str
) -> None:
    with Receiver() as hook:
        _configure(app_project, hook.url)
        result = _reconcile(app_project, *args)
        assert result.exit_code == EXIT_USAGE, result.output
        assert needle in result.stderr
        _plain(result.output)
        assert hook.requests == []


def test_missing_postgres_credentials_are_one_line_exit_2_and_no_alert(
    app_project: Project,
) -> None:
    with Receiver() as hook:
        _configure(app_project, hook.url, PG)
        result = _reconcile(app_project, "-s", "pg")
        assert result.exit_code == EXIT_USAGE, result.output
        _plain(result.output)
        # one line: not dlt's thirty-line trace of every provider it tried
        [first] = [line for line in result.output.splitlines() if "not configured" in line]
        assert "`postgres`" in first
        assert "`pg_pipeline`" in first
        assert "`password`" in first
        assert "\t" not in result.output
        assert hook.requests == []

        # next to a source that runs: it is reported, the other runs and alerts its drift
        result = _reconcile(app_project, "--all", "--format", "json")
        assert result.exit_code == EXIT_USAGE
        assert [r.json()["type"] for r in hook.requests] == ["schema_drift"]


def test_a_failing_valid_sweep_still_alerts(app_project: Project) -> None:
    with duckdb.connect(str(app_project.root / DB_FILE)) as con:
        con.execute(f"DROP SCHEMA {DATASET} CASCADE")
    port = free_port()
    unreachable = PG.replace("pg_pipeline", "pg_down_pipeline")
    secrets = (f'[pg_down_pipeline.destination.postgres.credentials]\n'
               f'host = "127.0.0.1"\nport = {port}\ndatabase = "test"\n'
               'username = "postgres"\npassword = "x"\nconnect_timeout = 2\n')
    with Receiver() as hook:
        _configure(app_project, hook.url, unreachable, secrets)
        result = _reconcile(app_project, "--all", "--format", "json")
        assert result.exit_code == EXIT_SOURCE_ERROR, result.output
        errors = sorted(
            r.json()["error"]["source"] for r in hook.requests
            if r.json()["type"] == "reconciler_error"
        )
        assert errors == ["app", "pg"]
