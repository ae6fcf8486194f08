"""The lifecycle of an alert through real reconciles on DuckDB: a drifted column appears (new),
goes away (resolved, a resolve event per sink), comes back (reopened, pages again) and widens
(escalated, pages again; the narrower finding is resolved as superseded). Only a complete sweep
of a table resolves there (docs/sinks.md, "Lifecycle")."""

from __future__ import annotations

import json
import logging
from typing import Any

import duckdb
import pytest

from dlt_contract_ops.detection.source_input import SourceInput
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.engine.swept import checked_tables
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.output.text import to_json, to_text
from dlt_contract_ops.sinks.base import ErrorEvent
from dlt_contract_ops.sinks.memory import MemorySink
from tests.projects import Project
from tests.servers import Receiver, Reply
from tests.sinks.app_project import CONFIG, DATASET, DB_FILE, add_column

COLUMN = "payload size"


def _sql(project: Project, statement: str) -> None:
    with duckdb.connect(str(project.root / DB_FILE)) as con:
        con.execute(statement)


def _drop(project: Project, column: str = COLUMN) -> None:
    _sql(project, f'ALTER TABLE {DATASET}.events DROP COLUMN "{column}"')


def _restore(project: Project) -> None:
    _sql(project, f'ALTER TABLE {DATASET}.events ADD COLUMN "{COLUMN}" BIGINT')


def _sweep(project: Project, sink: MemorySink, **kwargs: Any) -> list[ReconcileResult]:
    return run(["app"], project_dir=project.root, alert_sinks=[sink], **kwargs)


def _findings(results: list[ReconcileResult]) -> list[DriftFinding]:
    return [f for r in results for f in r.findings]


def test_appear_resolve_reopen_escalate(app_project: Project) -> None:
    sink = MemorySink()
    [first] = _findings(_sweep(app_project, sink))
    assert (first.alert, first.alert_reason) == ("new", None)
    [again] = _findings(_sweep(app_project, sink))
    assert again.alert == "repeat"
    assert sink.resolved == []

    _drop(app_project)  # the drift goes away
    results = _sweep(app_project, sink)
    assert _findings(results) == []
    [resolved] = sink.resolved
    assert (resolved.id, resolved.columns, resolved.superseded_by) == (
        first.id, (COLUMN,), None)
    assert (resolved.source, resolved.table, resolved.drift_type, resolved.pipeline) == (
        "app", "events", "additive", "app_pipeline")
    note = f"resolved: additive drift of `events` (`{COLUMN}`), id {first.id}: no longer found"
    assert note in results[0].notes
    _sweep(app_project, sink)
    assert len(sink.resolved) == 1  # delivered once: not sent again

    _restore(app_project)  # it comes back: reopened, paged again at once
    reopened = _sweep(app_project, sink)
    [back] = _findings(reopened)
    assert (back.id, back.alert, back.alert_reason) == (first.id, "new", "reopened")
    assert [f.id for f in sink.drift] == [first.id, first.id]
    assert "additive drift (1 column(s)) [reopened]" in to_text(reopened)
    assert json.loads(to_json(reopened))["results"][0]["findings"][0]["alert_reason"] == (
        "reopened")

    add_column(app_project.root, "more")  # it widens: escalated, the narrower one superseded
    [wider] = _findings(_sweep(app_project, sink))
    assert sorted(wider.columns) == ["more", COLUMN]
    assert (wider.alert, wider.alert_reason) == ("new", "escalated")
    assert [(a.id, a.superseded_by) for a in sink.resolved[1:]] == [(first.id, wider.id)]


def test_only_a_complete_sweep_of_the_table_resolves(app_project: Project) -> None:
    sink = MemorySink()
    [first] = _findings(_sweep(app_project, sink))
    _drop(app_project)

    _sweep(app_project, sink, dry_run=True)  # a dry run resolves nothing
    _sweep(app_project, sink, detectors=("missing",))  # additive did not run
    db = app_project.root / DB_FILE
    db.rename(db.with_suffix(".away"))  # the source fails: its dataset has no tables
    failed = _sweep(app_project, sink)
    assert failed[0].error is not None
    db.with_suffix(".away").rename(db)
    assert sink.resolved == []

    _sweep(app_project, sink)
    assert [a.id for a in sink.resolved] == [first.id]


def test_a_table_a_detector_reported_an_error_for_is_not_checked(app_project: Project) -> None:
    """The rule on a real sweep's context: an error naming a resource takes its tables out;
    one naming none takes the source's; a failed result with no error named, the same."""
    seen: list[tuple[SourceInput, list[ReconcileResult]]] = []
    run(["app"], project_dir=app_project.root, dry_run=True,
        inspect=lambda ctx, results: seen.append((ctx, results)))
    [(ctx, results)] = seen
    every = {("app", r.detector, "events") for r in results}
    assert checked_tables(ctx, results, []) == every

    def error(resource: str | None, detector: str = "additive") -> ErrorEvent:
        return ErrorEvent(source="app", message="x", resource=resource, detector=detector)

    assert checked_tables(ctx, results, [error("events")]) == every - {
        ("app", "additive", "events")}
    assert checked_tables(ctx, results, [error(None, "type")]) == every - {
        ("app", "type", "events")}
    failed = [r.model_copy(update={"error": "boom", "error_kind": "query"})
              if r.detector == "missing" else r for r in results]
    assert checked_tables(ctx, failed, []) == every - {("app", "missing", "events")}


def _hooks(project: Project, url: str, fmt: str = "json") -> None:
    project.config(
        CONFIG + '\n[contract_ops]\nalert_sinks = ["webhook", "pagerduty"]\n'
        f'[contract_ops.alert_sink.webhook]\nformat = "{fmt}"\nretries = 0\n'
        f'[contract_ops.alert_sink.pagerduty]\nurl = "{url}/pd"\nretries = 0\n'
    )
    project.secrets(
        f'[contract_ops.alert_sink.webhook]\nurl = "{url}/hook"\n'
        f'[contract_ops.alert_sink.pagerduty]\nrouting_key = "{"R" * 32}"\n'
    )


def _by_path(hook: Receiver, path: str) -> list[dict[str, Any]]:
    return [r.json() for r in hook.requests if r.path == path]


def test_webhook_and_pagerduty_get_trigger_and_resolve(app_project: Project) -> None:
    with Receiver(default=Reply(202)) as hook:
        _hooks(app_project, hook.url)
        proc = app_project.cli("reconcile", "-s", "app", "--format", "json")
        assert proc.returncode == 0, proc.stderr
        [finding] = json.loads(proc.stdout)["results"][0]["findings"]
        _drop(app_project)
        assert app_project.cli("reconcile", "-s", "app").returncode == 0

    [drift, resolved] = _by_path(hook, "/hook")
    assert (drift["event"], drift["type"], drift["version"]) == ("drift", "schema_drift", 2)
    assert (resolved["event"], resolved["type"]) == ("resolved", "schema_drift")
    assert resolved["finding"] == {
        "id": finding["id"], "drift_type": "additive", "source": "app",
        "pipeline": "app_pipeline", "resource": "events", "table": "events",
        "columns": [COLUMN], "resolved_at": resolved["finding"]["resolved_at"],
        "superseded_by": None,
    }
    assert resolved["summary"] == (
        f"schema drift (additive) resolved at app_pipeline.app.events: 1 column(s): {COLUMN}")

    [trigger, resolve] = _by_path(hook, "/pd")
    assert trigger["routing_key"] == "R" * 32
    assert (trigger["event_action"], trigger["dedup_key"]) == ("trigger", finding["id"])
    payload = trigger["payload"]
    assert (payload["severity"], payload["source"], payload["component"]) == (
        "warning", "app_pipeline.app.events", "events")
    assert payload["summary"] == (
        f"schema drift (additive) at app_pipeline.app.events: 1 column(s): {COLUMN}")
    details = payload["custom_details"]
    assert (details["id"], details["columns"], details["drift_type"]) == (
        finding["id"], [COLUMN], "additive")
    assert resolve == {"routing_key": "R" * 32, "event_action": "resolve",
                       "dedup_key": finding["id"]}


def test_slack_says_resolved(app_project: Project) -> None:
    with Receiver() as hook:
        _hooks(app_project, hook.url, fmt="slack")
        assert app_project.cli("reconcile", "-s", "app").returncode == 0
        _drop(app_project)
        assert app_project.cli("reconcile", "-s", "app").returncode == 0
    [_, resolved] = _by_path(hook, "/hook")
    assert resolved["text"] == (
        f"Resolved: schema drift (additive) resolved at app_pipeline.app.events: 1 column(s): "
        f"{COLUMN}")
    header = resolved["blocks"][0]["text"]["text"]
    assert header == "Resolved: schema drift (additive): events"


def test_an_undelivered_resolve_is_sent_again_next_run(
    app_project: Project, caplog: pytest.LogCaptureFixture
) -> None:
    with Receiver(replies=[Reply(202), Reply(202), Reply(503)], default=Reply(202)) as hook:
        _hooks(app_project, hook.url)
        assert app_project.cli("reconcile", "-s", "app").returncode == 0  # webhook, pd
        _drop(app_project)
        with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
            proc = app_project.cli("reconcile", "-s", "app")
        assert proc.returncode == 0  # a late resolve is retried, not a failed sweep
        assert "did not deliver the resolve of" in proc.stderr + caplog.text
        assert [r.json()["event"] for r in hook.requests if r.path == "/hook"] == [
            "drift", "resolved"]  # the 503: retries = 0
        assert [r.json()["event_action"] for r in hook.requests if r.path == "/pd"] == [
            "trigger", "resolve"]

        assert app_project.cli("reconcile", "-s", "app").returncode == 0
        hooks = [r.json()["event"] for r in hook.requests if r.path == "/hook"]
        pd = [r.json()["event_action"] for r in hook.requests if r.path == "/pd"]
        assert (hooks, pd) == (["drift", "resolved", "resolved"], ["trigger", "resolve"])

        assert app_project.cli("reconcile", "-s", "app").returncode == 0
        assert len(hook.requests) == 5  # nothing due any more


def test_a_new_sink_is_never_told_of_a_resolve_it_never_paged(app_project: Project) -> None:
    first, later = MemorySink("first"), MemorySink("later")
    _sweep(app_project, first)
    _drop(app_project)
    _sweep(app_project, first)  # resolved at `first`
    run(["app"], project_dir=app_project.root, alert_sinks=[first, later])
    assert (len(first.resolved), later.resolved) == (1, [])


@pytest.mark.postgres
def test_resolve_and_reopen_on_postgres(project: Project) -> None:
    """The same lifecycle against PostgreSQL: a real load, a column added behind the model,
    dropped, added back."""
    import uuid

    import psycopg2

    from tests.conftest import require_server
    from tests.sinks.app_project import APP

    require_server("127.0.0.1", 5432, "PostgreSQL")
    dsn = "postgresql://postgres:x@127.0.0.1:5432/test"
    dataset = f"co_life_{uuid.uuid4().hex[:8]}"
    project.module("pipelines.app", APP)
    project.secrets(f'[destination.postgres]\ncredentials = "{dsn}"\n')
    project.source("app", "pipelines.app:app", pipeline_name="life_pipe",
                   destination="postgres", dataset_name=dataset)
    project.python(f"""
        import dlt
        from pipelines.app import app
        dlt.pipeline("life_pipe", destination="postgres", dataset_name="{dataset}").run(app())
        """)

    def sql(statement: str) -> None:
        with psycopg2.connect(dsn) as con, con.cursor() as cur:
            cur.execute(statement)

    try:
        sql(f'ALTER TABLE "{dataset}".events ADD COLUMN "{COLUMN}" BIGINT')
        sink = MemorySink()
        [first] = _findings(_sweep(project, sink))
        assert first.alert == "new"
        sql(f'ALTER TABLE "{dataset}".events DROP COLUMN "{COLUMN}"')
        assert _findings(_sweep(project, sink)) == []
        assert [a.id for a in sink.resolved] == [first.id]
        sql(f'ALTER TABLE "{dataset}".events ADD COLUMN "{COLUMN}" BIGINT')
        [back] = _findings(_sweep(project, sink))
        assert (back.id, back.alert, back.alert_reason) == (first.id, "new", "reopened")
    finally:
        sql(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')


def test_the_report_lists_an_escalated_finding_as_the_lifecycle_says(
    app_project: Project,
) -> None:
    """The morning report's "escalated" comes from the alert's lifecycle (the dedup state a
    paging run keeps), not worked out again: a finding alerted, then widened, is escalated on
    the report's (dry-run) page, and the narrower one is not listed as new."""
    from dlt_contract_ops.engine.report import Gatherer
    from dlt_contract_ops.settings.files import project_context

    sink = MemorySink()
    [first] = _findings(_sweep(app_project, sink))  # paged and recorded: not a dry run
    add_column(app_project.root, "more")  # it widens after the page
    gatherer = Gatherer(app_project.root)
    with project_context(app_project.root):
        results = gatherer.run(["app"])
    since = gatherer.report(results).since
    assert since is not None
    assert since.previous is not None
    [wider] = [f for f in _findings(results) if f.drift_type == "additive"]
    assert sorted(wider.columns) == ["more", COLUMN]
    assert wider.id != first.id
    assert [f.id for f in since.escalated] == [wider.id]
    assert wider.id not in {f.id for f in (*since.new, *since.reopened)}
