"""The profile store's file opened by ATTACH on one in-memory DuckDB of the process.

Opening a DuckDB file as a database of its own (`duckdb.connect(path)`) builds DuckDB's whole
catalog of built-in functions each time: about 20 ms of CPU, twice a sweep (the store is
read, then written). Attaching the file to an in-memory database that the process keeps costs
about 3 ms; DETACH closes the file as closing a connection would (checkpointed, DuckDB's file
lock released), so another process opens it as before. Each `attached` block gets its own
connection (cursor) of the in-memory database, so temporary tables and settings stay its own.
DuckDB is not fork-safe: a child forked while the process's in-memory database lives hangs
opening one of its own, so the database is closed before a fork (`os.register_at_fork`) when
no file is attached, and a forked child always makes its own.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlglot import exp

_lock = threading.Lock()
#: the in-memory database's connection and the process that made it
_host: tuple[int, Any] | None = None
_aliases = itertools.count()
#: `attached` blocks open now, in any thread
_open = 0


def _host_cursor() -> Any:
    global _host
    import duckdb

    with _lock:
        if _host is None or _host[0] != os.getpid():
            _host = (os.getpid(), duckdb.connect(":memory:"))
        return _host[1].cursor()


def _drop_host() -> None:
    """Close the in-memory database, and with it every file still attached to it."""
    global _host
    with _lock:
        if _host is not None and _host[0] == os.getpid():
            _host[1].close()
        _host = None


def _before_fork() -> None:
    if not _open:
        _drop_host()


def _in_child() -> None:
    global _lock, _host, _open
    _lock, _host, _open = threading.Lock(), None, 0  # the parent's threads are not here


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_in_child)


@contextmanager
def attached(path: Path) -> Iterator[Any]:
    """A connection whose default database is the DuckDB file `path` (created when absent),
    open until the block ends; DuckDB's errors opening it propagate as from `connect`."""
    global _open
    with _lock:
        _open += 1
    try:
        con = _host_cursor()
        alias = f"store_{next(_aliases)}"
        try:
            con.execute(f"ATTACH {exp.Literal.string(str(path)).sql('duckdb')} AS {alias}")
        except BaseException:
            con.close()
            raise
        try:
            con.execute(f"USE {alias}")
            yield con
        finally:
            _detach(con, alias)
    finally:
        with _lock:
            _open -= 1


def _detach(con: Any, alias: str) -> None:
    """Detach `alias`; a transaction the block left open is rolled back first. Should DuckDB
    still refuse, the whole in-memory database is closed: a file is never left open."""
    try:
        try:
            con.execute("USE memory")
            con.execute(f"DETACH {alias}")
        except Exception:
            try:
                con.execute("ROLLBACK")
                con.execute("USE memory")
                con.execute(f"DETACH {alias}")
            except Exception:
                con.close()
                _drop_host()
    finally:
        con.close()
