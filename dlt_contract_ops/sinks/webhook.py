"""The webhook sink: POST one JSON document per event, standard library only.

Options (`[contract_ops.alert_sink.webhook]`; `url` only from secrets, since a Slack webhook
URL is a credential):

- `url`: where to POST.
- `format`: `"json"` (this package's document) or `"slack"` (Slack's incoming webhook).
- `timeout` (5 s): one attempt's socket timeout.
- `retries` (3): further attempts after a 5xx, a 429 or a network error, with exponential
  backoff from `backoff` (0.5 s) or the server's `Retry-After`.
- `max_time` (15 s): one event never takes longer than this, retries included.
- `send_samples` (true): false empties sample values, which may hold personal data.
- `headers`: extra HTTP headers (an `Authorization` token, say).

Delivery is synchronous, so ordering is kept and nothing is left behind at exit. An event
that exhausts its retries opens a breaker: the rest of the invocation's events are dropped at
once (counted and reported at flush) instead of each waiting out `max_time` again.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from dlt_contract_ops.findings import DriftFinding
from dlt_contract_ops.sinks import payloads
from dlt_contract_ops.sinks.base import ErrorEvent
from dlt_contract_ops.sinks.options import (
    SinkOptionError,
    as_bool,
    as_choice,
    as_number,
    as_text,
)

log = logging.getLogger("dlt_contract_ops.sinks.webhook")

NAME = "webhook"
MAX_BACKOFF = 10.0
USER_AGENT = "dlt-contract-ops-webhook/1"


def retry_delay(attempt: int, backoff: float, retry_after: str | None) -> float:
    """Seconds to wait before attempt `attempt + 1`: the server's `Retry-After` seconds when
    given, else `backoff * 2**attempt`; both capped at MAX_BACKOFF.

    >>> retry_delay(0, 0.5, None), retry_delay(2, 0.5, None), retry_delay(0, 0.5, "3")
    (0.5, 2.0, 3.0)
    """
    if retry_after is not None:
        try:
            seconds = float(retry_after.strip())
            return min(max(seconds, 0.0), MAX_BACKOFF)
        except ValueError:
            pass  # an HTTP date: fall back to our own backoff
    return min(backoff * 2.0**attempt, MAX_BACKOFF)


def retryable(status: int | None) -> bool:
    """A network error (no status), 429 and 5xx are worth another attempt; other 4xx not."""
    return status is None or status == 429 or status >= 500


def redact(url: str) -> str:
    """`scheme://host:port` only: a webhook URL's path often is the credential."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")


@dataclass(frozen=True)
class Outcome:
    """How one event's delivery ended."""

    delivered: bool
    attempts: int
    detail: str
    #: the last failure was a network error, a 429 or a 5xx: the endpoint, not the event
    endpoint_failed: bool = False


class WebhookSink:
    """POSTs `drift_json`/`error_json` (or the Slack shape) to `url`."""

    secret_options: ClassVar[frozenset[str]] = frozenset({"url"})

    def __init__(
        self,
        url: str,
        format: str = "json",
        timeout: float = 5.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_time: float = 15.0,
        send_samples: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.url = as_text(url, NAME, "url")
        scheme = urllib.parse.urlsplit(self.url).scheme
        if scheme not in ("http", "https"):
            raise SinkOptionError(
                f"Option `url` of alert sink '{NAME}' must be an http(s) URL, got scheme "
                f"{scheme!r}.",
                NAME,
                "url",
            )
        self.format = as_choice(format, NAME, "format", ("json", "slack"))
        self.timeout = as_number(timeout, NAME, "timeout", minimum=0.001)
        self.retries = int(as_number(retries, NAME, "retries"))
        self.backoff = as_number(backoff, NAME, "backoff")
        self.max_time = as_number(max_time, NAME, "max_time", minimum=0.001)
        self.send_samples = as_bool(send_samples, NAME, "send_samples")
        if headers is not None and not (
            isinstance(headers, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
        ):
            raise SinkOptionError(
                f"Option `headers` of alert sink '{NAME}' must be a table of strings.",
                NAME,
                "headers",
            )
        self.headers = dict(headers or {})
        self._broken: str | None = None
        self._dropped = 0
        self.delivered = 0

    # -- AlertSink -----------------------------------------------------------------------
    def emit_drift(self, finding: DriftFinding) -> None:
        if self.format == "slack":
            doc = payloads.drift_slack(finding, send_samples=self.send_samples)
        else:
            doc = payloads.drift_json(finding, send_samples=self.send_samples)
        self._deliver(doc, payloads.drift_summary(finding))

    def emit_error(self, event: ErrorEvent) -> None:
        doc = payloads.error_slack(event) if self.format == "slack" else payloads.error_json(event)
        self._deliver(doc, payloads.error_summary(event))

    def flush(self, timeout: float) -> None:
        # Nothing is buffered (delivery is synchronous); report what the breaker dropped.
        if self._dropped:
            log.warning(
                "alert sink '%s': %d further event(s) not sent to %s after an earlier delivery "
                "failed (%s)",
                NAME,
                self._dropped,
                redact(self.url),
                self._broken,
            )
            self._dropped = 0

    # -- delivery ------------------------------------------------------------------------
    def _deliver(self, doc: Mapping[str, Any], summary: str) -> None:
        if self._broken is not None:
            self._dropped += 1
            return
        outcome = self.post(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
        if outcome.delivered:
            self.delivered += 1
            return
        log.warning(
            "alert sink '%s': POST to %s failed after %d attempt(s): %s; event not delivered: %s",
            NAME,
            redact(self.url),
            outcome.attempts,
            outcome.detail,
            summary,
        )
        if outcome.endpoint_failed:
            self._broken = outcome.detail

    def post(self, body: bytes) -> Outcome:
        """POST `body` with retries inside `max_time`; never raises."""
        deadline = time.monotonic() + self.max_time
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **self.headers}
        attempt = 0
        while True:
            attempt += 1
            remaining = deadline - time.monotonic()
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            retry_after: str | None = None
            try:
                with urllib.request.urlopen(  # the scheme is checked in __init__
                    request, timeout=max(0.001, min(self.timeout, remaining))
                ) as response:
                    response.read()
                    return Outcome(True, attempt, f"HTTP {response.status}")
            except urllib.error.HTTPError as exc:
                status: int | None = exc.code
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
                detail = f"HTTP {exc.code}"
                exc.close()
            except (urllib.error.URLError, OSError) as exc:
                status = None
                reason = getattr(exc, "reason", exc)
                detail = f"network error: {reason}"
            if not retryable(status):
                return Outcome(False, attempt, detail)
            if attempt > self.retries:
                return Outcome(False, attempt, detail, endpoint_failed=True)
            delay = retry_delay(attempt - 1, self.backoff, retry_after)
            if time.monotonic() + delay >= deadline:
                return Outcome(
                    False, attempt, f"{detail} (gave up: max_time {self.max_time:g}s)", True
                )
            time.sleep(delay)

