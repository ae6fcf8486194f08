"""Delivery is tracked per sink: a finding is settled for a sink once THAT sink delivered it,
and the next run sends it again to the sinks that did not. The logging sink is a local
record, not a page: it settles only itself, and a paging sink that did not deliver is an error
on the result even when the log has the finding.

Real sinks against real loopback receivers (a webhook answering 500 or a closed port, a Sentry
envelope endpoint), a real DuckDB project for the sweep end to end.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.settings import project_context
from dlt_contract_ops.settings.project import DedupSettings
from dlt_contract_ops.sinks.dedup import DedupStore, finding_key
from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sinks.logging_sink import LoggingSink, drift_detail, drift_line
from dlt_contract_ops.sinks.sentry_sink import SentrySink
from dlt_contract_ops.sinks.webhook import WebhookSink
from tests.projects import Project
from tests.servers import Receiver, Reply, dsn, events, free_port
from tests.sinks.app_project import CONFIG
from tests.sinks.conftest import make_finding

DAY = 86400.0


def _alert_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the logging sink (and the fallback) wrote: the `dlt_contract_ops.alerts` records."""
    return [r.getMessage() for r in caplog.records if r.name == "dlt_contract_ops.alerts"]


def _settled(path: Path, finding: DriftFinding) -> set[str]:
    """The sinks the state file records as having delivered `finding`."""
    entry = json.loads(path.read_text())["alerts"].get(finding_key(finding), {})
    return {name for name, rec in entry.get("sinks", {}).items() if "last_alerted" in rec}


def _claims(path: Path) -> list[Any]:
    """Every pending claim left in the state file."""
    alerts = json.loads(path.read_text())["alerts"]
    return [rec["pending"] for e in alerts.values() for rec in e.get("sinks", {}).values()
            if "pending" in rec]


@pytest.mark.parametrize("refusal", ["HTTP 500", "closed port"])
def test_logging_alongside_a_refused_webhook_settles_only_logging(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, refusal: str
) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    with Receiver(default=Reply(500)) as hook:
        refused = hook.url if refusal == "HTTP 500" else f"http://127.0.0.1:{free_port()}"

        def sweep(url: str) -> Emitter:
            emitter = Emitter(
                [("logging", LoggingSink()),
                 ("webhook", WebhookSink(url + "/hook", retries=0, backoff=0))],
                dedup=DedupStore(path, DAY),
            )
            emitter.drift(finding)
            emitter.flush(5.0)
            return emitter

        caplog.set_level(logging.WARNING, logger="dlt_contract_ops")
        failed = sweep(refused)
        # the log has it (the sink's line, then the whole finding), the webhook does not
        assert dict(failed.report.ledger) == {finding.id: "undelivered"}
        assert failed.report.undelivered == [finding]
        assert failed.report.undelivered_to == {finding.id: ("webhook",)}
        assert list(failed.report.failures) == ["webhook"]
        assert _alert_lines(caplog) == [drift_line(finding), drift_detail(finding)]
        assert _settled(path, finding) == {"logging"}
        assert _claims(path) == []
        tried = len(hook.requests)
        assert tried == (1 if refusal == "HTTP 500" else 0)

        hook.default = Reply(200)
        caplog.clear()
        sent = sweep(hook.url)
        assert dict(sent.report.ledger) == {finding.id: "new"}
        assert sent.report.undelivered == []
        assert len(hook.requests) == tried + 1
        assert hook.requests[-1].json()["finding"]["columns"] == ["payload_size", "Straße-Nr"]
        assert _alert_lines(caplog) == []  # the log had it already: not logged as new again
        assert _settled(path, finding) == {"logging", "webhook"}

        caplog.clear()
        held = sweep(hook.url)
        assert dict(held.report.ledger) == {finding.id: "repeat"}
        assert len(hook.requests) == tried + 1
        assert _alert_lines(caplog) == []


def test_sentry_and_webhook_when_only_sentry_fails(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    with Receiver(default=Reply(500)) as sentry, Receiver() as hook:

        def sweep() -> Emitter:
            emitter = Emitter(
                [("sentry", SentrySink(dsn(sentry))),
                 ("webhook", WebhookSink(hook.url, retries=0, backoff=0))],
                dedup=DedupStore(path, DAY),
            )
            emitter.drift(finding)
            emitter.flush(5.0)
            return emitter

        first = sweep()
        assert dict(first.report.ledger) == {finding.id: "undelivered"}
        assert first.report.undelivered_to == {finding.id: ("sentry",)}
        assert len(hook.requests) == 1
        assert _settled(path, finding) == {"webhook"}

        sentry.default = Reply(200)
        seen = len(sentry.requests)
        second = sweep()
        assert dict(second.report.ledger) == {finding.id: "new"}
        assert len(hook.requests) == 1  # the webhook had it: not paged twice
        assert len(sentry.requests) == seen + 1
        [event] = list(events(sentry))[seen:]
        assert event["contexts"]["schema_drift"]["columns"] == ["payload_size", "Straße-Nr"]
        assert _settled(path, finding) == {"sentry", "webhook"}

        third = sweep()
        assert dict(third.report.ledger) == {finding.id: "repeat"}
        assert (len(sentry.requests), len(hook.requests)) == (seen + 1, 1)


def test_a_dry_run_after_a_refused_page_sends_nothing_and_settles_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    with Receiver(default=Reply(500)) as hook:
        emitter = Emitter(
            [("logging", LoggingSink()), ("webhook", WebhookSink(hook.url, retries=0))],
            dedup=DedupStore(path, DAY),
        )
        emitter.drift(finding)
        emitter.flush(5.0)
        written = path.read_bytes()
        hook.default = Reply(200)
        caplog.set_level(logging.WARNING, logger="dlt_contract_ops")
        caplog.clear()
        dry = Emitter.from_names(["logging", "webhook"], dry_run=True,
                                 dedup_settings=DedupSettings(state_file=path))
        dry.drift(finding)
        dry.flush(5.0)
    # what a real run would do: the webhook still has to get it
    assert dict(dry.report.ledger) == {finding.id: "new"}
    assert len(hook.requests) == 1
    assert _alert_lines(caplog) == []
    assert path.read_bytes() == written


# -- a real sweep: reconcile in process, and the CLI's exit code ------------------------------


def _configure(project: Project, url: str) -> Path:
    project.config(
        CONFIG
        + '\n[contract_ops]\nalert_sinks = ["logging", "webhook"]\n'
        + '\n[contract_ops.dedup]\nstate_file = "alert_state.json"\n'
        + "\n[contract_ops.alert_sink.webhook]\ntimeout = 2\nretries = 1\nbackoff = 0.05\n"
    )
    project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{url}"\n')
    return project.root / "alert_state.json"


def test_reconcile_pages_the_webhook_that_refused_on_the_next_run(
    app_project: Project, caplog: pytest.LogCaptureFixture
) -> None:
    from dlt_contract_ops.engine.reconcile import reconcile_source

    caplog.set_level(logging.WARNING, logger="dlt_contract_ops")
    with Receiver(default=Reply(500)) as hook:
        state = _configure(app_project, hook.url + "/hook")
        failed = reconcile_source("app", project_dir=app_project.root)
        assert [(f.columns, f.alert) for f in failed.findings] == [
            (["payload size"], "undelivered")
        ]
        assert failed.error_kind == "delivery"
        assert failed.error is not None
        assert failed.error.startswith(
            "alert not delivered to 'webhook' for 1 finding(s) (`events` additive) "
            f"('webhook': DeliveryError: Webhook POST to {hook.url} failed after 2 attempt(s): "
            "HTTP 500"
        ), failed.error
        assert failed.error.endswith(
            "They were written to the log and will be sent to 'webhook' again on the next run."
        )
        [finding] = failed.findings
        assert _settled(state, finding) == {"logging"}
        assert len(hook.requests) == 2

        hook.default = Reply(200)
        caplog.clear()
        sent = reconcile_source("app", project_dir=app_project.root)
        assert (sent.error, [f.alert for f in sent.findings]) == (None, ["new"])
        assert len(hook.requests) == 3
        assert hook.requests[-1].json()["finding"]["columns"] == ["payload size"]
        assert _alert_lines(caplog) == []
        assert _settled(state, finding) == {"logging", "webhook"}

        held = reconcile_source("app", project_dir=app_project.root)
        assert (held.error, [f.alert for f in held.findings]) == (None, ["repeat"])
        assert len(hook.requests) == 3


def test_the_gate_pages_a_refused_webhook_on_the_next_rejection(project: Project) -> None:
    """`gate.alert` goes through the same emitter: the rule holds for gate findings too."""
    from dlt_contract_ops.ingest.alert import alert_rejection
    from dlt_contract_ops.model.gate import Difference, GateReport

    report = GateReport(
        pipeline="orders_gate", action="rejected", reason="missing: orders.channel",
        differences=[Difference(table="orders", column="channel", change="missing",
                                expected_type="text")],
    )
    with Receiver(default=Reply(500)) as hook:
        project.config('[contract_ops]\nalert_sinks = ["logging", "webhook"]\n'
                       '[contract_ops.dedup]\nstate_file = "alert_state.json"\n'
                       "[contract_ops.alert_sink.webhook]\nretries = 0\n")
        project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{hook.url}/gate"\n')
        with project_context(project.root):
            failed = alert_rejection(report, "orders", None, dry_run=False)
            assert len(hook.requests) == 1
            hook.default = Reply(200)
            sent = alert_rejection(report, "orders", None, dry_run=False)
            # the log had the rejection; the webhook had not: it gets it now
            assert [r.json()["finding"]["drift_type"] for r in hook.requests[1:]] == ["gate"]
            again = alert_rejection(report, "orders", None, dry_run=False)
            assert len(hook.requests) == 2
    assert [f.drift_type for f in failed.undelivered] == ["gate"]
    assert failed.undelivered_to == {failed.undelivered[0].id: ("webhook",)}
    assert sent.undelivered == []
    assert list(again.ledger.values()) == ["repeat"]
