"""The Sentry sink with the real sentry-sdk against a loopback envelope endpoint."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.errors import AlertSinkError
from dlt_contract_ops.model.findings import Coverage, DriftFinding
from dlt_contract_ops.settings import project_context
from dlt_contract_ops.sinks.loader import load_sink
from dlt_contract_ops.sinks.sentry_sink import SentrySink
from tests.projects import Project
from tests.servers import Receiver, Reply, decode_body, dsn, events, free_port
from tests.sinks.conftest import make_error, make_finding


def _send(sink: SentrySink, *items: Any, timeout: float = 5.0) -> list[DriftFinding]:
    """Emit `items`, flush, close; return what the sink reports undelivered."""
    for item in items:
        if isinstance(item, DriftFinding):
            sink.emit_drift(item)
        else:
            sink.emit_error(item)
    sink.flush(timeout)
    sink.close()
    return list(sink.undelivered())


def test_drift_event_fingerprint_tags_level_context() -> None:
    finding = make_finding()
    with Receiver() as sentry:
        assert _send(SentrySink(dsn(sentry), environment="prod"), finding) == []
        sentry.wait_for(1)
        [event] = list(events(sentry))
        [request] = sentry.requests
    assert request.path == "/api/42/envelope/"
    assert "sentry_key=publickey" in request.headers["X-Sentry-Auth"]
    assert event["level"] == "warning"
    assert event["fingerprint"] == ["schema-drift", "shop_pipeline", "shop", "Order Items"]
    assert event["tags"] == {
        "pipeline": "shop_pipeline",
        "source": "shop",
        "resource": "Order Items",
        "drift_type": "additive",
    }
    assert event["environment"] == "prod"
    assert event["contexts"]["schema_drift"] == {
        "table": "order_items",
        "columns": ["payload_size", "Straße-Nr"],
        "column_types": {"payload_size": "BIGINT", "Straße-Nr": "VARCHAR"},
        "samples": {"payload_size": [519, 526], "Straße-Nr": ["12a"]},
        "first_seen": "2026-07-16T16:25:09+00:00",
        "reproduce": finding.reproduce,
    }
    assert event["logentry"]["message"] == (
        'schema drift (additive) at shop_pipeline.shop."Order Items": 2 column(s): '
        "payload_size, Straße-Nr"
    )
    assert event["sdk"]["name"] == "dlt-contract-ops"


def test_additive_and_removal_on_one_resource_share_a_fingerprint() -> None:
    additive = make_finding()
    removal = make_finding(
        drift_type="removal",
        columns=["note"],
        column_types={},
        samples={},
        coverage={"note": Coverage(baseline=0.8, recent=0.0)},
    )
    other = make_finding(resource="refunds")
    with Receiver() as sentry:
        assert _send(SentrySink(dsn(sentry)), additive, removal, other) == []
        sentry.wait_for(3)
        got = list(events(sentry))
    assert [e["tags"]["drift_type"] for e in got] == ["additive", "removal", "additive"]
    assert got[0]["fingerprint"] == got[1]["fingerprint"] != got[2]["fingerprint"]
    assert got[1]["contexts"]["schema_drift"]["coverage"] == {
        "note": {"baseline": 0.8, "recent": 0.0}
    }
    assert got[0]["environment"] == "production"


def test_send_samples_false_strips_samples() -> None:
    with Receiver() as sentry:
        # values no event id, timestamp or hostname can contain by chance
        samples = {"payload_size": [987654321987], "Straße-Nr": ["pii-jane@example.org"]}
        sink = SentrySink(dsn(sentry), send_samples=False)
        assert _send(sink, make_finding(samples=samples)) == []
        sentry.wait_for(1)
        [event] = list(events(sentry))
        [request] = sentry.requests
    context = event["contexts"]["schema_drift"]
    assert "samples" not in context
    raw = decode_body(request)
    assert b"987654321987" not in raw
    assert b"pii-jane@example.org" not in raw
    assert context["columns"] == ["payload_size", "Straße-Nr"]


def test_error_event_has_its_own_fingerprint_root_and_the_exception() -> None:
    error = make_error()
    with Receiver() as sentry:
        assert _send(SentrySink(dsn(sentry)), error, make_finding()) == []
        sentry.wait_for(2)
        err, drift = list(events(sentry))
    assert err["level"] == "error"
    assert err["fingerprint"] == [
        "reconciler-error", "shop_pipeline", "shop", "additive", "RuntimeError"
    ]
    assert err["fingerprint"][0] != drift["fingerprint"][0]
    assert err["tags"] == {
        "pipeline": "shop_pipeline", "source": "shop", "resource": "Order Items",
        "detector": "additive",
    }
    [exc] = err["exception"]["values"]
    assert exc["type"] == "RuntimeError"
    assert "does not exist" in exc["value"]
    frames = exc["stacktrace"]["frames"]
    assert frames[-1]["function"] == "make_error"
    assert all("vars" not in f for f in frames)  # locals may hold secrets: never sent
    assert err["contexts"]["reconciler_error"]["message"] == error.message


def test_error_without_exception() -> None:
    with Receiver() as sentry:
        _send(SentrySink(dsn(sentry)), make_error(exception=None, resource=None))
        sentry.wait_for(1)
        [err] = list(events(sentry))
    assert "exception" not in err
    assert err["fingerprint"][-1] == "-"
    assert err["tags"]["resource"] == "-"


def test_unreachable_server_warns_and_reports_undelivered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    finding = make_finding()
    sink = SentrySink(dsn(free_port()))
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        undelivered = _send(sink, finding, make_error(), timeout=3.0)
    assert undelivered == [finding]
    assert "alert sink 'sentry': Sentry at 127.0.0.1 did not accept every event" in caplog.text
    assert "network: 2" in caplog.text


def test_rate_limited_server_warns_and_reports_undelivered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    findings = [make_finding(), make_finding(resource="b"), make_finding(resource="c")]
    with Receiver(default=Reply(429, {"Retry-After": "60"})) as sentry:
        sink = SentrySink(dsn(sentry))
        with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
            undelivered = _send(sink, *findings, timeout=3.0)
        # the first answer was 429: the transport backs off instead of hammering the server
        assert len(sentry.requests) == 1
    assert undelivered == findings
    assert "did not accept every event" in caplog.text
    assert "status_429: 1" in caplog.text
    assert "self_rate_limits: 2" in caplog.text


@pytest.mark.parametrize(
    ("config", "secrets", "env", "message"),
    [
        ("", "", {"SENTRY_DSN": "http://k@127.0.0.1:9/1"},
         r"Alert sink 'sentry' needs option `dsn`: set it in "
         r"`\[contract_ops\.alert_sink\.sentry\]` in \.dlt/secrets\.toml"),
        ('[contract_ops.alert_sink.sentry]\ndsn = "http://k@127.0.0.1:9/1"\n', "", {},
         r"Option `dsn` of alert sink 'sentry' is a secret but is set in \.dlt/config\.toml"),
        ("", '[contract_ops.alert_sink.sentry]\ndsn = "not-a-dsn"\n', {},
         r"Option `dsn` of alert sink 'sentry' is not a Sentry DSN"),
        ('[contract_ops.alert_sink.sentry]\nenviroment = "prod"\n',
         '[contract_ops.alert_sink.sentry]\ndsn = "http://k@127.0.0.1:9/1"\n', {},
         r"Unknown option `enviroment` .* Did you mean `environment`\?"),
        ('[contract_ops.alert_sink.sentry]\nsend_samples = "sometimes"\n',
         '[contract_ops.alert_sink.sentry]\ndsn = "http://k@127.0.0.1:9/1"\n', {},
         r"Option `send_samples` of alert sink 'sentry' must be true or false"),
    ],
)
def test_dsn_only_from_secrets_and_options_checked(
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    config: str,
    secrets: str,
    env: dict[str, str],
    message: str,
) -> None:
    project.config(config or "[runtime]\n")
    if secrets:
        project.secrets(secrets)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with project_context(project.root), pytest.raises(AlertSinkError, match=message):
        load_sink("sentry")


def test_options_from_the_project(project: Project) -> None:
    with Receiver() as sentry:
        project.config('[contract_ops.alert_sink.sentry]\nenvironment = "staging"\n'
                       "send_samples = false\n")
        project.secrets(f'[contract_ops.alert_sink.sentry]\ndsn = "{dsn(sentry)}"\n')
        with project_context(project.root):
            sink = load_sink("sentry")
        assert isinstance(sink, SentrySink)
        assert _send(sink, make_finding()) == []
        sentry.wait_for(1)
        [event] = list(events(sentry))
    assert event["environment"] == "staging"
    assert "samples" not in event["contexts"]["schema_drift"]


REPO = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter (its own global Sentry state), `tests` importable."""
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_missing_sentry_sdk_is_a_fix_it_error() -> None:
    proc = _run(
        """
        import sys
        sys.modules["sentry_sdk"] = None  # what an environment without the extra looks like
        from dlt_contract_ops.errors import AlertSinkError
        from dlt_contract_ops.sinks.loader import load_sink
        try:
            load_sink("sentry", {"dsn": "http://k@127.0.0.1:9/1"})
        except AlertSinkError as exc:
            print(exc)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        "Alert sink 'sentry' needs the sentry-sdk package: "
        "`pip install 'dlt-contract-ops[sentry]'`."
    )


def test_cli_help_does_not_import_sentry_sdk() -> None:
    proc = _run(
        """
        import sys
        from click.testing import CliRunner
        from dlt_contract_ops.cli import main
        for args in (["--help"], ["reconcile", "--help"], ["validate", "--help"],
                     ["sinks", "--help"]):
            assert CliRunner().invoke(main, args).exit_code == 0, args
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("sentry_sdk", "dlt")))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_host_sentry_is_untouched(tmp_path: Any) -> None:
    """A host process with its own Sentry client, profiler, tags and event processor: our
    events carry none of it, its events do not reach our project, and nothing of its global
    state changes."""
    with Receiver() as host, Receiver() as ours:
        proc = _run(
            f"""
            import sentry_sdk
            from sentry_sdk.client import SDK_INFO
            from sentry_sdk.profiler import continuous_profiler
            from sentry_sdk.scope import add_global_event_processor

            seen_by_host = []
            def host_processor(event, hint):
                seen_by_host.append(event.get("logger"))
                return event
            add_global_event_processor(host_processor)
            sentry_sdk.init(dsn="{dsn(host, 1)}", profile_session_sample_rate=1.0,
                            environment="host-env")
            sentry_sdk.set_tag("host_tag", "h")
            sentry_sdk.add_breadcrumb(message="host crumb")
            client, profiler = sentry_sdk.get_client(), continuous_profiler._scheduler
            integrations, sdk_name = dict(client.integrations), SDK_INFO["name"]

            from tests.sinks.conftest import make_error, make_finding
            from dlt_contract_ops.sinks.sentry_sink import SentrySink
            sink = SentrySink("{dsn(ours, 2)}")
            sink.emit_drift(make_finding())
            sink.emit_error(make_error())
            sink.flush(5)
            sink.close()

            assert sentry_sdk.get_client() is client
            assert continuous_profiler._scheduler is profiler
            assert dict(sentry_sdk.get_client().integrations) == integrations
            assert SDK_INFO["name"] == sdk_name
            assert seen_by_host == [], seen_by_host
            sentry_sdk.capture_message("host message")
            sentry_sdk.flush(5)
            print("ok")
            """
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "ok"
        ours.wait_for(2)
        host.wait_for(1)
        our_events, host_events = list(events(ours)), list(events(host))
    assert [e["level"] for e in our_events] == ["warning", "error"]
    for event in our_events:
        assert "host_tag" not in event["tags"]
        assert "breadcrumbs" not in event or not event["breadcrumbs"].get("values")
        assert event["environment"] == "production"
    assert [e.get("message") or e["logentry"]["message"] for e in host_events] == [
        "host message"
    ]
    assert all(r.path == "/api/2/envelope/" for r in ours.requests)
    assert all(r.path == "/api/1/envelope/" for r in host.requests)


def test_no_sink_module_imports_sentry_sdk() -> None:
    proc = _run(
        """
        import importlib, pkgutil, sys
        import dlt_contract_ops.commands, dlt_contract_ops.sinks
        for pkg in (dlt_contract_ops.sinks, dlt_contract_ops.commands):
            for mod in pkgutil.iter_modules(pkg.__path__):
                importlib.import_module(f"{pkg.__name__}.{mod.name}")
        from dlt_contract_ops.sinks.loader import load_factory
        load_factory("sentry")  # the entry point itself is importable without the SDK loaded
        print(sorted(m for m in sys.modules if m.split(".")[0] == "sentry_sdk"))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
