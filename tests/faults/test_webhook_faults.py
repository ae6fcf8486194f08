"""The webhook sink's delivery signal under faults, against real loopback servers: every event
that was not answered 2xx within `max_time` raises `DeliveryError`; retries only where they can
help; the breaker fails later events without touching the endpoint."""

from __future__ import annotations

import email.utils
from datetime import datetime, timedelta, timezone

import pytest

from dlt_contract_ops.errors import DeliveryError
from dlt_contract_ops.sinks.webhook import WebhookSink
from tests.servers import Receiver, Reply, SlowServer, free_port
from tests.sinks.conftest import make_error, make_finding

OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"


@pytest.mark.parametrize("retries", [0, 2])
def test_500_every_time_fails_after_retries_plus_one_attempts(retries: int) -> None:
    with Receiver(default=Reply(500)) as hook:
        sink = WebhookSink(hook.url + "/hook/SECRET", retries=retries, backoff=0)
        with pytest.raises(DeliveryError) as caught:
            sink.emit_drift(make_finding())
        posts = len(hook.requests)
    assert posts == retries + 1
    message = str(caught.value)
    assert f"Webhook POST to {hook.url} failed after {retries + 1} attempt(s): HTTP 500" in message
    assert "SECRET" not in message
    assert sink.delivered == 0


def test_connection_refused_is_not_delivered() -> None:
    port = free_port()  # bound, then closed: nothing listens there
    sink = WebhookSink(f"http://127.0.0.1:{port}/hook/SECRET", retries=1, backoff=0)
    with pytest.raises(DeliveryError) as caught:
        sink.emit_drift(make_finding())
    message = str(caught.value)
    assert f"Webhook POST to http://127.0.0.1:{port} failed after 2 attempt(s)" in message
    assert "network error: ConnectionError (Connection refused)" in message
    assert "SECRET" not in message


def _http_date_in(seconds: int) -> str:
    return email.utils.format_datetime(
        datetime.now(timezone.utc) + timedelta(seconds=seconds), usegmt=True
    )


@pytest.mark.parametrize("form", ["seconds", "http-date"])
def test_429_waits_for_retry_after_then_delivers(form: str) -> None:
    # a whole-second date three seconds ahead is more than two seconds away
    retry_after = "2" if form == "seconds" else _http_date_in(3)
    at_least = 1.9
    with Receiver(replies=[Reply(429, {"Retry-After": retry_after})]) as hook:
        # backoff alone would retry after 0.01 s: the gap proves the header was honoured
        sink = WebhookSink(hook.url, backoff=0.01)
        sink.emit_drift(make_finding())
        first, second = hook.requests
    assert sink.delivered == 1
    assert first.body == second.body
    assert second.at - first.at >= at_least


@pytest.mark.parametrize("status", [400, 401, 404, 413, 308])
def test_a_4xx_or_redirect_is_one_attempt_and_keeps_the_breaker_closed(status: int) -> None:
    with Receiver(replies=[Reply(status, {"Location": "http://127.0.0.1:9/elsewhere"})]) as hook:
        sink = WebhookSink(hook.url, backoff=0)
        with pytest.raises(DeliveryError) as caught:
            sink.emit_drift(make_finding())
        assert len(hook.requests) == 1
        sink.emit_drift(make_finding(resource="next"))  # the endpoint is fine: still sent
        assert len(hook.requests) == 2
    assert f"failed after 1 attempt(s): HTTP {status}" in str(caught.value)
    assert "Check the `url`, `format` and `headers` options." in str(caught.value)
    assert sink.delivered == 1


def test_a_receiver_that_never_answers_is_cut_by_the_timeout_per_attempt() -> None:
    with SlowServer() as silent:
        sink = WebhookSink(silent.url, timeout=0.2, retries=2, backoff=0, max_time=60)
        with pytest.raises(DeliveryError) as caught:
            sink.emit_drift(make_finding())
        posts = len(silent.requests)
    assert posts == 3
    assert "failed after 3 attempt(s): network error: ReadTimeout" in str(caught.value)


def test_a_receiver_that_never_answers_is_cut_by_max_time() -> None:
    with SlowServer() as silent:
        # the socket timeout alone would wait 60 s per attempt
        sink = WebhookSink(silent.url, timeout=60, retries=3, max_time=1)
        # the outcome, not the clock: only the event deadline produces this message
        with pytest.raises(DeliveryError) as caught:
            sink.emit_drift(make_finding())
        posts = len(silent.requests)
    assert posts == 1
    assert "no complete answer within max_time 1s" in str(caught.value)


@pytest.mark.parametrize(
    ("head", "trickle"),
    [
        (OK_HEAD, b"x" * 100),  # the status and headers at once, the body a byte a second
        (b"HTTP/1.1 200 OK\r\n", OK_HEAD[17:] + b"x" * 100),  # even the headers trickle
    ],
    ids=["body", "headers"],
)
def test_a_trickling_answer_is_cut_by_max_time(head: bytes, trickle: bytes) -> None:
    max_time = 2.0
    with SlowServer(head=head, trickle=trickle, interval=1.0) as slow:
        # every read gets a byte within `timeout`: only the event's deadline can stop this
        sink = WebhookSink(slow.url, timeout=5, retries=3, max_time=max_time)
        # the outcome, not the clock: only the event deadline produces this message
        with pytest.raises(DeliveryError) as caught:
            sink.emit_drift(make_finding())
        posts = len(slow.requests)
    assert posts == 1
    assert "no complete answer within max_time 2s" in str(caught.value)
    assert sink.delivered == 0


def test_after_an_endpoint_failure_later_events_fail_without_a_post() -> None:
    with Receiver(default=Reply(503)) as hook:
        sink = WebhookSink(hook.url + "/hook/SECRET", retries=1, backoff=0)
        with pytest.raises(DeliveryError, match=r"failed after 2 attempt\(s\): HTTP 503"):
            sink.emit_drift(make_finding())
        assert len(hook.requests) == 2
        with pytest.raises(DeliveryError) as drift:
            sink.emit_drift(make_finding(resource="b"))
        with pytest.raises(DeliveryError) as error:
            sink.emit_error(make_error())
        sink.flush(1)
        sink.close()
        assert len(hook.requests) == 2
    for caught in (drift, error):
        message = str(caught.value)
        assert f"Webhook event not sent to {hook.url}: an earlier event" in message
        assert "an earlier event of this run failed there (HTTP 503)" in message
        assert "SECRET" not in message
    assert sink.delivered == 0


def test_a_cut_by_max_time_also_opens_the_breaker() -> None:
    with SlowServer() as silent:
        sink = WebhookSink(silent.url, timeout=60, max_time=0.5)
        with pytest.raises(DeliveryError, match="no complete answer within max_time"):
            sink.emit_drift(make_finding())
        with pytest.raises(DeliveryError, match="an earlier event of this run failed there"):
            sink.emit_drift(make_finding(resource="b"))
        posts = len(silent.requests)
    assert posts == 1
