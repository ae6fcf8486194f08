"""The webhook sink against a loopback receiver: shapes, retries, bounds, the breaker."""

from __future__ import annotations

import doctest
import threading
from itertools import pairwise

import pytest

from dlt_contract_ops.errors import DeliveryError
from dlt_contract_ops.sinks import webhook
from dlt_contract_ops.sinks.payloads import slack_escape
from dlt_contract_ops.sinks.webhook import WebhookSink, redact, retryable
from tests.servers import Receiver, Reply, free_port
from tests.sinks.conftest import make_error, make_finding


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (None, True),
        (429, True),
        (500, True),
        (503, True),
        (599, True),
        (308, False),
        (400, False),
        (404, False),
    ],
)
def test_retryable(status: int | None, expected: bool) -> None:
    assert retryable(status) is expected


def test_docstring_examples() -> None:
    result = doctest.testmod(webhook)
    assert (result.failed, result.attempted > 0) == (0, True)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://hooks.slack.com/services/T000/B000/XXXX", "https://hooks.slack.com"),
        ("http://127.0.0.1:8080/hook?token=abc", "http://127.0.0.1:8080"),
    ],
)
def test_redact_keeps_the_credential_out_of_logs(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_json_drift_document() -> None:
    finding = make_finding()
    with Receiver() as hook:
        sink = WebhookSink(hook.url + "/hook", headers={"Authorization": "Bearer t"})
        sink.emit_drift(finding)
        sink.flush(1)
        [req] = hook.requests
    assert req.path == "/hook"
    assert req.headers["Content-Type"] == "application/json"
    assert req.headers["Authorization"] == "Bearer t"
    doc = req.json()
    assert (doc["type"], doc["event"], doc["version"]) == ("schema_drift", "drift", 2)
    assert doc["finding"] == finding.model_dump(mode="json")
    assert doc["summary"] == (
        'schema drift (additive) at shop_pipeline.shop."Order Items": 2 column(s): '
        "payload_size, Straße-Nr"
    )
    assert sink.delivered == 1


def test_json_error_document_and_no_samples() -> None:
    with Receiver() as hook:
        sink = WebhookSink(hook.url, send_samples=False)
        sink.emit_error(make_error())
        sink.emit_drift(make_finding())
        error, drift = (r.json() for r in hook.requests)
    assert error["type"] == "reconciler_error"
    assert error["error"] == {
        "source": "shop",
        "pipeline": "shop_pipeline",
        "resource": "Order Items",
        "detector": "additive",
        "message": "sample query for `order_items` failed: relation does not exist",
        "exception_type": "RuntimeError",
    }
    assert drift["finding"]["samples"] == {"payload_size": [], "Straße-Nr": []}


def test_slack_shape() -> None:
    finding = make_finding(resource="<Order & Items>", samples={"payload_size": [1, 2, 3, 4]})
    with Receiver() as hook:
        sink = WebhookSink(hook.url, format="slack")
        sink.emit_drift(finding)
        sink.emit_error(make_error())
        drift, error = (r.json() for r in hook.requests)
    assert set(drift) == {"text", "blocks"}
    assert drift["text"] == (
        'schema drift (additive) at shop_pipeline.shop."&lt;Order &amp; Items&gt;": '
        "2 column(s): payload_size, Straße-Nr"
    )
    header, fields, columns, reproduce = drift["blocks"]
    assert header == {
        "type": "header",
        "text": {"type": "plain_text", "text": "Schema drift (additive): <Order & Items>"},
    }
    assert [f["text"] for f in fields["fields"]] == [
        "*Severity*\nwarning",
        "*Pipeline*\nshop_pipeline",
        "*Source*\nshop",
        "*Resource*\n&lt;Order &amp; Items&gt;",
        "*Table*\norder_items",
    ]
    assert columns["text"]["type"] == "mrkdwn"
    assert columns["text"]["text"] == (
        "*2 column(s)*\n• `payload_size` (BIGINT): 1, 2, 3\n• `Straße-Nr` (VARCHAR)"
    )
    assert reproduce["text"]["text"].startswith("*Reproduce*\n```SELECT ")
    assert error["blocks"][0]["text"]["text"] == "Reconciler error: shop"
    assert error["text"].startswith("reconciler error (additive) at shop_pipeline.shop.")


def test_slack_long_values_are_cut_to_slack_limits() -> None:
    finding = make_finding(
        resource="r" * 400,
        columns=[f"c{i}_" + "x" * 60 for i in range(80)],
        column_types={},
        samples={},
    )
    doc = WebhookSink("http://127.0.0.1:9", format="slack")
    from dlt_contract_ops.sinks.payloads import drift_slack

    blocks = drift_slack(finding)["blocks"]
    assert len(blocks[0]["text"]["text"]) == 150
    assert all(len(b["text"]["text"]) <= 3000 for b in blocks if "text" in b)
    assert blocks[2]["text"]["text"].endswith("…")
    assert doc.format == "slack"


@pytest.mark.parametrize(("text", "escaped"), [("a<b>&c", "a&lt;b&gt;&amp;c"), ("plain", "plain")])
def test_slack_escape(text: str, escaped: str) -> None:
    assert slack_escape(text) == escaped


def test_500_then_200_is_delivered_once_with_backoff() -> None:
    with Receiver(replies=[Reply(500), Reply(503)]) as hook:
        sink = WebhookSink(hook.url, backoff=0.2)
        sink.emit_drift(make_finding())
        first, second, third = hook.requests
    assert sink.delivered == 1
    assert first.body == second.body == third.body
    assert second.at - first.at >= 0.2
    assert third.at - second.at >= 0.4


def test_429_honours_retry_after() -> None:
    with Receiver(replies=[Reply(429, {"Retry-After": "1"})]) as hook:
        sink = WebhookSink(hook.url, backoff=0.01)
        sink.emit_drift(make_finding())
        first, second = hook.requests
    assert sink.delivered == 1
    assert second.at - first.at >= 0.9


def test_client_error_is_not_retried() -> None:
    with Receiver(replies=[Reply(400)]) as hook:
        sink = WebhookSink(hook.url, backoff=0.01)
        with pytest.raises(DeliveryError, match=r"failed after 1 attempt\(s\): HTTP 400"):
            sink.emit_drift(make_finding())
        sink.emit_drift(make_finding(resource="next"))  # the endpoint is fine: still sent
        assert len(hook.requests) == 2
    assert sink.delivered == 1


def test_unreachable_raises_and_opens_the_breaker() -> None:
    sink = WebhookSink(f"http://127.0.0.1:{free_port()}/hook/SECRET", retries=2, backoff=0.05)
    messages = []
    for i in range(5):
        with pytest.raises(DeliveryError) as caught:
            sink.emit_drift(make_finding(resource=f"r{i}"))
        messages.append(str(caught.value))
    with pytest.raises(DeliveryError) as caught:
        sink.emit_error(make_error())
    messages.append(str(caught.value))
    sink.flush(1)
    assert sink.delivered == 0
    first, *rest = messages
    assert "Webhook POST to http://127.0.0.1:" in first
    assert "failed after 3 attempt(s): network error: ConnectionError" in first
    assert len(rest) == 5
    assert all("an earlier event of this run failed there (network error" in m for m in rest)
    assert not any("SECRET" in m for m in messages)


def test_a_server_that_keeps_failing_is_bounded_by_max_time() -> None:
    with Receiver(default=Reply(500)) as hook:
        # waits of 0.25, 0.5 and 1 s fit in 2.5 s; the next (2 s) would not: 4 attempts,
        # each decision at least 0.75 s away from the limit
        sink = WebhookSink(hook.url, retries=50, backoff=0.25, max_time=2.5)
        with pytest.raises(DeliveryError) as caught:
            sink.emit_drift(make_finding())
        assert len(hook.requests) == 4
        with pytest.raises(DeliveryError, match="an earlier event of this run failed there"):
            sink.emit_drift(make_finding(resource="b"))
        assert len(hook.requests) == 4  # the breaker: no further POST
        gaps = [b.at - a.at for a, b in pairwise(hook.requests)]
    assert "failed after 4 attempt(s): HTTP 500" in str(caught.value)
    assert "gave up: the next attempt would start after max_time 2.5s" in str(caught.value)
    assert all(gap >= wait for gap, wait in zip(gaps, (0.25, 0.5, 1.0), strict=True))


def test_a_slow_server_is_cut_by_the_timeout() -> None:
    gate = threading.Event()

    with Receiver() as hook:
        original = hook.server.RequestHandlerClass.do_POST  # type: ignore[attr-defined]

        def slow(handler: object) -> None:
            gate.wait(30)  # far beyond the timeout: only the timeout can end the attempt
            original(handler)

        hook.server.RequestHandlerClass.do_POST = slow  # type: ignore[attr-defined]
        sink = WebhookSink(hook.url, timeout=0.3, retries=1, backoff=0)
        try:
            with pytest.raises(DeliveryError) as caught:
                sink.emit_drift(make_finding())
        finally:
            gate.set()
    assert "failed after 2 attempt(s): network error: ReadTimeout" in str(caught.value)
    assert sink.delivered == 0
