"""PostgreSQL: every session starts read-only and bounded in time.

`default_transaction_read_only`, `statement_timeout` and `lock_timeout` go in as startup
options (`-c ...` in libpq's `options`), not as `SET`s: dlt's psycopg2 client resets the
connection after a failed query (`RESET ALL`), which would revert a `SET`, while a startup
option stays the session default for its whole life. A running query is cancelled with
libpq's cancel request (`connection.cancel()`), which any thread may send.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ClassVar

from sqlglot import exp

from dlt_contract_ops.destinations.batch import Query
from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.execution import PreparedQuery, Rows, SqlClientAdapter
from dlt_contract_ops.destinations.naming import data_location
from dlt_contract_ops.destinations.protocol import QueryKind
from dlt_contract_ops.destinations.session import wait_all
from dlt_contract_ops.destinations.sql import ParamStyle
from dlt_contract_ops.destinations.timeouts import DEFAULT_TIMEOUTS, Timeouts

log = logging.getLogger("dlt_contract_ops")

READ_ONLY_OPTION = "-c default_transaction_read_only=on"
#: seconds libpq waits for a connection when the credentials set none (libpq's 0 = forever)
CONNECT_TIMEOUT = 10


class PostgresAdapter(SqlClientAdapter):
    """PostgreSQL through dlt's psycopg2 client; `information_schema.columns`, `%s` params.

    PostgreSQL has no partition column in dlt's sense: dlt does not create partitioned
    tables there, so `partition_column` reports none.
    """

    name: ClassVar[str] = "postgres"
    capabilities: ClassVar[Capabilities] = Capabilities(
        dialect="postgres", read_only="`default_transaction_read_only=on` at connection start",
        query_timeout_by="server", regex_search=True, prepared_queries=True, opens_early=True,
        # coverage queries run at once, each on its own read-only session: PostgreSQL runs
        # one query per backend process, so separate tables scan in parallel
        pool_size=4,
    )
    paramstyle: ClassVar[ParamStyle] = "format"
    #: sessions the last `run_all` ran queries on (1 when it ran on the adapter's own)
    pool_sessions: int = 1

    def __init__(self, sql_client: Any, **kwargs: Any) -> None:
        super().__init__(sql_client, **kwargs)
        #: why pool sessions of the last `run_all` could not open (their queries then ran
        #: on the adapter's own connection)
        self.pool_failures: list[str] = []
        self._pool_lock = threading.Lock()
        self._pool_connections: list[Any] = []  # psycopg2 connections running batch queries

    def metadata_rows_estimate(self) -> exp.Expression:
        """`pg_class.reltuples` of the row's table: the planner's estimate as of the last
        VACUUM or ANALYZE (autovacuum's), no scan; -1 (never analyzed yet) reads as unknown.
        PostgreSQL declares no `load_prune_rows` (without an index on `_dlt_load_id` either
        query reads the whole heap): only a set `profiles_min_rows` uses it."""
        tuples = exp.column("reltuples", "c")
        known = exp.Case(ifs=[exp.If(this=exp.GTE(this=tuples, expression=exp.Literal.number(0)),
                                     true=exp.cast(tuples, "BIGINT"))])
        tables = exp.Table(this=exp.to_identifier("pg_class"), db=exp.to_identifier("pg_catalog"),
                           alias=exp.TableAlias(this=exp.to_identifier("c")))
        schemas = exp.Table(this=exp.to_identifier("pg_namespace"),
                            db=exp.to_identifier("pg_catalog"),
                            alias=exp.TableAlias(this=exp.to_identifier("n")))
        def same(own: exp.Column, other: exp.Column) -> exp.Expression:
            return exp.EQ(this=own, expression=other)

        return exp.Subquery(this=exp.select(known).from_(tables).join(
            schemas, on=same(exp.column("oid", "n"), exp.column("relnamespace", "c"))
        ).where(exp.and_(
            same(exp.column("nspname", "n"), exp.column("table_schema", "columns")),
            same(exp.column("relname", "c"), exp.column("table_name", "columns")),
        )))

    @classmethod
    def from_job_client(
        cls, job_client: Any, *, timeouts: Timeouts = DEFAULT_TIMEOUTS
    ) -> PostgresAdapter:
        make_read_only(job_client.config.credentials, timeouts)
        return cls(
            job_client.sql_client, location=data_location(job_client.config), timeouts=timeouts
        )

    def _interrupt_query(self) -> None:
        with self._pool_lock:
            connections = list(self._pool_connections)
        own = self._client.native_connection if self._client is not None else None
        for connection in [own, *connections]:
            if connection is None or connection.closed:
                continue
            try:
                connection.cancel()  # libpq's cancel request: thread-safe by design
            except Exception as exc:  # it may have closed meanwhile; cancel the others
                log.warning("cancelling a PostgreSQL query failed: %s", exc)

    def run_all(
        self, batch: Sequence[tuple[Query, Sequence[Any]]],
        kind: QueryKind, *, owned: bool = False,
    ) -> list[Rows | Exception]:
        """Run the batch on up to `capabilities.pool_size` sessions of their own (same credentials,
        so read-only and bounded too). Rendering and the read-only check happen here, before
        any thread. A session that cannot open is logged and kept in `pool_failures`; the
        queries it would have run run on the adapter's own connection."""
        workers = min(self.capabilities.pool_size, len(batch))
        if workers < 2:
            self.pool_sessions = 1
            return super().run_all(batch, kind, owned=owned)
        jobs: list[PreparedQuery | Exception] = []
        for query, params in batch:
            try:
                jobs.append(self.prepared(query, params, kind, owned))
            except Exception as exc:
                jobs.append(exc)
        self._open()  # a destination that cannot be reached fails once, clearly
        results: list[Rows | Exception] = [j if isinstance(j, Exception) else [] for j in jobs]
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i, job in enumerate(jobs):
            if not isinstance(job, Exception):
                todo.put(i)

        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="co-pg")
        sessions: list[Future[float]] = [
            pool.submit(self._pool_session, todo, jobs, results, kind) for _ in range(workers)
        ]
        try:
            wait_all(sessions, on_interrupt=self.cancel)
        finally:
            # normally all done; after an interrupt the cancelled sessions end on their own
            pool.shutdown(wait=False, cancel_futures=True)
        spent, opened = 0.0, 0
        self.pool_failures = []
        for n, session in enumerate(sessions, start=1):
            failure = session.exception()
            if failure is None:
                spent += session.result()
                opened += 1
                continue
            message = (
                f"PostgreSQL pool session {n} of {workers} for dataset `{self.dataset}` could "
                f"not open: {' '.join(str(failure).split())}. Its queries run on the adapter's "
                "own connection."
            )
            log.warning(message)
            self.pool_failures.append(message)
        # whatever failed sessions left undone runs on the adapter's own connection (which
        # counts those queries and their time itself)
        leftover = 0
        while not todo.empty():
            i = todo.get()
            leftover += 1
            job = jobs[i]
            assert not isinstance(job, Exception)
            try:
                results[i] = self._collect(self._start(job))
            except Exception as exc:
                results[i] = exc
        self.queries[kind] += sum(1 for j in jobs if not isinstance(j, Exception)) - leftover
        self.query_seconds[kind] += spent
        self.pool_sessions = max(opened, 1)
        return results

    def _pool_session(
        self,
        todo: queue.SimpleQueue[int],
        jobs: Sequence[PreparedQuery | Exception],
        results: list[Rows | Exception],
        kind: QueryKind,
    ) -> float:
        """One pool session: take queries until none is left; seconds spent in them. Raises
        only when the session cannot open (then it took no query)."""
        client = type(self._client)(
            self._client.dataset_name,
            self._client.staging_dataset_name,
            self._client.credentials,
            self._client.capabilities,
        )
        connection = client.open_connection()
        with self._pool_lock:
            self._pool_connections.append(connection)
        spent = 0.0
        try:
            while not self._cancelled.is_set():
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    break
                job = jobs[i]
                assert not isinstance(job, Exception)  # only runnable jobs are queued
                started = time.perf_counter()
                try:
                    rows = client.execute_sql(job.sql, *job.values)
                    results[i] = [tuple(r) for r in (rows or [])]
                except Exception as exc:
                    results[i] = self.translate_error(exc, job.named, kind)
                spent += time.perf_counter() - started
        finally:
            with self._pool_lock:
                self._pool_connections.remove(connection)
            client.close_connection()
        return spent


def make_read_only(credentials: Any, timeouts: Timeouts = DEFAULT_TIMEOUTS) -> None:
    """Add the read-only and timeout startup options to dlt `PostgresCredentials`; never
    wait forever to connect.

    Appended last, so they win over a `default_transaction_read_only` or `statement_timeout`
    a user put in `options` themselves: the reconciler's own are `query_timeout` and
    `lock_timeout`. JIT is off: PostgreSQL does not check for a cancel while it compiles a
    query (a 300-column sample query sat in LLVM for over an hour, deaf to
    `statement_timeout` and `pg_terminate_backend`), and a read-only probe gains nothing from it.
    """
    ours = (
        f"{READ_ONLY_OPTION} -c statement_timeout={timeouts.query_ms} "
        f"-c lock_timeout={timeouts.lock_ms} -c jit=off"
    )
    query = dict(credentials.query or {})
    options = str(query.get("options") or "")
    if not options.endswith(ours):
        query["options"] = f"{options} {ours}".strip()
    credentials.query = query
    timeout = getattr(credentials, "connect_timeout", None)
    if not timeout:
        credentials.connect_timeout = CONNECT_TIMEOUT
