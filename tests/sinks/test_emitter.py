"""Fan-out: isolation, fallback, `alert_sinks = []`, dry run and bounded flush."""

from __future__ import annotations

import logging
import threading

import pytest

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.base import AlertSink, ErrorEvent
from dlt_contract_ops.sinks.dedup import AlertMark
from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sinks.logging_sink import LoggingSink, drift_detail, error_line
from tests.servers import Receiver
from tests.sinks.conftest import make_error, make_finding


class Recording:
    """A sink that keeps what it got (a real AlertSink, in process)."""

    def __init__(self) -> None:
        self.drift: list[DriftFinding] = []
        self.errors: list[ErrorEvent] = []
        self.flushed: list[float] = []
        self.closed = False

    def emit_drift(self, finding: DriftFinding) -> None:
        self.drift.append(finding)

    def emit_error(self, event: ErrorEvent) -> None:
        self.errors.append(event)

    def flush(self, timeout: float) -> None:
        self.flushed.append(timeout)

    def close(self) -> None:
        self.closed = True


class Raising(Recording):
    def emit_drift(self, finding: DriftFinding) -> None:
        raise ConnectionError("alert backend down")

    def emit_error(self, event: ErrorEvent) -> None:
        raise ConnectionError("alert backend down")

    def flush(self, timeout: float) -> None:
        raise ConnectionError("cannot flush")


class Hanging(Recording):
    """Ignores its flush timeout: the emitter must bound it anyway."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

        self.left = threading.Event()

    def flush(self, timeout: float) -> None:
        self.release.wait(30)
        self.left.set()


def _alerts(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "dlt_contract_ops.alerts"]


def test_every_sink_gets_every_event_and_a_raising_one_starves_nobody(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first, broken, last = Recording(), Raising(), Recording()
    emitter = Emitter([("first", first), ("broken", broken), ("last", last)])
    findings = [make_finding(), make_finding(resource="events", columns=["x"])]
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        for f in findings:
            emitter.drift(f)
        emitter.error(make_error())
        emitter.flush(1.0)
    for sink in (first, last):
        assert sink.drift == findings
        assert [e.message for e in sink.errors] == [make_error().message]
        assert sink.flushed == [0.9]
        assert sink.closed
    warnings = [r.getMessage() for r in caplog.records if r.name == "dlt_contract_ops"]
    assert sum("alert sink 'broken' failed on a drift event: ConnectionError" in w
               for w in warnings) == 2
    assert any("alert sink 'broken' failed on an error event" in w for w in warnings)
    assert any("alert sink 'broken' failed to flush" in w for w in warnings)
    # the others have them, 'broken' (a paging sink) does not: undelivered to it, in the log
    assert [r.getMessage() for r in _alerts(caplog)] == [drift_detail(f) for f in findings]
    assert emitter.report.undelivered == findings
    assert emitter.report.undelivered_to == {f.id: ("broken",) for f in findings}
    assert emitter.report.failures == {"broken": "ConnectionError: alert backend down"}


def test_drift_no_sink_delivered_goes_to_the_log_in_full(
    caplog: pytest.LogCaptureFixture,
) -> None:
    finding = make_finding()
    emitter = Emitter([("a", Raising()), ("b", Raising())])
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        emitter.drift(finding)
        # a synchronous sink raised: the fallback is written at once, not at flush
        assert [r.getMessage() for r in _alerts(caplog)] == [drift_detail(finding)]
        emitter.flush(1.0)
    [record] = _alerts(caplog)  # flush does not write it a second time
    assert record.levelno == logging.WARNING
    assert (
        'no alert sink delivered the drift at shop_pipeline.shop."Order Items" (additive)'
        in caplog.text
    )
    assert emitter.report.undelivered == [finding]
    assert emitter.report.failures == {
        "a": "ConnectionError: alert backend down",
        "b": "ConnectionError: alert backend down",
    }
    # even without dedup the ledger says what became of it
    assert emitter.report.ledger.mark(finding) == AlertMark("undelivered", "no_sink_confirmed")


def test_error_event_every_sink_raised_on_goes_to_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    event = make_error()
    emitter = Emitter([("a", Raising()), ("b", Raising())])
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        emitter.error(event)
    assert [(r.levelno, r.getMessage()) for r in _alerts(caplog)] == [
        (logging.ERROR, error_line(event))
    ]
    assert "every alert sink failed on an error event: logging it instead" in caplog.text
    assert emitter.report.undelivered == []  # errors are not findings


def test_every_configured_sink_dropped_falls_back_to_logging(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        emitter = Emitter.from_names(
            ["sentri", "webhook"], {"sentri": {}, "webhook": {"url": "not a url"}}, dedup=False
        )
        emitter.drift(make_finding())
    assert [name for name, _ in emitter.sinks] == ["logging"]
    text = caplog.text
    assert "alert sink 'sentri' dropped for this run: Unknown alert sink 'sentri'." in text
    assert "Did you mean 'sentry'?" in text
    assert "alert sink 'webhook' dropped for this run" in text
    assert "falling back to 'logging'" in text
    assert len(_alerts(caplog)) == 1


def test_a_dropped_sink_leaves_the_others(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        emitter = Emitter.from_names(["logging", "sentry"], {"sentry": {}}, dedup=False)
    assert [name for name, _ in emitter.sinks] == ["logging"]
    assert "alert sink 'sentry' dropped for this run" in caplog.text
    assert "falling back" not in caplog.text


def test_empty_alert_sinks_disables_emission(caplog: pytest.LogCaptureFixture) -> None:
    emitter = Emitter.from_names([], dedup=False)
    with caplog.at_level(logging.DEBUG, logger="dlt_contract_ops"):
        emitter.drift(make_finding())
        emitter.error(make_error())
        emitter.flush()
    assert emitter.sinks == []
    assert _alerts(caplog) == []
    assert "alert emission disabled (alert_sinks = [])" in caplog.text
    assert "falling back" not in caplog.text


def test_dry_run_suppresses_drift_and_error_events(caplog: pytest.LogCaptureFixture) -> None:
    with Receiver() as hook:
        emitter = Emitter.from_names(
            ["webhook", "logging"], {"webhook": {"url": hook.url}}, dry_run=True, dedup=False
        )
        with caplog.at_level(logging.DEBUG, logger="dlt_contract_ops"):
            emitter.drift(make_finding())
            emitter.error(make_error())
            emitter.flush()
        assert emitter.sinks == []  # not even loaded
        assert hook.requests == []
    assert _alerts(caplog) == []
    assert "alert emission suppressed (dry run)" in caplog.text


def test_dry_run_with_given_sinks_sends_nothing() -> None:
    sink = Recording()
    emitter = Emitter([("r", sink)], dry_run=True)
    emitter.drift(make_finding())
    emitter.error(make_error())
    assert (sink.drift, sink.errors) == ([], [])


def test_flush_is_bounded_even_when_a_sink_ignores_its_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hanging, fine = Hanging(), Recording()
    emitter = Emitter([("hanging", hanging), ("fine", fine)])
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        emitter.flush(0.5)
    # flush returned while the hanging sink was still inside its own flush
    still_inside = not hanging.left.is_set()
    hanging.release.set()
    assert still_inside
    assert hanging.left.wait(30)
    assert fine.flushed == [0.45]
    assert fine.closed
    assert "alert sink 'hanging' did not flush within 0.5s" in caplog.text


def test_flush_runs_once() -> None:
    sink = Recording()
    emitter = Emitter([("r", sink)])
    emitter.flush(1.0)
    emitter.flush(1.0)
    assert sink.flushed == [0.9]


def test_in_process_sinks_satisfy_the_protocol() -> None:
    for cls in (Recording, Raising, Hanging, LoggingSink):
        assert isinstance(cls(), AlertSink)


def test_the_ack_a_finding_carries_decides_its_alert() -> None:
    """The run stamps each finding with its acknowledgement once (`AckBook.stamp`); the
    emitter reads that stamp, with no book of its own: an unexpired one holds the finding
    back, an expired one is sent carrying it."""
    ack = {"id": "x", "until": "2099-01-01T00:00:00+00:00", "reason": "known", "by": "alice",
           "created": "2026-01-01T00:00:00+00:00"}
    held = make_finding(table="a", ack={**ack, "expired": False})
    again = make_finding(table="b", ack={**ack, "expired": True})
    plain = make_finding(table="c")
    sink = Recording()
    emitter = Emitter([("rec", sink)])
    emitter.drift_all([held, again, plain])
    assert [f.table for f in sink.drift] == ["b", "c"]
    assert sink.drift[0].ack is not None
    assert sink.drift[0].ack["expired"] is True
