"""The webhook sink: POST one JSON document per event (drift, resolved, error) through dlt's
HTTP client.

Options (`[contract_ops.alert_sink.webhook]`; `url` only from secrets, since a Slack webhook
URL is a credential):

- `url`: where to POST.
- `format`: `"json"` (this package's document; its finding's `severity`, `error`, `warning`
  or `info`, is a PagerDuty Events v2 severity as it is) or `"slack"` (Slack's incoming
  webhook, the severity its first field).
- `timeout` (5 s): one attempt's connect and per-read socket timeout.
- `retries` (3): further attempts after a 5xx, a 429 or a network error, with exponential
  backoff from `backoff` (0.5 s, at most 10 s) or the server's `Retry-After` (seconds or an
  HTTP date). Any other 4xx, and a redirect, fail at once: resending cannot help.
- `max_time` (15 s): one event never takes longer than this, retries, waits and a receiver
  that trickles its answer included.
- `send_samples` (true): false empties sample values, which may hold personal data.
- `headers`: extra HTTP headers (an `Authorization` token, say).

Delivery guarantee: `emit_drift`/`emit_error` return normally only when the receiver answered
2xx, completely, within `max_time`. Anything else raises `DeliveryError` naming the host (never
the URL's path), the attempts made and the last status or network error, so the emitter can
log the event instead and leave the finding un-alerted for the next run. Delivery is
therefore at least once: a receiver whose 2xx was lost or late gets the event again.

Delivery is synchronous, so ordering is kept and nothing is left behind at exit. An event
that fails on the endpoint (network, 429, 5xx, `max_time`) opens a breaker: the rest of the
invocation's events raise `DeliveryError` at once instead of each waiting out `max_time`.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from dlt.sources.helpers.requests import (
    ChunkedEncodingError,
    ConnectionError,
    RequestException,
    Timeout,
)

from dlt_contract_ops.errors import DeliveryError
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks import payloads
from dlt_contract_ops.sinks.base import ErrorEvent, ResolvedAlert
from dlt_contract_ops.sinks.http_budget import _BUDGET, Budget, BudgetClient
from dlt_contract_ops.sinks.options import (
    SinkOptionError,
    as_bool,
    as_choice,
    as_number,
    as_text,
)

NAME = "webhook"
MAX_BACKOFF = 10.0
USER_AGENT = "dlt-contract-ops-webhook/1"
RETRY_STATUSES = (429, *range(500, 600))
RETRY_ERRORS = (ConnectionError, Timeout, ChunkedEncodingError)


def retryable(status: int | None) -> bool:
    """A network error (no status), 429 and 5xx are worth another attempt; other 4xx and a
    redirect are not: the same POST would get the same answer.

    >>> [retryable(status) for status in (None, 429, 503, 400, 308)]
    [True, True, True, False, False]
    """
    return status is None or status in RETRY_STATUSES


def redact(url: str) -> str:
    """`scheme://host:port` only: a webhook URL's path often is the credential.

    >>> redact("https://hooks.slack.com/services/T000/B000/XXXX")
    'https://hooks.slack.com'
    """
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")


def network_reason(exc: BaseException) -> str:
    """`ConnectionError (Connection refused)`: the error's class and the innermost OS reason
    (else the innermost error's class).

    Never `str(exc)`: requests puts the whole URL, path and credential included, in it.
    """
    chain = [exc]
    while len(chain) < 10:  # a cycle in a cause chain is possible; no real chain is this long
        cause = _cause(chain[-1])
        if cause is None:
            break
        chain.append(cause)
    for cause in chain:
        if isinstance(cause, OSError) and cause.strerror:
            return f"{type(exc).__name__} ({cause.strerror})"
    inner = chain[-1]
    return type(exc).__name__ if inner is exc else f"{type(exc).__name__} ({type(inner).__name__})"


def _cause(exc: BaseException) -> BaseException | None:
    reason = getattr(exc, "reason", None)  # where urllib3's MaxRetryError keeps its cause
    if isinstance(reason, BaseException):
        return reason
    return exc.__cause__ or exc.__context__


def url_problem(url: str) -> str | None:
    """What keeps `url` from being a webhook's address, else None; never the URL itself,
    whose path is often the credential.

    >>> [url_problem(u) for u in ("https://h/x", "htps://h/x", "http:///x", "http://h:99999")]
    [None, "its scheme is 'htps'", 'it has no host', 'its port is not 1 to 65535']
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return f"its scheme is {parts.scheme!r}" if parts.scheme else "it has no scheme"
    if not parts.hostname:
        return "it has no host"
    try:
        port = parts.port
    except ValueError:  # not a number, or past 65535
        port = 0
    return "its port is not 1 to 65535" if port == 0 else None


def checked_url(url: object, name: str = NAME, file: str = ".dlt/secrets.toml") -> str:
    """`url` when it can be POSTed to; a SinkOptionError that says what is wrong with it
    and where it is set (`file`) otherwise, when sink `name` is built (so `validate` and
    `reconcile` refuse it before anything is swept), not at the first POST."""
    text = as_text(url, name, "url")
    problem = url_problem(text)
    if problem:
        raise SinkOptionError(
            f"Option `url` of alert sink '{name}' is not an http(s) URL with a host "
            f"({problem}): set it to the receiver's address (`https://host/path`) in "
            f"`[contract_ops.alert_sink.{name}]` of {file}.",
            name,
            "url",
        )
    return text


@dataclass(frozen=True)
class Outcome:
    """How one event's delivery ended."""

    delivered: bool
    attempts: int
    detail: str
    #: the last failure was a network error, a 429, a 5xx or `max_time`: the endpoint, not
    #: the event
    endpoint_failed: bool = False



class WebhookSink:
    """POSTs `drift_json`/`error_json` (or the Slack shape) to `url`; raises `DeliveryError`
    for an event that was not delivered."""

    secret_options: ClassVar[frozenset[str]] = frozenset({"url"})
    #: the name its option errors give, and what its delivery errors call a POST
    sink_name: ClassVar[str] = NAME
    label: ClassVar[str] = "Webhook"
    #: what to check when the receiver refused an event (a 4xx)
    event_hint: ClassVar[str] = "Check the `url`, `format` and `headers` options."

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
        name = self.sink_name
        secret = "url" in self.secret_options
        self.url = checked_url(url, name, ".dlt/secrets.toml" if secret else ".dlt/config.toml")
        self.format = as_choice(format, name, "format", ("json", "slack"))
        self.timeout = as_number(timeout, name, "timeout", minimum=0.001)
        self.retries = int(as_number(retries, name, "retries"))
        self.backoff = as_number(backoff, name, "backoff")
        self.max_time = as_number(max_time, name, "max_time", minimum=0.001)
        self.send_samples = as_bool(send_samples, name, "send_samples")
        if headers is not None and not (
            isinstance(headers, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
        ):
            raise SinkOptionError(
                f"Option `headers` of alert sink '{name}' must be a table of strings.",
                name,
                "headers",
            )
        self.headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        self.headers.update(headers or {})
        # every argument explicit: dlt injects `[runtime]` request settings into the rest
        self._client = BudgetClient(
            attempts=self.retries + 1,
            request_timeout=self.timeout,
            raise_for_status=False,
            status_codes=RETRY_STATUSES,
            exceptions=RETRY_ERRORS,
            request_backoff_factor=self.backoff,
            request_max_retry_delay=MAX_BACKOFF,
            respect_retry_after_header=True,
        )
        self._broken: str | None = None
        self.delivered = 0

    # -- AlertSink -----------------------------------------------------------------------
    def emit_drift(self, finding: DriftFinding) -> None:
        if self.format == "slack":
            doc = payloads.drift_slack(finding, send_samples=self.send_samples)
        else:
            doc = payloads.drift_json(finding, send_samples=self.send_samples)
        self.deliver(doc)

    def emit_error(self, event: ErrorEvent) -> None:
        doc = payloads.error_slack(event) if self.format == "slack" else payloads.error_json(event)
        self.deliver(doc)

    def emit_resolved(self, alert: ResolvedAlert) -> None:
        """`ResolvesAlerts`: the finding `alert.id` a drift event announced is gone."""
        slack = self.format == "slack"
        self.deliver(payloads.resolved_slack(alert) if slack else payloads.resolved_json(alert))

    def flush(self, timeout: float) -> None:
        """Nothing to do: delivery is synchronous, every event has been answered or raised."""

    def close(self) -> None:
        self._client.adapter.close()

    # -- delivery ------------------------------------------------------------------------
    def deliver(self, doc: Mapping[str, Any]) -> None:
        """POST `doc` as JSON; return once delivered, else raise `DeliveryError`."""
        where = redact(self.url)
        if self._broken is not None:
            raise DeliveryError(
                f"{self.label} event not sent to {where}: an earlier event of this run failed "
                f"there ({self._broken}), so the rest fail at once instead of each waiting out "
                f"`max_time`. Check that the receiver is up."
            )
        outcome = self.post(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
        if outcome.delivered:
            self.delivered += 1
            return
        if outcome.endpoint_failed:
            self._broken = outcome.detail
            hint = "Check that the receiver is up and answers within `timeout`/`max_time`."
        else:
            hint = self.event_hint
        raise DeliveryError(
            f"{self.label} POST to {where} failed after {outcome.attempts} attempt(s): "
            f"{outcome.detail}; the event was not delivered. {hint}"
        )

    def post(self, body: bytes) -> Outcome:
        """POST `body` with retries, the whole of it within `max_time`; never raises."""
        budget = Budget(self.max_time)
        token = _BUDGET.set(budget)
        try:
            with budget:
                response = self._client.session.post(
                    self.url,
                    data=body,
                    headers=self.headers,
                    timeout=self.timeout,
                    allow_redirects=False,  # a redirected POST turns into a GET: no delivery
                )
        except (RequestException, OSError) as exc:  # OSError: a cut TLS socket can surface raw
            return self._outcome(
                budget, f"network error: {network_reason(exc)}", isinstance(exc, RETRY_ERRORS)
            )
        finally:
            _BUDGET.reset(token)
        status = response.status_code
        if 200 <= status < 300 and not budget.expired:
            return Outcome(True, budget.attempts, f"HTTP {status}")
        detail = f"HTTP {status}"
        if 300 <= status < 400:
            detail += " (redirects are not followed: set `url` to the final address)"
        return self._outcome(budget, detail, retryable(status))

    def _outcome(self, budget: Budget, detail: str, endpoint: bool) -> Outcome:
        """A failed delivery: `endpoint` says the failure was the endpoint's (retryable)."""
        attempts = max(budget.attempts, 1)
        # the timer's cut and an attempt's timeout (cut to the time left) end at the same
        # moment; whichever came first, the budget is what ended the event
        if budget.expired or budget.left() <= 0:
            detail = f"no complete answer within max_time {self.max_time:g}s (last: {detail})"
            return Outcome(False, attempts, detail, endpoint_failed=True)
        if endpoint and attempts < self.retries + 1:
            # tenacity stopped early: the next wait would have run past the budget
            detail += f" (gave up: the next attempt would start after max_time {self.max_time:g}s)"
        return Outcome(False, attempts, detail, endpoint_failed=endpoint)
