"""A finding's severity reaches the sinks: Sentry's event `level` (the real sentry-sdk against
the loopback envelope endpoint), the webhook document's `severity` and the logging sink's
level on the CLI's stderr, after a real load into
DuckDB, from the detector's default or the project's and the source's severity tables."""

from __future__ import annotations

import pytest

from tests.projects import Project
from tests.servers import Receiver, dsn, events
from tests.sinks.app_project import CONFIG

SEVERITY_TABLES = [
    pytest.param("", "warning", id="additive-default"),
    pytest.param('[contract_ops.severity]\nadditive = "error"\n', "error", id="project"),
    pytest.param('[contract_ops.severity]\nadditive = "error"\n'
                 '[sources.app.contract_ops.severity]\nadditive = "info"\n', "info", id="source"),
]


@pytest.mark.parametrize(("tables", "level"), SEVERITY_TABLES)
def test_sentry_event_level_is_the_findings_severity(
    app_project: Project, tables: str, level: str
) -> None:
    with Receiver() as sentry:
        app_project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["sentry"]\n' + tables)
        app_project.secrets(f'[contract_ops.alert_sink.sentry]\ndsn = "{dsn(sentry)}"\n')
        proc = app_project.cli("reconcile", "--all")
        assert proc.returncode == 0, proc.stderr
        sentry.wait_for(1)
        [event] = list(events(sentry))
    assert event["level"] == level
    assert event["tags"]["drift_type"] == "additive"


@pytest.mark.parametrize(("tables", "level"), SEVERITY_TABLES)
def test_webhook_document_carries_the_severity(
    app_project: Project, tables: str, level: str
) -> None:
    with Receiver() as hook:
        app_project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["webhook"]\n' + tables)
        app_project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{hook.url}"\n')
        proc = app_project.cli("reconcile", "--all")
        assert proc.returncode == 0, proc.stderr
        [request] = hook.requests
    finding = request.json()["finding"]
    assert (finding["drift_type"], finding["severity"]) == ("additive", level)
    assert list(finding)[:2] == ["drift_type", "severity"]


@pytest.mark.parametrize(("tables", "severity"), SEVERITY_TABLES)
def test_logging_sink_writes_at_the_findings_severity(
    app_project: Project, tables: str, severity: str
) -> None:
    level = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}[severity]
    app_project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["logging"]\n' + tables)
    proc = app_project.cli("reconcile", "--all")
    assert proc.returncode == 0, proc.stderr
    [line] = [ln for ln in proc.stderr.splitlines() if "|dlt_contract_ops.alerts|" in ln]
    assert f"|[{level}]|dlt_contract_ops.alerts|schema drift kind=additive " in line
