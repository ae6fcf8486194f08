"""PostgreSQL: every session starts with `default_transaction_read_only = on`.

The setting goes in as a startup option (`-c ...` in libpq's `options`), not as a `SET`:
dlt's psycopg2 client resets the connection after a failed query (`RESET ALL`), which would
revert a `SET`, while a startup option stays the session default for its whole life.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from sqlglot import exp

from dlt_contract_ops.destinations.base import QueryKind, SqlClientAdapter, data_location
from dlt_contract_ops.destinations.sql import ParamStyle

READ_ONLY_OPTION = "-c default_transaction_read_only=on"
#: seconds libpq waits for a connection when the credentials set none (libpq's 0 = forever)
CONNECT_TIMEOUT = 10


class PostgresAdapter(SqlClientAdapter):
    """PostgreSQL through dlt's psycopg2 client; `information_schema.columns`, `%s` params.

    PostgreSQL has no partition column in dlt's sense: dlt does not create partitioned
    tables there, so `partition_column` reports none.
    """

    name: ClassVar[str] = "postgres"
    dialect: ClassVar[str] = "postgres"
    paramstyle: ClassVar[ParamStyle] = "format"

    #: coverage queries run at once, each on its own read-only session: PostgreSQL runs one
    #: query per backend process, so separate tables scan in parallel
    max_concurrency: ClassVar[int] = 4
    #: sessions the last `run_all` used (1 when it ran on the adapter's own connection)
    pool_sessions: int = 1

    @classmethod
    def from_job_client(cls, job_client: Any) -> PostgresAdapter:
        credentials = job_client.config.credentials
        make_read_only(credentials)
        return cls(job_client.sql_client, location=data_location(job_client.config))

    def run_all(
        self, batch: Sequence[tuple[exp.Expression, Sequence[Any]]], kind: QueryKind
    ) -> list[list[tuple[Any, ...]] | Exception]:
        """Run the batch on up to `max_concurrency` sessions of their own (same credentials,
        so read-only too). Rendering and the read-only check happen here, before any thread."""
        workers = min(self.max_concurrency, len(batch))
        if workers < 2:
            return super().run_all(batch, kind)
        prepared: list[tuple[str, list[Any]] | Exception] = []
        for query, params in batch:
            try:
                sql = self.driver_sql(query, len(params), kind)
                prepared.append((sql, [self.adapt_param(p) for p in params]))
            except Exception as exc:
                prepared.append(exc)
        self._ensure_open()  # a destination that cannot be reached fails once, clearly
        results: list[list[tuple[Any, ...]] | Exception] = [
            p if isinstance(p, Exception) else [] for p in prepared
        ]
        todo = iter([i for i, p in enumerate(prepared) if not isinstance(p, Exception)])
        lock = threading.Lock()

        def worker() -> float:
            spent = 0.0
            client = type(self._client)(
                self._client.dataset_name,
                self._client.staging_dataset_name,
                self._client.credentials,
                self._client.capabilities,
            )
            client.open_connection()
            try:
                while True:
                    with lock:
                        i = next(todo, None)
                    if i is None:
                        return spent
                    sql, values = prepared[i]  # type: ignore[misc]
                    started = time.perf_counter()
                    try:
                        rows = client.execute_sql(sql, *values)
                        results[i] = [tuple(r) for r in (rows or [])]
                    except Exception as exc:
                        results[i] = exc
                    spent += time.perf_counter() - started
            finally:
                client.close_connection()

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="co-pg") as pool:
            futures = [pool.submit(worker) for _ in range(workers)]
            spent = 0.0
            for f in futures:
                try:
                    spent += f.result()
                except Exception as exc:  # a session that could not open: run the rest here
                    del exc
        # whatever a failed session left undone runs on the adapter's own connection
        for i in todo:
            sql, values = prepared[i]  # type: ignore[misc]
            try:
                results[i] = [tuple(r) for r in (self._execute(sql, values) or [])]
            except Exception as exc:
                results[i] = exc
        self.queries[kind] += sum(1 for p in prepared if not isinstance(p, Exception))
        self.query_seconds[kind] += spent
        self.pool_sessions = workers
        return results


def make_read_only(credentials: Any) -> None:
    """Add the read-only startup option to dlt `PostgresCredentials`; never wait forever.

    Appended last, so it wins over a `default_transaction_read_only` a user put in
    `options` themselves.
    """
    query = dict(credentials.query or {})
    options = str(query.get("options") or "")
    query["options"] = f"{options} {READ_ONLY_OPTION}".strip()
    credentials.query = query
    timeout = getattr(credentials, "connect_timeout", None)
    if not timeout:
        credentials.connect_timeout = CONNECT_TIMEOUT
