"""Onboarding edges: a declared source whose pipeline never ran on this machine is "not
loaded yet" (a note, neither green nor an alert; exit 2 only when nothing could run), and a
project that names its load-time column for dlt-ops does not get it reported as drift. In
process (CliRunner), a real loopback webhook as the sink."""

from __future__ import annotations

import json

from click.testing import CliRunner, Result

from dlt_contract_ops.commands import main
from dlt_contract_ops.commands.common import EXIT_OK, EXIT_USAGE
from tests.projects import Project
from tests.servers import Receiver
from tests.sinks.app_project import CONFIG

FRESH = """
[sources.fresh.contract_ops]
ref = "pipelines.app:app"
pipeline_name = "fresh_pipeline"

[sources.unnamed.contract_ops]
ref = "pipelines.app:app"
"""


def _configure(project: Project, url: str) -> None:
    project.config(
        CONFIG + FRESH + '\n[contract_ops]\nalert_sinks = ["webhook"]\n'
        "[contract_ops.alert_sink.webhook]\ntimeout = 2\nretries = 1\nbackoff = 0.05\n"
    )
    project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{url}"\n')


def _reconcile(project: Project, *args: str) -> Result:
    return CliRunner().invoke(main, ["reconcile", *args, "--project-dir", str(project.root)])


def test_all_runs_the_loaded_sources_and_notes_the_others(app_project: Project) -> None:
    with Receiver() as hook:
        _configure(app_project, hook.url)
        text = _reconcile(app_project, "--all")
        assert text.exit_code == EXIT_OK, text.output
        assert "Traceback" not in text.output
        blocks = text.stdout.split("\n\n")
        [fresh] = [b for b in blocks if b.startswith("Source: fresh ")]
        assert "Not loaded yet" in fresh
        assert "✓" not in fresh
        assert "✗" not in fresh
        assert "`fresh_pipeline` has no local state here" in fresh
        [unnamed] = [b for b in blocks if b.startswith("Source: unnamed ")]
        assert "Not loaded yet" in unnamed
        [app] = [b for b in blocks if b.startswith("Source: app ")]
        assert "additive drift" in app
        # the drift of the loaded source alerts; the sources not loaded page no one
        assert [r.json()["type"] for r in hook.requests] == ["schema_drift"]

        doc = json.loads(_reconcile(app_project, "--all", "--format", "json").stdout)
        fresh_result = next(r for r in doc["results"] if r["source"] == "fresh")
        assert fresh_result["error"] is None
        assert [n[:15] for n in fresh_result["notes"]] == ["not loaded yet:"]


def test_nothing_could_run_is_exit_2(app_project: Project) -> None:
    with Receiver() as hook:
        _configure(app_project, hook.url)
        result = _reconcile(app_project, "-s", "fresh", "-s", "unnamed")
        assert result.exit_code == EXIT_USAGE, result.output
        assert result.stdout.count("Not loaded yet") == 2
        assert hook.requests == []


def test_dlt_ops_load_timestamp_column_is_not_drift(app_project: Project) -> None:
    """A project that already names its load-time column for dlt-ops (`[dlt_ops]
    load_timestamp_column`) does not get that column reported on every table."""
    import duckdb

    from tests.sinks.app_project import DATASET, DB_FILE

    with duckdb.connect(str(app_project.root / DB_FILE)) as con:
        con.execute(f"ALTER TABLE {DATASET}.events ADD COLUMN _loaded_at TIMESTAMPTZ")
        con.execute(f"UPDATE {DATASET}.events SET _loaded_at = now()")
    app_project.config(CONFIG + '[contract_ops]\nalert_sinks = []\n'
                       '[dlt_ops]\nload_timestamp_column = "_loaded_at"\n')
    doc = json.loads(_reconcile(app_project, "-s", "app", "--format", "json").stdout)
    assert [f["columns"] for r in doc["results"] for f in r["findings"]] == [["payload size"]]
