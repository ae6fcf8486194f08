"""The PagerDuty sink: PagerDuty Events API v2, one incident per finding.

A drift finding is a `trigger` and its resolution (`ResolvesAlerts`) a `resolve`, both with
the finding's id as `dedup_key`: PagerDuty folds a repeat (a re-alert, an escalation, a reopened
finding) into the incident the first trigger opened, and the resolve closes it. A reconciler
error is a `trigger` of severity `error`, keyed by where it happened (source, detector,
resource): errors do not resolve themselves, close those incidents by hand.

Options (`[contract_ops.alert_sink.pagerduty]`; `routing_key` only from secrets):

- `routing_key`: the integration key of an Events API v2 integration (32 letters and digits).
- `url` (`https://events.pagerduty.com/v2/enqueue`): the Events API endpoint
  (`https://events.eu.pagerduty.com/v2/enqueue` for an EU account).
- `timeout`, `retries`, `backoff`, `max_time`, `send_samples`: as the webhook sink's, whose
  bounded, synchronous delivery it shares (a 2xx answer is delivery; 429, 5xx and network
  errors are retried; a 400 is the event's fault and not retried).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

from dlt_contract_ops.model.findings import DriftFinding, finding_document
from dlt_contract_ops.model.severity import level
from dlt_contract_ops.sinks import payloads
from dlt_contract_ops.sinks.base import ErrorEvent, ResolvedAlert
from dlt_contract_ops.sinks.logging_sink import where
from dlt_contract_ops.sinks.options import SinkOptionError, as_text
from dlt_contract_ops.sinks.webhook import WebhookSink

NAME = "pagerduty"
EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
CLIENT = "dlt-contract-ops"
#: PagerDuty cuts a longer summary; cut here, with an ellipsis
SUMMARY_MAX = 1024


def finding_severity(finding: DriftFinding) -> str:
    """The PagerDuty severity of `finding`: its own severity on PagerDuty's scale
    (`model.severity.LEVELS`).

    >>> finding_severity(DriftFinding(drift_type="missing", severity="error", source="s",
    ...                               resource="r", table="t", columns=["c"]))
    'error'
    """
    return level("pagerduty", finding.severity)


def checked_key(value: object) -> str:
    """The routing key when it has the shape of one; a SinkOptionError that never repeats
    the key itself otherwise."""
    key = as_text(value, NAME, "routing_key")
    if len(key) != 32 or not key.isalnum() or not key.isascii():
        raise SinkOptionError(
            f"Option `routing_key` of alert sink '{NAME}' is not an Events API v2 integration "
            f"key (32 letters and digits; this one has {len(key)} characters): copy the "
            "Integration Key of the service's Events API v2 integration into "
            f"`[contract_ops.alert_sink.{NAME}]` of .dlt/secrets.toml.",
            NAME,
            "routing_key",
        )
    return key


def _cut(text: str) -> str:
    return text if len(text) <= SUMMARY_MAX else text[: SUMMARY_MAX - 1] + "…"


class PagerDutySink(WebhookSink):
    """Sends Events API v2 `trigger` and `resolve` events; raises `DeliveryError` for one
    the API did not accept."""

    secret_options: ClassVar[frozenset[str]] = frozenset({"routing_key"})
    sink_name: ClassVar[str] = NAME
    label: ClassVar[str] = "PagerDuty"
    event_hint: ClassVar[str] = "Check the `routing_key` option (the integration key)."

    def __init__(
        self,
        routing_key: str,
        url: str = EVENTS_URL,
        timeout: float = 5.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_time: float = 15.0,
        send_samples: bool = True,
    ) -> None:
        self.routing_key = checked_key(routing_key)
        super().__init__(url, timeout=timeout, retries=retries, backoff=backoff,
                         max_time=max_time, send_samples=send_samples)

    def _event(self, action: str, dedup_key: str, payload: dict[str, Any] | None) -> None:
        doc: dict[str, Any] = {"routing_key": self.routing_key, "event_action": action,
                               "dedup_key": dedup_key}
        if payload is not None:
            doc.update(payload=payload, client=CLIENT)
        self.deliver(doc)

    # -- AlertSink -----------------------------------------------------------------------
    def emit_drift(self, finding: DriftFinding) -> None:
        details = finding_document(finding)
        if not self.send_samples:
            details["samples"] = {c: [] for c in finding.columns}
        self._event("trigger", finding.id, {
            "summary": _cut(payloads.drift_summary(finding)),
            "source": where(finding.pipeline, finding.source, finding.resource),
            "severity": finding_severity(finding),
            "component": finding.table,
            "group": finding.source,
            "class": finding.drift_type,
            "custom_details": details,
        })

    def emit_error(self, event: ErrorEvent) -> None:
        key = json.dumps(["reconciler-error", event.source, event.detector, event.resource])
        self._event("trigger", "error-" + hashlib.sha256(key.encode()).hexdigest()[:12], {
            "summary": _cut(payloads.error_summary(event)),
            "source": where(event.pipeline, event.source, event.resource),
            "severity": "error",
            "group": event.source,
            "class": "reconciler_error",
            "custom_details": payloads.error_json(event)["error"],
        })

    def emit_resolved(self, alert: ResolvedAlert) -> None:
        self._event("resolve", alert.id, None)
