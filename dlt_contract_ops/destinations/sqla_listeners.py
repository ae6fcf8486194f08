"""The engine listeners every connection of dlt's `sqlalchemy` destination passes through
(`destinations.sqlalchemy`): made read-only by the backend's own statement, and bounded in
time while it connects (then reading without a timeout again, as configured)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: seconds a network backend's driver waits for a connection
CONNECT_TIMEOUT = 10


def read_only(statement: str) -> Callable[[Any, Any], None]:
    """A `connect` listener that runs `statement` (the backend's read-only switch) on every
    new DBAPI connection, named after it."""
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(statement)
        finally:
            cursor.close()

    on_connect.__name__ = "read_only_" + re.sub(r"\W+", "_", statement).lower()
    return on_connect


_UNBOUNDED_READS = "dlt_contract_ops.unbounded_reads"


def bounded_connect(dialect: Any, record: Any, _cargs: Any, cparams: dict[str, Any]) -> None:
    """A `do_connect` listener: a network backend waits `CONNECT_TIMEOUT` seconds to connect."""
    cparams.setdefault("connect_timeout", CONNECT_TIMEOUT)
    if getattr(dialect, "driver", "") == "pymysql" and "read_timeout" not in cparams:
        # PyMySQL's connect_timeout covers the TCP connect only; the handshake is read with
        # read_timeout, so a server that accepts and never answers would hang forever
        cparams["read_timeout"] = CONNECT_TIMEOUT
        record.info[_UNBOUNDED_READS] = True


def unbound_reads(dbapi_connection: Any, record: Any) -> None:
    """After the handshake, queries read without a timeout again, as configured."""
    if record.info.pop(_UNBOUNDED_READS, False):
        dbapi_connection._read_timeout = None  # PyMySQL has no public setter
