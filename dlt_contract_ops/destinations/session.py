"""Driver calls on a thread of their own, waited for in a way Ctrl-C can interrupt.

A driver blocked in C (libpq waiting for a lock, PyMySQL reading a socket) keeps Python's
signal handlers from running in that thread, so a KeyboardInterrupt would arrive only when the
query ends. The adapter therefore runs every driver call of a session on a `SessionThread` and
the caller's thread only waits, in short slices (`wait_for`): a signal interrupts the wait,
the adapter cancels the query server-side, and the exception goes on.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["POLL_SECONDS", "DeadlinePassed", "SessionThread", "settle", "wait_all", "wait_for"]

log = logging.getLogger("dlt_contract_ops")

T = TypeVar("T")
#: how often a waiting thread wakes up; a signal handler runs at the latest after this
POLL_SECONDS = 0.1


class DeadlinePassed(Exception):
    """`wait_for`'s deadline passed before the call finished (the call may still run)."""


class SessionThread:
    """One daemon thread that owns one driver session: connect, every query and close run on
    it, in order. Drivers bound to the thread that connected (SQLite) are always called from
    the same thread; a daemon thread stuck in a driver never blocks interpreter exit."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Queue `fn` on the session's thread (started on first use)."""
        future: Future[T] = Future()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()
            self._jobs.put((future, fn))
        return future

    def stop(self) -> None:
        """Let the thread end after the jobs queued so far (a stuck job is abandoned)."""
        with self._lock:
            if self._thread is not None:
                self._jobs.put(None)
                self._thread = None

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, fn = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as exc:  # handed to the waiting thread, which decides
                future.set_exception(exc)
            else:
                future.set_result(result)


def _wait_slices(pending: Sequence[Future[Any]], deadline: float | None) -> bool:
    """Wait until every future is done (True) or `deadline` passes (False)."""
    while True:
        slice_ = POLL_SECONDS
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:  # a call that is done by now still counts
                return all(f.done() for f in pending)
            slice_ = min(slice_, remaining)
        _, not_done = futures.wait(pending, timeout=slice_)
        if not not_done:
            return True


def _on_interrupt(action: Callable[[], None]) -> None:
    try:
        action()
    except Exception as exc:  # the interrupt must go on even if cancelling fails
        log.warning("cancelling the running query failed: %s", exc)


def wait_for(
    future: Future[T], *, timeout: float | None, on_interrupt: Callable[[], None]
) -> T:
    """The result of `future`, waited for in slices of `POLL_SECONDS`.

    Anything raised in the waiting thread meanwhile (KeyboardInterrupt, SystemExit from a
    SIGTERM handler) calls `on_interrupt` first and then propagates. Raises `DeadlinePassed`
    when `timeout` seconds pass first; exceptions of the call itself are re-raised.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        done = _wait_slices([future], deadline)
    except BaseException:
        _on_interrupt(on_interrupt)
        raise
    if not done:
        raise DeadlinePassed
    return future.result()


def wait_all(pending: Sequence[Future[Any]], *, on_interrupt: Callable[[], None]) -> None:
    """Wait for every future, interruptibly (as `wait_for`, without a deadline)."""
    try:
        _wait_slices(pending, None)
    except BaseException:
        _on_interrupt(on_interrupt)
        raise


def settle(pending: Sequence[Future[Any]], seconds: float) -> bool:
    """After a cancel: give the calls `seconds` to come back; True if they all did."""
    _, not_done = futures.wait(pending, timeout=seconds)
    return not not_done
