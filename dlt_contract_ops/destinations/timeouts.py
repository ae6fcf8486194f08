"""How long a query may run and wait for a lock, and how a driver says it ran out of time.

Each adapter applies `Timeouts` to its sessions the destination's own way (PostgreSQL
`statement_timeout`/`lock_timeout`, MariaDB `max_statement_time`/`lock_wait_timeout`, SQLite's
busy timeout) or, where the destination has no such setting (DuckDB), stops the query itself
when the deadline passes. Either way the caller gets one `QueryTimeoutError` naming the table.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from sqlglot import exp

from dlt_contract_ops.errors import ConfigError, QueryTimeoutError

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "DEFAULT_QUERY_TIMEOUT",
    "DEFAULT_TIMEOUTS",
    "TimeoutReason",
    "Timeouts",
    "queried_tables",
    "timeout_error",
    "timeout_reason",
]

#: seconds one query may run
DEFAULT_QUERY_TIMEOUT = 300.0
#: seconds one query may wait for a lock another session holds
DEFAULT_LOCK_TIMEOUT = 30.0

TimeoutReason = Literal["statement timeout", "lock timeout"]

#: SQLSTATEs (PostgreSQL) and error numbers (MySQL/MariaDB) of a timed-out statement
_PG_LOCK_NOT_AVAILABLE = "55P03"
_PG_QUERY_CANCELED = "57014"
_MYSQL_LOCK_WAIT = 1205  # lock_wait_timeout, innodb_lock_wait_timeout
_MYSQL_STATEMENT = frozenset({1969, 3024})  # MariaDB max_statement_time, MySQL max_execution_time


@dataclass(frozen=True)
class Timeouts:
    """Seconds one query may run (`query`) and wait for a lock (`lock`).

    >>> Timeouts(query=5, lock=0.5).query_ms, Timeouts(query=5, lock=0.5).lock_seconds
    (5000, 1)
    """

    query: float = DEFAULT_QUERY_TIMEOUT
    lock: float = DEFAULT_LOCK_TIMEOUT

    def __post_init__(self) -> None:
        for key, value in (("query_timeout", self.query), ("lock_timeout", self.lock)):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ConfigError(
                    f"`{key}` must be a number of seconds > 0, got {value!r}: set it in "
                    "`[contract_ops]` of .dlt/config.toml."
                )

    @property
    def query_ms(self) -> int:
        """`query` in whole milliseconds (PostgreSQL, MySQL), at least 1."""
        return max(1, math.ceil(self.query * 1000))

    @property
    def lock_ms(self) -> int:
        """`lock` in whole milliseconds, at least 1."""
        return max(1, math.ceil(self.lock * 1000))

    @property
    def lock_seconds(self) -> int:
        """`lock` in whole seconds, at least 1 (MySQL's lock waits take integers)."""
        return max(1, math.ceil(self.lock))


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it wraps: `__cause__`/`__context__`, SQLAlchemy's `orig`, dlt's
    `dbapi_exception`; each once."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        for nxt in (
            e.__cause__,
            e.__context__,
            getattr(e, "orig", None),
            getattr(e, "dbapi_exception", None),
        ):
            if isinstance(nxt, BaseException):
                todo.append(nxt)


def timeout_reason(exc: BaseException) -> TimeoutReason | None:
    """Whether a driver error is a statement timeout or a lock timeout (None: neither).

    A query cancelled on request (PostgreSQL "canceling statement due to user request",
    MariaDB `KILL QUERY`) is not a timeout.
    """
    for e in _causes(exc):
        code = getattr(e, "pgcode", None)
        if code == _PG_LOCK_NOT_AVAILABLE:
            return "lock timeout"
        if code == _PG_QUERY_CANCELED and "statement timeout" in str(e):
            return "statement timeout"
        args = getattr(e, "args", ())
        errno = args[0] if args and isinstance(args[0], int) else None
        if errno == _MYSQL_LOCK_WAIT:
            return "lock timeout"
        if errno in _MYSQL_STATEMENT:
            return "statement timeout"
        if isinstance(e, sqlite3.OperationalError) and "database is locked" in str(e):
            return "lock timeout"  # the busy timeout ran out
    return None


def queried_tables(query: exp.Expression) -> list[str]:
    """Names of the tables `query` reads, in order, without CTE names, catalog views
    (`information_schema`) and table functions.

    >>> from sqlglot import exp
    >>> queried_tables(exp.select("a").from_("raw.orders"))
    ['orders']
    """
    ctes = {cte.alias for cte in query.find_all(exp.CTE)}
    names: list[str] = []
    for table in query.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or table.name in ctes:
            continue
        if table.db.lower() == "information_schema" or table.name in names:
            continue
        names.append(table.name)
    return names


def timeout_error(
    *,
    kind: str,
    tables: list[str],
    reason: TimeoutReason,
    seconds: float,
    destination: str,
    dataset: str,
    detail: str = "",
) -> QueryTimeoutError:
    """The error for a query that ran out of time: what, on which table, and what to do."""
    if tables:
        what = f"{kind} query on table{'s' if len(tables) > 1 else ''} " + ", ".join(
            f"`{t}`" for t in tables
        )
    else:
        what = f"{kind} query on dataset `{dataset}`"
    where = f" (dataset `{dataset}`, destination `{destination}`)" if tables else (
        f" (destination `{destination}`)"
    )
    extra = f"; {detail}" if detail else ""
    if reason == "lock timeout":
        message = (
            f"{what}{where} waited {seconds:g}s for a lock and gave up (lock timeout{extra}) "
            "— another session holds a lock on it; find the blocker (PostgreSQL: "
            "`pg_stat_activity`/`pg_locks`, MySQL/MariaDB: `SHOW PROCESSLIST`) or raise "
            "`[contract_ops] lock_timeout`."
        )
    else:
        message = (
            f"{what}{where} did not finish within {seconds:g}s (statement timeout{extra}) "
            "— another session may hold a lock on it; raise `[contract_ops] query_timeout` "
            "or find the blocker."
        )
    return QueryTimeoutError(
        message, table=tables[0] if tables else None, reason=reason, seconds=seconds
    )


#: the defaults, as one value (a frozen dataclass: safe to share)
DEFAULT_TIMEOUTS = Timeouts()
