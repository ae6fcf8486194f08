"""The session half of an adapter: open, cancel and close one dlt SQL client's connection,
every driver call on the session's own thread (`session.SessionThread`).

Opening happens on first use (or starts early, `open_soon`, on the session's thread while the
caller goes on), and an unreachable destination becomes one `DestinationError` that says
where and what to check, raised by the first use. `cancel()` stops the running statement on
the server (`_interrupt_query`, per destination) and retires the session; a KeyboardInterrupt
while the caller waits does the same before it propagates.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, ClassVar, TypeVar

from dlt_contract_ops.destinations.session import SessionThread, settle, wait_for
from dlt_contract_ops.errors import CredentialsRejectedError, DestinationError

__all__ = ["CANCEL_GRACE", "ClientSession"]

log = logging.getLogger("dlt_contract_ops")

_T = TypeVar("_T")

#: what servers say when they refuse a login or the database named in it: PostgreSQL
#: (SQLSTATE 28P01 / 28000, 3D000), MySQL and MariaDB (1045, 1049), Snowflake, SQL Server;
#: matched on the root cause's text, since drivers and dlt wrap it differently
_REJECTED_LOGIN = (
    "password authentication failed",
    "access denied for user",
    "incorrect username or password",
    "login failed for user",
    "unknown database",
)
_REJECTED_PGCODES = ("28P01", "28000", "3D000")
#: PostgreSQL's `role "x" does not exist` / `database "x" does not exist` (not DuckDB's
#: `database "<file>" in read-only mode: database does not exist`: a file not there yet)
_NO_SUCH = re.compile(r'\b(?:role|database) "[^"]*" does not exist')


def _credentials_rejected(exc: BaseException) -> bool:
    """The server refused the connection's settings (a wrong password, an unknown role or
    database: the same kind of typo, the user's to fix), as opposed to an unreachable or
    failing server."""
    root: BaseException | None = exc
    seen = 0
    while root is not None and seen < 10:  # the cause chain, bounded against cycles
        text = str(root).lower()
        if any(m in text for m in _REJECTED_LOGIN) or _NO_SUCH.search(text) or getattr(
            root, "pgcode", None
        ) in _REJECTED_PGCODES:
            return True
        root, seen = root.__cause__, seen + 1
    return False
#: seconds a cancelled call gets to come back before its session is abandoned
CANCEL_GRACE = 10.0


class ClientSession:
    """One dlt SQL client's connection, driven from a session thread; hooks for subclasses:
    `_before_open`, `_on_open`, `_interrupt_query`."""

    name: ClassVar[str] = "sql"

    def __init__(self, sql_client: Any, *, location: str) -> None:
        self._client = sql_client
        self.location = location
        self._opened = False
        #: an open started by `open_soon` whose outcome the first use has not collected
        self._opening: Future[None] | None = None
        self._cancelled = threading.Event()
        self._stuck = False  # a call that could not be stopped still holds the session
        self._session = SessionThread(f"co-{self.name}")

    @property
    def dataset(self) -> str:
        raise NotImplementedError  # CatalogNames provides it

    @property
    def sql_client(self) -> Any:
        """dlt's SQL client the adapter runs on (None when built `offline`)."""
        return self._client

    # -- hooks ----------------------------------------------------------------------------
    def _before_open(self) -> None:
        """Hook: configure the connection (read-only, timeouts) before it is made."""

    def _on_open(self) -> None:
        """Hook, on the session thread right after connecting: make the session read-only
        where that is only possible once connected; remember what `_interrupt_query` needs."""

    def _interrupt_query(self) -> None:
        """Hook, called from any thread: stop the statement the session is running, on the
        server. Default: nothing (the caller stops waiting; the query may run on)."""

    # -- open -----------------------------------------------------------------------------
    def _open_on_session(self) -> None:
        if self._opened:
            return
        try:
            self._before_open()
            self._client.open_connection()
            self._opened = True
            self._on_open()
        except DestinationError:
            self._close_on_session()
            raise
        except Exception as exc:
            self._close_on_session()
            if _credentials_rejected(exc):
                # the server answered and refused the user, password or database: the user's
                # to fix (exit 2), not a failure to page anyone about
                raise CredentialsRejectedError(self._connect_message(exc)) from exc
            raise DestinationError(self._connect_message(exc)) from exc

    def open_soon(self) -> None:
        """Start opening the session on its thread and return at once: the connection is
        made (a DuckDB file opened, a server's login) while the caller goes on (a cold
        `reconcile` checks the adapter's class and names the source's tables meanwhile).
        Its outcome, an error included, is the first use's (`_open`). Nothing for an adapter
        built offline, open, opening or cancelled."""
        if self._client is None or self._opened or self._opening is not None or \
                self._cancelled.is_set():
            return
        self._opening = self._session.submit(self._open_on_session)

    def _open(self) -> None:
        """Open the session (on its thread) unless it is; DestinationError if impossible."""
        self._check_usable()
        if self._client is None:
            raise DestinationError(
                f"The `{self.name}` adapter for dataset `{self.dataset}` was built offline: "
                "it renders queries but cannot run them. Open it with `open_adapter`."
            )
        opening, self._opening = self._opening, None
        if opening is not None:  # `open_soon`: its outcome is this use's
            wait_for(opening, timeout=None, on_interrupt=lambda: self._abort([opening]))
        if not self._opened:
            self._call(self._open_on_session)

    def _connect_message(self, exc: BaseException) -> str:
        root: BaseException = exc
        while root.__cause__ is not None and root.__cause__ is not root:
            root = root.__cause__
        detail = " ".join(str(root).split()) or type(root).__name__
        where = f" at `{self.location}`" if self.location else ""
        return (
            f"Cannot connect to destination `{self.name}`{where} (dataset `{self.dataset}`): "
            f"{detail}. Check host, port, database and credentials in "
            f"`[destination.{self.name}.credentials]` of .dlt/secrets.toml (or the pipeline's "
            "own section, or `DESTINATION__...` environment variables)."
        )

    # -- calls ----------------------------------------------------------------------------
    def _call(self, fn: Callable[[], _T], *, timeout: float | None = None) -> _T:
        """`fn()` on the session thread; a KeyboardInterrupt meanwhile cancels it."""
        future = self._session.submit(fn)
        return wait_for(future, timeout=timeout, on_interrupt=lambda: self._abort([future]))

    def _abort(self, pending: Sequence[Future[Any]]) -> None:
        """The caller was interrupted: cancel, and give the calls a moment to come back."""
        self.cancel()
        if not settle(pending, CANCEL_GRACE):
            self._stuck = True

    def _check_usable(self) -> None:
        if self._cancelled.is_set():
            raise DestinationError(
                f"The `{self.name}` adapter for dataset `{self.dataset}` was cancelled "
                "(Ctrl-C or `cancel()`) and runs no more queries: open a new one."
            )
        if self._stuck:
            raise DestinationError(
                f"A query on destination `{self.name}` (dataset `{self.dataset}`) ran out of "
                "time and could not be stopped, so its session was abandoned: open a new "
                "adapter, and check the server for the stuck query."
            )

    # -- cancel and close -----------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the running query on the server and refuse later ones.

        Thread-safe and idempotent; safe to call from a signal handler or another thread. The
        adapter is done afterwards: `close` it.
        """
        self._cancelled.set()
        self._stop_running()

    def _stop_running(self) -> None:
        """`_interrupt_query`, best effort: a failure is logged, never raised."""
        try:
            self._interrupt_query()
        except Exception as exc:  # the caller is on its way out (or past a deadline)
            log.warning("cancelling the query on `%s` failed: %s", self.name, exc)

    def _close_on_session(self) -> None:
        if self._opened:
            self._opened = False
            self._client.close_connection()

    def close(self) -> None:
        """Close the connection (idempotent). A session stuck in a query that could not be
        stopped is abandoned rather than waited for; an open `open_soon` started is waited
        for (as long as a cancelled call may take), so the connection it made is closed
        too."""
        opening, self._opening = self._opening, None
        if opening is not None and not settle([opening], CANCEL_GRACE):
            self._stuck = True
        if self._opened and not self._stuck:
            future = self._session.submit(self._close_on_session)
            if settle([future], CANCEL_GRACE):
                self._session.stop()
                future.result()
                return
            log.warning("closing the `%s` session timed out: abandoned", self.name)
        self._session.stop()
