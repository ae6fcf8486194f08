"""Real destinations for the end-to-end tests: how each one is configured, written to out of
band (the drift a test makes), and cleaned up. The reconciler itself never writes; these
helpers do, on purpose, with the backend's own driver."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from tests.conftest import require_server

PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_URL = f"postgresql://postgres:x@{PG_HOST}:{PG_PORT}/test"
MARIADB_HOST, MARIADB_PORT = "127.0.0.1", 3306
#: PyMySQL 1.2 builds a TLS context (the system's CA certificates) for every connection unless
#: told the server takes none; the loopback server of the tests takes none
MARIADB_URL = f"mysql+pymysql://root:@{MARIADB_HOST}:{MARIADB_PORT}/test?ssl_disabled=true"

#: out-of-band SQL: a statement, or a statement and its parameters
Statement = str | tuple[str, Sequence[Any]]
#: the rows of each statement
Rows = list[list[tuple[Any, ...]]]


def unique(prefix: str) -> str:
    """A dataset name no other test (or earlier run) uses."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


@dataclass
class Backend:
    """One destination as the tests drive it.

    `destination` is what a dlt pipeline and `[sources.*.contract_ops]` name; `credentials`
    goes to secrets.toml under `[destination.<destination>]`; `param` is the driver's
    placeholder for out-of-band SQL.
    """

    key: str
    destination: str
    credentials: str
    quote: str = '"'
    param: str = "%s"
    sqlite_file: Path | None = None
    duckdb_file: Path | None = None
    #: the database behind the destination, when it differs from `key` (SQLAlchemy)
    server: str = ""

    @property
    def kind(self) -> str:
        """Which database is behind it: postgres, mariadb, sqlite or duckdb."""
        return self.server or self.key

    def require(self) -> None:
        if self.kind == "postgres":
            require_server(PG_HOST, PG_PORT, "PostgreSQL")
        elif self.kind == "mariadb":
            require_server(MARIADB_HOST, MARIADB_PORT, "MariaDB")

    def q(self, *parts: str) -> str:
        """Quote identifier parts the backend's way (test-side SQL only)."""
        e = self.quote
        return ".".join(f"{e}{p.replace(e, e + e)}{e}" for p in parts)

    def _connect(self, dataset: str) -> Any:
        if self.kind == "postgres":
            import psycopg2

            con = psycopg2.connect(PG_URL)
            con.autocommit = True
            return con
        if self.kind == "mariadb":
            import pymysql

            return pymysql.connect(host=MARIADB_HOST, port=MARIADB_PORT, user="root",
                                   password="", database="test", autocommit=True,
                                   ssl_disabled=True)
        if self.kind == "duckdb":
            import duckdb as duckdb_lib

            assert self.duckdb_file is not None
            return duckdb_lib.connect(str(self.duckdb_file))
        assert self.sqlite_file is not None
        dataset_file = self.sqlite_file.with_name(
            f"{self.sqlite_file.stem}__{dataset}{self.sqlite_file.suffix}"
        )
        con = sqlite3.connect(self.sqlite_file, isolation_level=None)
        con.execute("ATTACH DATABASE ? AS " + self.q(dataset), [str(dataset_file)])
        return con

    def execute(self, dataset: str, statements: Sequence[Statement]) -> Rows:
        """Run SQL out of band; returns the rows of each statement."""
        with self.session(dataset) as execute:
            return execute(statements)

    @contextmanager
    def session(self, dataset: str) -> Iterator[Callable[[Sequence[Statement]], Rows]]:
        """`execute` over one connection, for many small batches of statements in a row (a
        DuckDB connection opens the file and checkpoints it on close: tens of ms each)."""
        con = self._connect(dataset)

        def execute(statements: Sequence[Statement]) -> Rows:
            out: Rows = []
            for stmt in statements:
                sql, params = (stmt, ()) if isinstance(stmt, str) else stmt
                cur = con.cursor()
                cur.execute(sql, tuple(params))
                out.append(list(cur.fetchall()) if cur.description else [])
                cur.close()
            if self.kind in ("sqlite", "duckdb"):
                con.commit()
            return out

        try:
            yield execute
        finally:
            con.close()

    def timestamp(self, moment: datetime) -> Any:
        """A value the backend stores in a dlt timestamp column for `moment`."""
        utc = moment.astimezone(timezone.utc)
        if self.kind == "sqlite":  # SQLAlchemy's text format
            return utc.replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")
        if self.kind == "mariadb":  # DATETIME: UTC wall time
            return utc.replace(tzinfo=None)
        return utc

    def days_ago(self, days: float) -> Any:
        return self.timestamp(datetime.now(timezone.utc) - timedelta(days=days))

    def drop_dataset(self, dataset: str) -> None:
        if self.kind == "postgres":
            self.execute(dataset, [f"DROP SCHEMA IF EXISTS {self.q(dataset)} CASCADE"])
        elif self.kind == "mariadb":
            self.execute(dataset, [f"DROP DATABASE IF EXISTS {self.q(dataset)}"])
        # sqlite: the files live in the test's tmp_path

    def secrets(self, pipeline: str | None = None, credentials: str | None = None) -> str:
        """The secrets.toml table with this backend's credentials; scoped to `pipeline`
        when given (dlt looks there first)."""
        section = f"{pipeline}.destination.{self.destination}" if pipeline else (
            f"destination.{self.destination}"
        )
        return f'[{section}]\ncredentials = "{credentials or self.credentials}"\n'


def postgres() -> Backend:
    return Backend("postgres", "postgres", PG_URL)


def mariadb() -> Backend:
    return Backend("mariadb", "sqlalchemy", MARIADB_URL, quote="`")


def duckdb(folder: Path) -> Backend:
    # named unlike any dataset: a DuckDB file named like its dataset breaks loads
    db = folder / "warehouse_store.duckdb"
    return Backend("duckdb", "duckdb", str(db), param="?", duckdb_file=db)


def sqla_postgres() -> Backend:
    """PostgreSQL through dlt's `sqlalchemy` destination."""
    url = f"postgresql+psycopg2://postgres:x@{PG_HOST}:{PG_PORT}/test"
    return Backend("sqla_postgres", "sqlalchemy", url, server="postgres")


def make(key: str, folder: Path) -> Backend:
    """The backend called `key`, its server required (skip on a laptop, fail under CI)."""
    chosen = {"postgres": postgres, "mariadb": mariadb, "sqla_postgres": sqla_postgres}.get(key)
    backend = chosen() if chosen else {"sqlite": sqlite, "duckdb": duckdb}[key](folder)
    backend.require()
    return backend


def sqlite(folder: Path) -> Backend:
    db = folder / "warehouse.db"
    return Backend("sqlite", "sqlalchemy", f"sqlite:///{db}", param="?", sqlite_file=db)


@contextmanager
def open_adapter_for(project_root: Path, backend: Backend, dataset: str) -> Iterator[Any]:
    """The reconciler's own adapter for `dataset`, opened in-process through dlt's config
    chain from the project's `.dlt/` (what `reconcile` does for each source)."""
    from dlt.common.schema import Schema

    from dlt_contract_ops.destinations.connect import open_adapter, resolve_target
    from dlt_contract_ops.settings import project_context

    with project_context(project_root) as root:
        target = resolve_target("t", "telemetry_pipe", backend.destination, dataset, root)
        adapter = open_adapter(target, Schema("telemetry"))
        try:
            yield adapter
        finally:
            adapter.close()


@contextmanager
def adapter_for(backend: Backend, dataset: str, **timeouts: float) -> Iterator[Any]:
    """The reconciler's adapter for `dataset` with `timeouts` (`query_timeout=`,
    `lock_timeout=`), credentials from the environment as dlt's config chain reads them."""
    from dlt.common.schema import Schema

    from dlt_contract_ops.destinations.connect import open_adapter, resolve_target

    key = f"DESTINATION__{backend.destination.upper()}__CREDENTIALS"
    before = os.environ.get(key)
    os.environ[key] = backend.credentials
    try:
        target = resolve_target("t", "faults_pipe", backend.destination, dataset, os.getcwd())
        adapter = open_adapter(target, Schema("faults"), **timeouts)
    finally:
        if before is None:
            del os.environ[key]
        else:
            os.environ[key] = before
    try:
        yield adapter
    finally:
        adapter.close()


@contextmanager
def two_table_dataset(backend: Backend) -> Iterator[str]:
    """A new dataset with tables `orders` and `items` (one row each), made out of band;
    dropped afterwards."""
    name = unique("co_hang")
    q = backend.q
    create = {"postgres": [f"CREATE SCHEMA {q(name)}"], "duckdb": [f"CREATE SCHEMA {q(name)}"],
              "mariadb": [f"CREATE DATABASE {q(name)}"], "sqlite": []}[backend.kind]
    tables = [
        stmt
        for t in ("orders", "items")
        for stmt in (f"CREATE TABLE {q(name, t)} (id INT)", f"INSERT INTO {q(name, t)} VALUES (1)")
    ]
    backend.execute(name, [*create, *tables])
    try:
        yield name
    finally:
        backend.drop_dataset(name)


@contextmanager
def locked(backend: Backend, dataset: str, *tables: str) -> Iterator[None]:
    """Another session holds an exclusive lock on `tables` of `dataset` until the block ends
    (PostgreSQL `LOCK TABLE ... IN ACCESS EXCLUSIVE MODE`, MariaDB `LOCK TABLES ... WRITE`)."""
    if backend.kind == "postgres":
        import psycopg2

        pg = psycopg2.connect(PG_URL)  # not autocommit: the lock lasts the transaction
        try:
            with pg.cursor() as cur:
                names = ", ".join(backend.q(dataset, t) for t in tables)
                cur.execute(f"LOCK TABLE {names} IN ACCESS EXCLUSIVE MODE")
            yield
        finally:
            pg.rollback()
            pg.close()
        return
    import pymysql

    maria = pymysql.connect(host=MARIADB_HOST, port=MARIADB_PORT, user="root", password="",
                            database="test", autocommit=True, ssl_disabled=True)
    try:
        with maria.cursor() as cur:
            cur.execute("LOCK TABLES " + ", ".join(f"{backend.q(dataset, t)} WRITE"
                                                   for t in tables))
        yield
    finally:
        with maria.cursor() as cur:
            cur.execute("UNLOCK TABLES")
        maria.close()


def count_rows(adapter: Any, table: str = "orders") -> Any:
    """`SELECT COUNT(*) FROM <table>` as a sqlglot expression."""
    from sqlglot import exp

    return exp.select(exp.func("count", exp.Star())).from_(adapter.table(table))


#: SELECTs on a table `x` that run for minutes unless stopped
SLOW = {
    "postgres": "SELECT pg_sleep(600) FROM x",
    "mariadb": "SELECT SLEEP(600) FROM x",
    "duckdb": "SELECT COUNT(*) FROM x CROSS JOIN range(1000000000000) AS r(a) WHERE r.a % 7 = 3",
    "sqlite": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r "
              "WHERE i < 1000000000000) SELECT COUNT(*) FROM r CROSS JOIN x",
}


def slow_select(backend: Backend, adapter: Any) -> Any:
    """The backend's slow SELECT on `orders`, built with sqlglot."""
    import sqlglot
    from sqlglot import exp

    query = sqlglot.parse_one(SLOW[backend.kind], read=adapter.capabilities.dialect)
    orders = adapter.table("orders")
    return query.transform(
        lambda n: orders.copy() if isinstance(n, exp.Table) and n.name == "x" else n
    )
