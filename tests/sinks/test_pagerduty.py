"""The PagerDuty sink against a loopback Events API v2 receiver: `trigger` and `resolve` with
the finding id as `dedup_key`, the payload PagerDuty reads, bounded delivery; and a sink that
cannot be built (no routing key, a misspelled option, a malformed key) is one line, exit 2, in
`validate` and `reconcile`, before anything is alerted."""

from __future__ import annotations

import pytest

from dlt_contract_ops.errors import DeliveryError
from dlt_contract_ops.sinks.base import ResolvedAlert
from dlt_contract_ops.sinks.options import SinkOptionError
from dlt_contract_ops.sinks.pagerduty import PagerDutySink
from tests.projects import Project
from tests.servers import Receiver, Reply
from tests.sinks.app_project import CONFIG
from tests.sinks.conftest import make_error, make_finding

KEY = "0123456789abcdef0123456789ABCDEF"


def _sink(hook: Receiver, **options: object) -> PagerDutySink:
    return PagerDutySink(KEY, url=hook.url + "/v2/enqueue", backoff=0.01, **options)  # type: ignore[arg-type]


def test_trigger_resolve_and_error_events() -> None:
    finding = make_finding()
    with Receiver(default=Reply(202, body=b'{"status": "success"}')) as hook:
        sink = _sink(hook)
        sink.emit_drift(finding)
        sink.emit_resolved(ResolvedAlert(
            finding.id, "shop", "Order Items", "order_items", "additive",
            tuple(finding.columns), "2026-01-01T00:00:00+00:00", "shop_pipeline"))
        sink.emit_error(make_error())
    trigger, resolve, error = (r.json() for r in hook.requests)
    assert {r.path for r in hook.requests} == {"/v2/enqueue"}
    assert trigger["routing_key"] == KEY
    assert (trigger["event_action"], trigger["dedup_key"], trigger["client"]) == (
        "trigger", finding.id, "dlt-contract-ops")
    payload = trigger["payload"]
    assert payload["summary"] == (
        'schema drift (additive) at shop_pipeline.shop."Order Items": 2 column(s): '
        "payload_size, Straße-Nr")
    assert (payload["source"], payload["severity"], payload["component"], payload["group"],
            payload["class"]) == ('shop_pipeline.shop."Order Items"', "warning", "order_items",
                                  "shop", "additive")
    assert payload["custom_details"]["id"] == finding.id
    assert payload["custom_details"]["samples"] == {"payload_size": [519, 526],
                                                    "Straße-Nr": ["12a"]}
    assert resolve == {"routing_key": KEY, "event_action": "resolve", "dedup_key": finding.id}
    assert (error["event_action"], error["payload"]["severity"]) == ("trigger", "error")
    assert error["dedup_key"].startswith("error-")
    assert error["payload"]["custom_details"]["message"] == make_error().message


def test_no_samples_and_a_long_summary_cut() -> None:
    wide = make_finding(columns=[f"c{i:04d}" for i in range(300)], samples={"c0000": [1]})
    with Receiver(default=Reply(202)) as hook:
        _sink(hook, send_samples=False).emit_drift(wide)
    payload = hook.requests[0].json()["payload"]
    assert len(payload["summary"]) == 1024
    assert payload["summary"].endswith("…")
    assert set(map(len, payload["custom_details"]["samples"].values())) == {0}


@pytest.mark.parametrize("severity", ["error", "warning", "info"])
def test_the_findings_severity_is_the_events(severity: str) -> None:
    with Receiver(default=Reply(202)) as hook:
        _sink(hook).emit_drift(make_finding(severity=severity))
    assert hook.requests[0].json()["payload"]["severity"] == severity


def test_a_refused_event_is_not_retried_and_a_throttled_one_is() -> None:
    with Receiver(replies=[Reply(400)]) as hook, pytest.raises(DeliveryError) as refused:
        _sink(hook).emit_drift(make_finding())
    assert len(hook.requests) == 1
    message = str(refused.value)
    assert message.startswith("PagerDuty POST to http://127.0.0.1:")
    assert "HTTP 400" in message
    assert "`routing_key`" in message
    assert KEY not in message
    with Receiver(replies=[Reply(429), Reply(202)]) as hook:
        _sink(hook).emit_drift(make_finding())
    assert len(hook.requests) == 2


@pytest.mark.parametrize("key", ["", "not-a-key", KEY + "0", "é" * 32])
def test_a_malformed_routing_key_is_refused_without_showing_it(key: str) -> None:
    with pytest.raises(SinkOptionError) as caught:
        PagerDutySink(key)
    message = str(caught.value)
    assert "`routing_key` of alert sink 'pagerduty'" in message
    assert not key or key not in message


def _configure(project: Project, url: str, options: str, secrets: str) -> None:
    project.config(CONFIG + '\n[contract_ops]\nalert_sinks = ["webhook", "pagerduty"]\n'
                   "[contract_ops.alert_sink.pagerduty]\n" + options)
    project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{url}"\n' + secrets)


@pytest.mark.parametrize(("options", "secrets", "expected"), [
    ("", "", "Alert sink 'pagerduty' needs option `routing_key`: set it in "
     "`[contract_ops.alert_sink.pagerduty]` in .dlt/secrets.toml"),
    ('routing_ky = "x"\n', "", "Did you mean `routing_key`?"),
    (f'routing_key = "{KEY}"\n', "", "Option `routing_key` of alert sink 'pagerduty' is a "
     "secret but is set in .dlt/config.toml"),
    ("", '[contract_ops.alert_sink.pagerduty]\nrouting_key = "abc"\n',
     "is not an Events API v2 integration key"),
])
def test_a_pagerduty_sink_that_cannot_be_built_is_one_line_exit_2_nothing_alerted(
    app_project: Project, options: str, secrets: str, expected: str
) -> None:
    with Receiver() as hook:
        _configure(app_project, hook.url, options, secrets)
        checked = app_project.cli("validate")
        assert checked.returncode == 2
        assert expected in checked.stdout
        proc = app_project.cli("reconcile", "--all")
        assert (proc.returncode, proc.stdout) == (2, "")
        [line] = proc.stderr.splitlines()
        assert line.startswith("Error: ")
        assert expected in line
        assert hook.requests == []  # the webhook beside it got nothing: nothing was swept
