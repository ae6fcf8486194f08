"""Which findings the Sentry sink reports as undelivered (`ConfirmsDelivery`), with the real
sentry-sdk against loopback servers that accept, refuse, rate-limit or never answer."""

from __future__ import annotations

import logging

import pytest
from sentry_sdk.consts import DEFAULT_QUEUE_SIZE

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.base import ConfirmsDelivery
from dlt_contract_ops.sinks.sentry_sink import SentrySink
from tests.servers import Receiver, Reply, SlowServer, dsn, free_port, resources
from tests.sinks.conftest import make_error, make_finding

FLUSH = 5.0  # generous: only the never-answering server makes a flush wait for all of it


def _deliver(
    sink: SentrySink, *findings: DriftFinding, timeout: float = FLUSH
) -> list[DriftFinding]:
    for finding in findings:
        sink.emit_drift(finding)
    sink.flush(timeout)
    return list(sink.undelivered())


def test_the_sink_confirms_delivery() -> None:
    assert isinstance(SentrySink(dsn(free_port())), ConfirmsDelivery)


def test_accepted_event_is_delivered() -> None:
    finding = make_finding()
    with Receiver() as sentry:
        sink = SentrySink(dsn(sentry))
        undelivered = _deliver(sink, finding)
        sink.close()
        arrived = resources(sentry.requests)
    assert undelivered == []
    assert arrived == [finding.resource]


@pytest.mark.parametrize("status", [400, 413, 429, 500, 503])
def test_rejected_event_is_undelivered(status: int, caplog: pytest.LogCaptureFixture) -> None:
    finding = make_finding()
    with Receiver(default=Reply(status)) as sentry:
        sink = SentrySink(dsn(sentry))
        with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
            undelivered = _deliver(sink, finding)
        sink.close()
        arrived = resources(sentry.requests)
    assert arrived == [finding.resource]  # it was the answer, not the way there, that failed
    assert undelivered == [finding]
    assert f"status_{status}: 1" in caplog.text


def test_refused_connection_is_undelivered(caplog: pytest.LogCaptureFixture) -> None:
    finding = make_finding()
    sink = SentrySink(dsn(free_port()))
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        undelivered = _deliver(sink, finding)
    sink.close()
    assert undelivered == [finding]
    assert "network: 1" in caplog.text


def test_events_dropped_by_the_rate_limit_backoff_are_undelivered() -> None:
    first, second = make_finding(resource="a"), make_finding(resource="b")
    with Receiver(default=Reply(429, {"Retry-After": "60"})) as sentry:
        sink = SentrySink(dsn(sentry))
        undelivered = _deliver(sink, first, second)
        sink.close()
        arrived = resources(sentry.requests)
    assert arrived == ["a"]  # the second never left this process
    assert undelivered == [first, second]


def test_accepted_then_rejected_reports_exactly_the_rejected_one() -> None:
    first, second = make_finding(resource="a"), make_finding(resource="b")
    with Receiver(replies=[Reply(200), Reply(500)]) as sentry:
        sink = SentrySink(dsn(sentry))
        undelivered = _deliver(sink, first, second)
        sink.close()
        arrived = resources(sentry.requests)
    assert arrived == ["a", "b"]
    assert undelivered == [second]


def test_error_events_are_never_listed_as_undelivered_findings() -> None:
    finding = make_finding()
    with Receiver(replies=[Reply(500), Reply(200)]) as sentry:
        sink = SentrySink(dsn(sentry))
        sink.emit_error(make_error())
        undelivered = _deliver(sink, finding)
        sink.close()
        answered = len(sentry.requests)
    assert answered == 2
    assert undelivered == []


def test_unanswered_event_is_undelivered_and_flush_returns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    finding = make_finding()
    timeout = 1.0
    with SlowServer() as sentry:
        sink = SentrySink(dsn(sentry.port))
        sink.emit_drift(finding)
        assert resources(sentry.wait_for(1)) == [finding.resource]
        # the outcome, not the clock: flush returned (the SDK's own wait is 30 s) and says
        # which events its timeout left unconfirmed
        with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
            sink.flush(timeout)
        undelivered = list(sink.undelivered())
        sink.close()
    assert undelivered == [finding]
    assert "did not confirm 1 of 1 event(s) within 1s" in caplog.text


def test_events_dropped_by_a_full_queue_are_undelivered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with SlowServer() as sentry:
        sink = SentrySink(dsn(sentry.port))
        # one request hangs on the silent server, so the queue behind it fills up (the sink
        # leaves the SDK's queue size alone)
        findings = [make_finding(resource=f"r{i}") for i in range(DEFAULT_QUEUE_SIZE + 2)]
        with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
            undelivered = _deliver(sink, *findings, timeout=0.5)
    assert undelivered == findings
    assert "full_queue: " in caplog.text
    # the server is gone: what was queued fails fast, so the worker drains before it stops
    sink.flush(30)
    sink.close()
    assert list(sink.undelivered()) == findings
