"""The Sentry sink (extra `sentry`): drift and reconciler errors as Sentry events.

Isolation from the host process's Sentry: the sink never calls `sentry_sdk.init`, never
creates a `sentry_sdk.Client` and never applies a scope. A `Client` is process-global in
effect: constructing one (sentry-sdk 2.x) tears down and replaces the process's continuous
profiler and rewrites the SDK name the host reports, and applying any `Scope` runs the host's
global event processors and merges its tags and breadcrumbs into our events. Instead the sink
builds each event itself and hands the envelope to its own `HttpTransport` (its own worker
thread and connection pool), so the host's client, scopes, integrations and hooks are
untouched whether or not the host uses Sentry.

Options (`[contract_ops.alert_sink.sentry]`): `dsn` (secrets only; the bare `SENTRY_DSN`
environment variable is deliberately not read), `environment` (default "production"),
`send_samples` (default true; false strips sample values, which may hold personal data).

Drift: level the finding's severity (`error`, `warning`, `info`), fingerprint
`["schema-drift", pipeline, source, resource]` (additive and removal drift of one resource
collapse into one issue: one model PR closes both), tags `pipeline`, `source`, `resource`,
`drift_type`, context `schema_drift`. Reconciler errors:
level error, fingerprint root `"reconciler-error"`, so drift triage never wades through
reconciler bugs.

Delivery (`ConfirmsDelivery`): events are sent by the transport's worker thread, so whether
one arrived is known only after `flush`. The transport records the id of every event whose
envelope the server answered with a 2xx; `undelivered()` lists each finding handed to
`emit_drift` whose event has no such answer: a non-2xx answer (500, 413, 429), a network
error or refused connection, an event dropped locally (rate-limit backoff after a 429, full
queue) or one still queued or unanswered when `flush` ran out of time. Only positive
evidence counts, so an SDK change that hid the answer from us would make findings
undelivered (re-sent next run), never silently lost. Delivery is at least once: an event
the server accepts after `flush` gave up is reported undelivered and sent again next run.
"""

from __future__ import annotations

import datetime as dt
import logging
import socket
import threading
import uuid
from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from dlt_contract_ops.errors import AlertSinkError
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.model.severity import level
from dlt_contract_ops.sinks.base import ErrorEvent
from dlt_contract_ops.sinks.options import SinkOptionError, as_bool, as_text
from dlt_contract_ops.sinks.payloads import drift_summary, error_summary

if TYPE_CHECKING:
    from sentry_sdk.envelope import Envelope

log = logging.getLogger("dlt_contract_ops.sinks.sentry")

NAME = "sentry"
DRIFT_ROOT = "schema-drift"
ERROR_ROOT = "reconciler-error"
LOGGER = "dlt_contract_ops"
TAG_MAX = 200  # Sentry truncates tag values longer than this; do it ourselves, visibly
MISSING = "-"


def _import_sentry() -> Any:
    try:
        import sentry_sdk
    except ImportError as exc:
        raise AlertSinkError(
            "Alert sink 'sentry' needs the sentry-sdk package: "
            "`pip install 'dlt-contract-ops[sentry]'`."
        ) from exc
    return sentry_sdk


@cache
def _transport_class() -> Any:
    """An HttpTransport that records which events the server accepted (a 2xx answer) and
    counts what it drops (network error, non-2xx, rate limit, full queue), so the sink can
    report undelivered findings and flush can warn instead of losing events silently."""
    from sentry_sdk.consts import EndpointType
    from sentry_sdk.transport import HttpTransport

    class ConfirmingTransport(HttpTransport):
        def __init__(self, options: dict[str, Any]) -> None:
            super().__init__(options)
            self.drops: Counter[str] = Counter()
            self._confirmed: set[str] = set()
            self._lock = threading.Lock()
            # the HTTP status of the request in progress; requests run on the worker thread
            # (one at a time), the sink reads the results from its own thread
            self._answer = threading.local()

        def _send_request(
            self,
            body: bytes,
            headers: dict[str, str],
            endpoint_type: EndpointType = EndpointType.ENVELOPE,
            envelope: Envelope | None = None,
        ) -> None:
            self._answer.status = None
            # raises on a network error: nothing is confirmed then
            super()._send_request(
                body, headers=headers, endpoint_type=endpoint_type, envelope=envelope
            )
            status: int | None = self._answer.status
            if envelope is None or status is None or not 200 <= status < 300:
                return
            # `envelope` is what went over the wire: items dropped by a rate-limit backoff
            # were already removed, so only events the server saw are confirmed
            ids = {str(e["event_id"]) for e in _events_of(envelope) if e.get("event_id")}
            with self._lock:
                self._confirmed.update(ids)

        def _update_rate_limits(self, response: Any) -> None:
            # The one hook that every sentry-sdk 2.x HttpTransport calls with each HTTP
            # response (2.0 inside `_send_request`, later ones from `_handle_response`), before
            # it handles the status. Should a release stop calling it, nothing is confirmed
            # and every finding counts as undelivered: re-sent, never silently lost.
            self._answer.status = response.status
            super()._update_rate_limits(response)

        def on_dropped_event(self, reason: str) -> None:
            with self._lock:
                self.drops[reason] += 1

        def take_drops(self) -> Counter[str]:
            with self._lock:
                drops, self.drops = self.drops, Counter()
            return drops

        def confirmed(self) -> frozenset[str]:
            with self._lock:
                return frozenset(self._confirmed)

    return ConfirmingTransport


def _events_of(envelope: Envelope) -> list[dict[str, Any]]:
    return [dict(event) for item in envelope.items if (event := item.get_event()) is not None]


def _tag(value: str | None) -> str:
    text = " ".join((value or MISSING).split())
    return text if len(text) <= TAG_MAX else text[: TAG_MAX - 1] + "…"


class SentrySink:
    """Sends drift findings and reconciler errors to the Sentry project of `dsn`."""

    secret_options: ClassVar[frozenset[str]] = frozenset({"dsn"})

    def __init__(
        self, dsn: str, environment: str | None = None, send_samples: bool = True
    ) -> None:
        sentry_sdk = _import_sentry()
        from sentry_sdk.client import get_options
        from sentry_sdk.utils import BadDsn, Dsn

        self.dsn = as_text(dsn, NAME, "dsn")
        try:
            parsed = Dsn(self.dsn)
        except BadDsn as exc:
            raise SinkOptionError(
                f"Option `dsn` of alert sink '{NAME}' is not a Sentry DSN ({exc}); copy it from "
                "the Sentry project's Client Keys page.",
                NAME,
                "dsn",
            ) from exc
        self.environment = as_text(environment, NAME, "environment") if environment else None
        self.send_samples = as_bool(send_samples, NAME, "send_samples")
        # Every option that would otherwise be read from the environment (SENTRY_RELEASE,
        # SENTRY_ENVIRONMENT, SENTRY_DEBUG, git for the release) is set explicitly.
        self._options = get_options(
            dsn=self.dsn,
            environment=self.environment or "production",
            release="",
            debug=False,
            send_client_reports=False,
            default_integrations=False,
            auto_enabling_integrations=False,
            include_local_variables=False,
            max_breadcrumbs=0,
        )
        self._transport = _transport_class()(self._options)
        self._host = f"{parsed.host}"
        self._version = getattr(sentry_sdk, "VERSION", "unknown")
        self._server = socket.gethostname()
        self.sent = 0
        self._event_ids: list[str] = []  # every event handed to the transport, in order
        self._findings: dict[str, DriftFinding] = {}  # event id -> the finding it carries
        self._flushed = 0  # events up to this index were covered by an earlier flush warning

    # -- events --------------------------------------------------------------------------
    def _base(self, level: str, message: str) -> dict[str, Any]:
        from dlt_contract_ops.version import __version__

        return {
            "event_id": uuid.uuid4().hex,
            "timestamp": dt.datetime.now(dt.timezone.utc).isoformat(),
            "platform": "python",
            "level": level,
            "logger": LOGGER,
            "logentry": {"message": message, "formatted": message},
            "environment": self.environment or "production",
            "server_name": self._server,
            "sdk": {
                "name": "dlt-contract-ops",
                "version": __version__,
                "packages": [{"name": "pypi:sentry-sdk", "version": self._version}],
            },
        }

    def drift_event(self, finding: DriftFinding) -> dict[str, Any]:
        """The Sentry event for a drift finding (public for tests and custom sinks)."""
        event = self._base(level("sentry", finding.severity), drift_summary(finding))
        pipeline = finding.pipeline or MISSING
        event["fingerprint"] = [DRIFT_ROOT, pipeline, finding.source, finding.resource]
        event["tags"] = {
            "pipeline": _tag(finding.pipeline),
            "source": _tag(finding.source),
            "resource": _tag(finding.resource),
            "drift_type": finding.drift_type,
        }
        context: dict[str, Any] = {
            "table": finding.table,
            "columns": list(finding.columns),
            "column_types": dict(finding.column_types),
        }
        if finding.expected_types:
            context["expected_types"] = dict(finding.expected_types)
        if self.send_samples:
            context["samples"] = {c: list(v) for c, v in finding.samples.items()}
        if finding.coverage:
            context["coverage"] = {
                c: {"baseline": v.baseline, "recent": v.recent}
                for c, v in finding.coverage.items()
            }
        for key in ("first_seen", "reproduce", "sample_error"):
            value = getattr(finding, key)
            if value:
                context[key] = value
        event["contexts"] = {"schema_drift": context}
        return event

    def error_event(self, event: ErrorEvent) -> dict[str, Any]:
        """The Sentry event for a reconciler error, with the exception when there is one."""
        from sentry_sdk.utils import event_from_exception

        out = self._base("error", error_summary(event))
        if event.exception is not None:
            exc_event, _hint = event_from_exception(
                event.exception,
                client_options=self._options,
                mechanism={"type": "dlt_contract_ops", "handled": True},
            )
            out["exception"] = exc_event["exception"]
        exc_type = type(event.exception).__name__ if event.exception else MISSING
        out["fingerprint"] = [
            ERROR_ROOT,
            event.pipeline or MISSING,
            event.source,
            event.detector or MISSING,
            exc_type,
        ]
        out["tags"] = {
            "pipeline": _tag(event.pipeline),
            "source": _tag(event.source),
            "resource": _tag(event.resource),
            "detector": _tag(event.detector),
        }
        out["contexts"] = {
            "reconciler_error": {
                "message": event.message,
                "detector": event.detector,
                "resource": event.resource,
                "exception_type": exc_type,
            }
        }
        return out

    def _send(self, event: dict[str, Any]) -> None:
        from sentry_sdk.envelope import Envelope
        from sentry_sdk.serializer import serialize
        from sentry_sdk.utils import format_timestamp

        payload = serialize(event)
        envelope = Envelope(
            headers={
                "event_id": event["event_id"],
                "sent_at": format_timestamp(dt.datetime.now(dt.timezone.utc)),
            }
        )
        envelope.add_event(payload)  # type: ignore[arg-type]  # Event is a TypedDict of it
        self._event_ids.append(event["event_id"])
        self._transport.capture_envelope(envelope)
        self.sent += 1

    # -- AlertSink -----------------------------------------------------------------------
    def emit_drift(self, finding: DriftFinding) -> None:
        event = self.drift_event(finding)
        self._findings[event["event_id"]] = finding
        self._send(event)

    def emit_error(self, event: ErrorEvent) -> None:
        self._send(self.error_event(event))

    def flush(self, timeout: float) -> None:
        """Wait up to `timeout` for the transport's queue, then warn about what was lost."""
        self._transport.flush(timeout)
        drops = self._transport.take_drops()
        confirmed = self._transport.confirmed()
        new = self._event_ids[self._flushed :]
        self._flushed = len(self._event_ids)
        unconfirmed = sum(1 for event_id in new if event_id not in confirmed)
        if drops:
            reasons = ", ".join(f"{reason}: {n}" for reason, n in sorted(drops.items()))
            log.warning(
                "alert sink '%s': Sentry at %s did not accept every event (%s); check the DSN "
                "and the project's rate limits",
                NAME,
                self._host,
                reasons,
            )
        elif unconfirmed:
            log.warning(
                "alert sink '%s': Sentry at %s did not confirm %d of %d event(s) within %gs; "
                "drift among them counts as undelivered",
                NAME,
                self._host,
                unconfirmed,
                len(new),
                timeout,
            )

    def undelivered(self) -> Sequence[DriftFinding]:
        """Findings handed to `emit_drift` whose event the server has not answered with a
        2xx (so far): call it after `flush`.

        Example: `sink.flush(5); retry_next_run(sink.undelivered())`.
        """
        confirmed = self._transport.confirmed()
        return [f for event_id, f in self._findings.items() if event_id not in confirmed]

    def close(self) -> None:
        """Stop the transport's worker thread (after flush)."""
        self._transport.kill()
