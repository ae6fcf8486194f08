"""A broken acknowledgements file silences nothing: the run alerts as if nothing were
acknowledged, and the file's error (file, line, column) is an error on the result, so the
run exits 1 and the text output shows it. A real dlt load in DuckDB, a loopback webhook."""

from __future__ import annotations

import os

from click.testing import CliRunner

from dlt_contract_ops.acks.store import ACKS_FILE
from dlt_contract_ops.commands import main
from dlt_contract_ops.engine.reconcile import run
from tests.projects import Project
from tests.servers import Receiver
from tests.sinks.app_project import CONFIG

BROKEN = '[[acks]]\nid = "0123456789ab"\nreason = "known"\nby = alice\n'  # line 4: bare value


def _webhook(project: Project, url: str) -> None:
    project.config(
        CONFIG + '\n[contract_ops]\nalert_sinks = ["webhook"]\n'
        "[contract_ops.alert_sink.webhook]\ntimeout = 2\nretries = 0\n"
    )
    project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{url}"\n')


def test_a_broken_acks_file_alerts_as_if_nothing_were_acknowledged(
    app_project: Project,
) -> None:
    (app_project.root / ACKS_FILE).write_text(BROKEN)
    with Receiver() as hook:
        _webhook(app_project, hook.url + "/hook")
        results = run(["app"], project_dir=app_project.root)
        [sent] = hook.requests
    assert sent.json()["finding"]["columns"] == ["payload size"]
    [finding] = [f for r in results for f in r.findings]
    assert finding.alert == "new"
    assert finding.ack is None
    errors = [r.error for r in results if r.error]
    assert len(errors) == 1, errors
    assert "contract_ops_acks.toml" in errors[0]
    assert "line 4, column 6" in errors[0]
    assert "as if nothing were acknowledged" in errors[0]


def test_the_cli_exits_1_and_shows_the_acks_error(app_project: Project) -> None:
    (app_project.root / ACKS_FILE).write_text(BROKEN)
    with Receiver() as hook:
        _webhook(app_project, hook.url + "/hook")
        cwd = os.getcwd()
        os.chdir(app_project.root)
        try:
            outcome = CliRunner().invoke(main, ["reconcile", "--all"])
        finally:
            os.chdir(cwd)
        assert len(hook.requests) == 1
    assert outcome.exit_code == 1, outcome.output
    assert "Traceback" not in outcome.output
    [line] = [x for x in outcome.output.splitlines() if "✗ Error" in x]
    assert "contract_ops_acks.toml" in line
    assert "line 4, column 6" in line
    assert "  • events: additive drift (1 column(s)) [new]" in outcome.output
