"""`dlt-contract-ops reconcile` end to end with real sinks: a real dlt pipeline in DuckDB, a
loopback webhook receiver and Sentry endpoint, dedup across runs, dry run, no sinks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.projects import Project
from tests.servers import Receiver, Reply, dsn, events, free_port
from tests.sinks.app_project import CONFIG, add_column

ALERT_LINE = (
    "|[WARNING]|dlt_contract_ops.alerts|schema drift kind=additive at=app_pipeline.app.events"
)


def _configure(project: Project, sinks: str, extra: str = "", secrets: str = "") -> None:
    project.config(CONFIG + f"\n[contract_ops]\nalert_sinks = {sinks}\n" + extra)
    if secrets:
        project.secrets(secrets)


def _webhook(project: Project, url: str, sinks: str = '["webhook"]', extra: str = "") -> None:
    _configure(
        project,
        sinks,
        "[contract_ops.alert_sink.webhook]\ntimeout = 2\nretries = 1\nbackoff = 0.05\n" + extra,
        f'[contract_ops.alert_sink.webhook]\nurl = "{url}"\n',
    )


def _findings(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    doc = json.loads(proc.stdout)
    return [f for r in doc["results"] for f in r["findings"]]


def test_dedup_across_runs(app_project: Project) -> None:
    with Receiver() as hook:
        _webhook(app_project, hook.url + "/hook")
        first = _findings(app_project.cli("reconcile", "--all", "--format", "json"))
        assert [(f["columns"], f["alert"]) for f in first] == [(["payload size"], "new")]
        [sent] = hook.requests
        assert sent.json()["finding"]["columns"] == ["payload size"]
        # one load: its rows tie on the time axis, so only the set of samples is meaningful
        samples = sent.json()["finding"]["samples"]
        assert sorted(samples["payload size"]) == [500, 501, 502, 503, 504]

        # the hourly cron runs again: the finding is still reported, marked, not sent
        second = _findings(app_project.cli("reconcile", "--all", "--format", "json"))
        assert [(f["columns"], f["alert"]) for f in second] == [(["payload size"], "repeat")]
        text = app_project.cli("reconcile", "--all")
        assert "  • events: additive drift (1 column(s)) [repeat]" in text.stdout
        assert "Columns: payload size" in text.stdout
        assert len(hook.requests) == 1

        # --no-dedup sends it once more and claims nothing about history
        forced = _findings(app_project.cli("reconcile", "--all", "--format", "json", "--no-dedup"))
        assert [("alert" in f) for f in forced] == [False]
        assert len(hook.requests) == 2

        # drift that widens the column set is a new alert, escalated: it takes the place of
        # the narrower one, which is resolved (superseded)
        add_column(app_project.root, "Ünïcode col")
        third = _findings(app_project.cli("reconcile", "--all", "--format", "json"))
        assert [(f["columns"], f["alert"], f["alert_reason"]) for f in third] == [
            (["payload size", "Ünïcode col"], "new", "escalated")
        ]
        drift, resolved = (r.json() for r in hook.requests[-2:])
        assert (drift["event"], drift["finding"]["columns"]) == (
            "drift", ["payload size", "Ünïcode col"])
        assert (resolved["event"], resolved["finding"]["id"]) == ("resolved", first[0]["id"])
        assert resolved["finding"]["superseded_by"] == third[0]["id"]
        assert len(hook.requests) == 4


def _age_alerts(state_file: Path, seconds: float) -> None:
    """Every alert the state file records moved `seconds` back, as if the run that sent it
    had been that long ago: the time passes in the file an operator keeps, not by waiting."""
    state = json.loads(state_file.read_text())

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key in ("first_alerted", "last_alerted"):
                if isinstance(node.get(key), int | float):
                    node[key] -= seconds
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(state)
    state_file.write_text(json.dumps(state))


def test_realert_after(app_project: Project) -> None:
    with Receiver() as hook:
        _webhook(app_project, hook.url, extra='\n[contract_ops.dedup]\nrealert_after = "1h"\n'
                 'state_file = "alert_state.json"\n')
        assert app_project.cli("reconcile", "--all").returncode == 0
        # within the hour: a repeat, not sent
        soon = _findings(app_project.cli("reconcile", "--all", "--format", "json"))
        assert [f["alert"] for f in soon] == ["repeat"]
        assert len(hook.requests) == 1
        _age_alerts(app_project.root / "alert_state.json", 3601)  # an hour and a second later
        again = _findings(app_project.cli("reconcile", "--all", "--format", "json"))
        assert [f["alert"] for f in again] == ["new"]
        assert len(hook.requests) == 2


def test_dedup_disabled_in_config(app_project: Project) -> None:
    with Receiver() as hook:
        _webhook(app_project, hook.url, extra="\n[contract_ops.dedup]\nenabled = false\n")
        for _ in range(2):
            assert app_project.cli("reconcile", "--all").returncode == 0
        assert len(hook.requests) == 2


def test_dry_run_sends_nothing_and_leaves_the_state(app_project: Project) -> None:
    broken = '[sources.broken.contract_ops]\nref = "pipelines.nope:src"\n'
    with Receiver() as hook:
        _webhook(app_project, hook.url, extra=broken)
        dry = app_project.cli("reconcile", "--all", "--dry-run", "--format", "json")
        assert dry.returncode == 1  # the broken source is a reconciler error
        findings = [f for r in json.loads(dry.stdout)["results"] for f in r["findings"]]
        assert [f["alert"] for f in findings] == ["new"]  # what a real run would do
        assert hook.requests == []  # neither the drift nor the error event
        assert "dlt_contract_ops.alerts" not in dry.stderr
        assert "alert emission suppressed (dry run)" in dry.stderr

        real = app_project.cli("reconcile", "--all", "--format", "json")
        assert real.returncode == 1
        kinds = sorted(r.json()["type"] for r in hook.requests)
        assert kinds == ["reconciler_error", "schema_drift"]
        error = next(r.json() for r in hook.requests if r.json()["type"] == "reconciler_error")
        assert error["error"]["source"] == "broken"
        assert "pipelines.nope" in error["error"]["message"]


def test_empty_alert_sinks_disables_emission(app_project: Project) -> None:
    _configure(app_project, "[]")
    proc = app_project.cli("reconcile", "--all")
    assert proc.returncode == 0, proc.stderr
    assert "  • events: additive drift (1 column(s)) [new]" in proc.stdout
    assert "dlt_contract_ops.alerts" not in proc.stderr
    assert "falling back" not in proc.stderr


def test_default_logging_sink_line(app_project: Project) -> None:
    _configure(app_project, '["logging"]')
    proc = app_project.cli("reconcile", "--all")
    assert proc.returncode == 0, proc.stderr
    [line] = [ln for ln in proc.stderr.splitlines() if "dlt_contract_ops.alerts" in ln]
    assert ALERT_LINE in line
    assert 'table=events columns=["payload size"] id=' in line
    # the reproduce SELECT stays in JSON and the report: the line says where
    assert line.endswith(" | reproduce SELECT: `reconcile --format json` or the report")
    assert "SELECT \"" not in line


def test_an_unreachable_webhook_is_paged_on_the_next_run_not_covered_by_the_log(
    app_project: Project,
) -> None:
    port = free_port()
    _webhook(app_project, f"http://127.0.0.1:{port}/hook", sinks='["webhook", "logging"]')
    proc = app_project.cli("reconcile", "--all", "--format", "json")
    # the log has it, the page did not go out: undelivered, an error, exit 1
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert [f["alert"] for r in doc["results"] for f in r["findings"]] == ["undelivered"]
    [result] = [r for r in doc["results"] if r["findings"]]
    assert result["error"].startswith(
        "alert not delivered to 'webhook' for 1 finding(s) (`events` additive) ('webhook': "
        f"DeliveryError: Webhook POST to http://127.0.0.1:{port} failed after 2 attempt(s)"
    )
    assert ALERT_LINE in proc.stderr
    assert (
        "alert sink 'webhook' did not deliver the drift at app_pipeline.app.events (additive): "
        "writing it to the log instead; it will be sent to 'webhook' again on the next run"
    ) in proc.stderr
    with Receiver() as hook:
        # the URL is a secret: the file is rewritten whole to point it at a live receiver
        (app_project.root / ".dlt" / "secrets.toml").write_text(
            f'[contract_ops.alert_sink.webhook]\nurl = "{hook.url}/hook"\n'
        )
        again = app_project.cli("reconcile", "--all")
        assert again.returncode == 0, again.stderr
        assert "  • events: additive drift (1 column(s)) [new]" in again.stdout
        [sent] = hook.requests
        assert sent.json()["finding"]["columns"] == ["payload size"]
        assert ALERT_LINE not in again.stderr  # the log had it: not written again
        held = app_project.cli("reconcile", "--all")
        assert held.returncode == 0, held.stderr
        assert "  • events: additive drift (1 column(s)) [repeat]" in held.stdout
        assert len(hook.requests) == 1


def test_run_puts_a_delivery_error_on_the_result(app_project: Project) -> None:
    from dlt_contract_ops.engine.reconcile import reconcile_source

    with Receiver(default=Reply(503)) as hook:
        _webhook(app_project, hook.url + "/hook")
        result = reconcile_source("app", project_dir=app_project.root)
        assert len(hook.requests) == 2  # retries = 1
    assert result.error_kind == "delivery"
    assert [(f.columns, f.alert) for f in result.findings] == [(["payload size"], "undelivered")]
    assert result.error is not None
    assert result.error.startswith(
        "alert not delivered for 1 finding(s) (`events` additive): no alert sink confirmed "
        "delivery ('webhook': DeliveryError: Webhook POST to http://127.0.0.1:"
    )
    assert result.error.endswith("will be sent again on the next run.")


def test_an_unknown_sink_is_exit_2_with_a_hint(app_project: Project) -> None:
    """A typo'd sink name is the project's mistake: refused before the sweep (it was dropped
    with a warning, and the sweep fell back to logging, exit 0)."""
    _configure(app_project, '["sentri"]')
    proc = app_project.cli("reconcile", "--all")
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("Error: Unknown alert sink 'sentri'. Did you mean 'sentry'?")


def test_sentry_end_to_end(app_project: Project) -> None:
    with Receiver() as sentry:
        _configure(
            app_project,
            '["sentry"]',
            '[contract_ops.alert_sink.sentry]\nenvironment = "ci"\n',
            f'[contract_ops.alert_sink.sentry]\ndsn = "{dsn(sentry)}"\n',
        )
        proc = app_project.cli("reconcile", "--all")
        assert proc.returncode == 0, proc.stderr
        sentry.wait_for(1)
        [event] = list(events(sentry))
    assert event["fingerprint"] == ["schema-drift", "app_pipeline", "app", "events"]
    assert event["tags"]["drift_type"] == "additive"
    assert event["environment"] == "ci"
    assert event["contexts"]["schema_drift"]["columns"] == ["payload size"]
