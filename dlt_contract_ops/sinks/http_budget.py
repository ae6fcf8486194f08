"""One webhook event's time budget (`max_time`) over HTTP: the sockets of an attempt still
waiting when it runs out are shut down, and dlt's retrying client stops retrying within it.
Used by `sinks.webhook`."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import socket
import threading
import time
from typing import Any, cast

from dlt.sources.helpers.requests import (
    Client,
    Session,
)
from requests.adapters import HTTPAdapter
from requests.models import PreparedRequest, Response
from tenacity import RetryCallState, stop_after_attempt, stop_any
from tenacity.stop import stop_base
from urllib3.connectionpool import HTTPConnectionPool


class Budget:
    """One event's `max_time`. When it runs out, the sockets of the attempt still waiting for
    its answer are shut down: a socket timeout bounds each read, not the answer, so a receiver
    that trickles a byte a second would otherwise hold the event indefinitely."""

    def __init__(self, seconds: float) -> None:
        self.ends_at = time.monotonic() + seconds
        self.attempts = 0
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Budget:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def left(self) -> float:
        return self.ends_at - time.monotonic()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:  # an attempt that slipped in at the very end
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    # shutdown, not close: it wakes a recv blocked in another thread (close does not). An
    # OSError means its owner closed it already: nothing left to cut.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


#: the budget of the event being delivered on this thread. urllib3's pools create the
#: connections, so this is how a connection reaches the budget that must be able to cut it.
_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "dlt_contract_ops_webhook_budget", default=None
)


@functools.cache
def _watched(base: type[Any]) -> type[Any]:
    """`base` (the connection class of a urllib3 pool) handing its socket to the running
    event's budget before it waits for the answer (status line, headers and body)."""
    if getattr(base, "budgeted", False):
        return base

    def getresponse(self: Any) -> Any:
        budget = _BUDGET.get()
        if budget is not None and self.sock is not None:
            budget.watch(self.sock)
        return base.getresponse(self)

    return type(f"Budgeted{base.__name__}", (base,), {"getresponse": getresponse, "budgeted": True})


class BudgetAdapter(HTTPAdapter):
    """requests' transport, bounded by the running event's budget: each attempt's timeout is
    cut to the time left, and every pool's connections are watched (direct, TLS or proxied
    alike, since the hook is the pool each request goes through)."""

    def get_connection_with_tls_context(
        self,
        request: PreparedRequest,
        verify: Any,
        proxies: dict[str, str] | None = None,
        cert: Any = None,
    ) -> HTTPConnectionPool:
        pool = super().get_connection_with_tls_context(request, verify, proxies, cert)
        pool.ConnectionCls = _watched(pool.ConnectionCls)
        return pool

    def send(
        self,
        request: PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: dict[str, str] | None = None,
    ) -> Response:
        budget = _BUDGET.get()
        if budget is not None:
            budget.attempts += 1
            if isinstance(timeout, (int, float)):
                timeout = max(0.001, min(float(timeout), budget.left()))
        return super().send(request, stream, timeout, verify, cert, proxies)


class StopWithinBudget(stop_base):
    """Stop retrying when the budget ran out or the next attempt could not start within it."""

    def __call__(self, retry_state: RetryCallState) -> bool:
        budget = _BUDGET.get()
        return budget is not None and (
            budget.expired or retry_state.upcoming_sleep >= budget.left()
        )


class BudgetClient(Client):
    """dlt's retrying client (tenacity: 429/5xx/network errors, exponential backoff,
    `Retry-After` in seconds or as an HTTP date), bounded per event by a `Budget`."""

    def __init__(self, *, attempts: int, **kwargs: Any) -> None:
        super().__init__(request_max_attempts=attempts, **kwargs)
        self.attempts = attempts
        # one adapter for every thread's session, so `close` reaches all their connections
        self.adapter = BudgetAdapter()

    def _make_session(self) -> Session:
        # dlt builds each thread's session here (its public `session` property calls this);
        # overriding it is the one way to fit every session the client will hand out
        session = super()._make_session()
        session.mount("http://", self.adapter)
        session.mount("https://", self.adapter)
        # dlt wraps `send` in tenacity with `stop_after_attempt` only; keep its retry and wait
        # rules (`retry_with`, tenacity's API for this) and also stop within the budget
        wrapped = cast(Any, session.send)
        session.send = wrapped.retry_with(  # type: ignore[method-assign]  # as dlt does
            stop=stop_any(stop_after_attempt(self.attempts), StopWithinBudget())
        )
        return session
