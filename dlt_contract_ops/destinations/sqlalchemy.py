"""dlt's `sqlalchemy` destination: SQLite, MySQL/MariaDB and PostgreSQL backends.

One entry point (`sqlalchemy`), one adapter class per backend, picked from the engine's
dialect when the adapter opens: each declares its own sqlglot dialect and catalog query.
Every new DBAPI connection is made read-only and bounded in time by engine listeners (its
connect arguments, then `SET`s once connected), so a reconnect inside SQLAlchemy's pool is
read-only and bounded too, and waits a bounded time to connect. A running query is stopped
with the backend's own means: SQLite's `interrupt()`, psycopg2's cancel request, MySQL/MariaDB
`KILL QUERY` from a second connection.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import date, datetime, timezone
from typing import Any, ClassVar

from sqlglot import exp

import dlt_contract_ops.dlt_private as dlt_private
from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.execution import SqlClientAdapter
from dlt_contract_ops.destinations.naming import data_location
from dlt_contract_ops.destinations.sql import (
    ParamStyle,
    param,
    render_kill_query,
    render_session_settings,
)
from dlt_contract_ops.destinations.sqla_listeners import bounded_connect, read_only, unbound_reads
from dlt_contract_ops.destinations.sqla_types import SqlaTypeNames
from dlt_contract_ops.destinations.timeouts import DEFAULT_TIMEOUTS, Timeouts
from dlt_contract_ops.destinations.typesize import NO_SIZE, TypeSize
from dlt_contract_ops.errors import DestinationError, UnsupportedDestinationError


class SqlalchemyAdapter(SqlClientAdapter):
    """Dispatches to the adapter of the engine's backend (`from_job_client`)."""

    name: ClassVar[str] = "sqlalchemy"
    capabilities: ClassVar[Capabilities] = Capabilities(  # each backend's class has its own
        dialect="sqlite", read_only="each backend's session statement (`on_connect`)",
        prepared_queries=True)
    #: SQLAlchemy `text()` binds `:name` on every backend
    paramstyle: ClassVar[ParamStyle] = "named"
    #: SQLAlchemy dialect names this class serves
    backends: ClassVar[tuple[str, ...]] = ()
    #: listener run on every new DBAPI connection, before any query
    on_connect: ClassVar[Any] = None
    network: ClassVar[bool] = True

    def __init__(self, sql_client: Any, **kwargs: Any) -> None:
        super().__init__(sql_client, **kwargs)
        # bound once, so the engine recognises them when the adapter reopens
        self._connect_listener = self._connect_params
        self._session_listener = self._setup_session
        self._dbapi: Any = None  # the DBAPI connection of the open session

    @classmethod
    def from_job_client(
        cls, job_client: Any, *, timeouts: Timeouts = DEFAULT_TIMEOUTS
    ) -> SqlClientAdapter:
        client = job_client.sql_client
        backend = str(client.dialect_name)
        location = data_location(job_client.config)
        for impl in (SQLiteAdapter, MySQLAdapter, SqlaPostgresAdapter):
            if backend in impl.backends:
                return impl(client, location=location, timeouts=timeouts)
        raise UnsupportedDestinationError(
            f"The `sqlalchemy` destination's `{backend}` backend is core tier: dlt loads it, "
            "but the reconciler's sqlalchemy adapter covers sqlite, mysql, mariadb and "
            "postgresql only. Register an adapter for it in the entry-point group "
            "`dlt_contract_ops.destinations` (docs/destinations.md)."
        )

    def _before_open(self) -> None:
        import sqlalchemy as sa

        engine = self._client.engine  # dlt creates it lazily; listeners go on before connect
        listener = type(self).on_connect
        if listener is not None and not sa.event.contains(engine, "connect", listener):
            sa.event.listen(engine, "connect", listener)
        if self.network and not sa.event.contains(engine, "do_connect", bounded_connect):
            sa.event.listen(engine, "do_connect", bounded_connect)
            sa.event.listen(engine, "connect", unbound_reads)
        for event, fn in (
            ("do_connect", self._connect_listener),
            ("connect", self._session_listener),
        ):
            if not sa.event.contains(engine, event, fn):
                sa.event.listen(engine, event, fn)

    def connect_params(self, cparams: dict[str, Any]) -> None:
        """Hook: bound the session through the driver's connect arguments (timeouts)."""

    def session_settings(self, dbapi_connection: Any) -> dict[str, int | float]:
        """Hook: session variables (timeouts) to `SET` on every new connection."""
        return {}

    def _connect_params(
        self, _dialect: Any, _record: Any, _cargs: Any, cparams: dict[str, Any]
    ) -> None:
        self.connect_params(cparams)

    def _setup_session(self, dbapi_connection: Any, _record: Any) -> None:
        settings = self.session_settings(dbapi_connection)
        if settings:
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute(render_session_settings(settings, self.capabilities.dialect))
            finally:
                cursor.close()

    def _on_open(self) -> None:
        # the raw DBAPI connection, taken here on the session thread: SQLAlchemy's
        # `Connection.connection` may reconnect, which no other thread must trigger
        self._dbapi = self._client.native_connection.connection.dbapi_connection

    def _close_on_session(self) -> None:
        self._dbapi = None
        super()._close_on_session()

    def _execute(self, sql: str, params: Sequence[Any]) -> Sequence[Sequence[Any]] | None:
        import sqlalchemy as sa

        # a text() object, so dlt does not %-format it; binds are :p0, :p1, ...
        bound = {f"p{i}": v for i, v in enumerate(params)}
        return self._client.execute_sql(sa.text(sql), **bound)  # type: ignore[no-any-return]

    def type_mapper(self) -> Any:
        """dlt's SQLAlchemy type mapper, reading type names through this backend's dialect."""
        if self._client is None:
            return super().type_mapper()
        dialect = self._client.dialect
        mapper = self._client.capabilities.get_type_mapper(dialect)
        return SqlaTypeNames(mapper, dialect, self.parse_type)

    def parse_type(self, dialect: Any, db_type: str) -> Any:
        """A reported type name as a SQLAlchemy type of this dialect, or None."""
        base = re.sub(r"\s*\(.*$", "", db_type).strip().lower()
        base = re.sub(r"\s+unsigned$", "", base)
        names = {k.lower(): v for k, v in getattr(dialect, "ischema_names", {}).items()}
        sa_type = names.get(base)
        return sa_type() if isinstance(sa_type, type) else sa_type


class SQLiteAdapter(SqlalchemyAdapter):
    """SQLite: each dlt dataset is a database file attached under the dataset's name.

    SQLite has no information_schema: one query joins `pragma_table_list` (SQLite 3.37+)
    with `pragma_table_info`. Sessions run with `PRAGMA query_only = ON`. Timestamps are
    text (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC) as SQLAlchemy writes them, so timestamp
    parameters are bound as that text and compare correctly. A declared size is no limit
    there (type affinity: `VARCHAR(3)` holds any text, `INTEGER` 64 bits), so no type has one.
    """

    metadata_size_columns: ClassVar[tuple[str, ...]] = ()
    #: a busy timeout (locks) but no statement timeout: the adapter interrupts a query
    capabilities: ClassVar[Capabilities] = Capabilities(
        dialect="sqlite", read_only="`PRAGMA query_only = ON` on every new connection",
        prepared_queries=True, no_regex="SQLite has no built-in regular-expression function")
    backends: ClassVar[tuple[str, ...]] = ("sqlite",)
    on_connect = staticmethod(read_only("PRAGMA query_only = ON"))
    network: ClassVar[bool] = False

    def connect_params(self, cparams: dict[str, Any]) -> None:
        # sqlite3's `timeout` is the busy timeout: how long to wait for another
        # connection's lock on the file before "database is locked"
        cparams["timeout"] = self.timeouts.lock

    def _interrupt_query(self) -> None:
        dbapi = self._dbapi
        if dbapi is not None:
            dbapi.interrupt()  # sqlite3 allows it from any thread

    def _before_open(self) -> None:
        from dlt.destinations.impl.sqlalchemy.configuration import SqlalchemyCredentials

        credentials = self._client.credentials
        database = credentials.database
        # connecting would create a missing file: a reconciler must not
        if not SqlalchemyCredentials.is_memory_database(database, credentials.query) and not (
            database and os.path.exists(database)
        ):
            raise DestinationError(
                f"SQLite database file `{database}` does not exist: check `credentials` of "
                "the sqlalchemy destination, or run the pipeline first."
            )
        super()._before_open()

    def metadata_query(self) -> exp.Select:
        t, p = exp.to_identifier("t"), exp.to_identifier("p")
        info = exp.Table(
            this=exp.Anonymous(
                this="pragma_table_info",
                expressions=[exp.column("name", t), exp.column("schema", t)],
            ),
            alias=exp.TableAlias(this=p),
        )
        return (
            exp.select(
                exp.alias_(exp.column("name", t), "table_name"),
                exp.alias_(exp.column("name", p), "column_name"),
                exp.alias_(exp.column("type", p), "data_type"),
                exp.alias_(
                    exp.Case(
                        ifs=[exp.If(this=exp.column(exp.to_identifier("notnull", quoted=True), p),
                                    true=exp.Literal.string("NO"))],
                        default=exp.Literal.string("YES"),
                    ),
                    "is_nullable",
                ),
            )
            .from_(exp.Table(this=exp.to_identifier("pragma_table_list"),
                             alias=exp.TableAlias(this=t)))
            .join(info, on=exp.true())
            .where(exp.EQ(this=exp.column("schema", t), expression=param()))
            .where(exp.EQ(this=exp.column("type", t), expression=exp.Literal.string("table")))
            .where(exp.Not(this=exp.Like(this=exp.column("name", t),
                                         expression=exp.Literal.string("sqlite%"))))
            .order_by(exp.column("name", t), exp.column("cid", p))
        )

    def type_size(self, data_type: str, reported: Sequence[Any]) -> TypeSize:
        return NO_SIZE

    def adapt_param(self, value: Any) -> Any:
        if isinstance(value, datetime):
            if value.tzinfo is not None:
                value = value.astimezone(timezone.utc).replace(tzinfo=None)
            return value.strftime("%Y-%m-%d %H:%M:%S.%f")
        if isinstance(value, date):
            return value.isoformat()
        return value

    def coerce_placeholder(self, placeholder: exp.Expression, live_type: str) -> exp.Expression:
        if live_type == "DATE":  # dates are `YYYY-MM-DD` text: compare dates with dates
            return exp.Anonymous(this="DATE", expressions=[placeholder])
        return placeholder

    def parse_type(self, dialect: Any, db_type: str) -> Any:
        return dialect._resolve_type_affinity(db_type)  # SQLite's own type-name rules

    def reproduce(self, query: exp.Expression, params: Sequence[Any]) -> str:
        """The SELECT, preceded by the `ATTACH DATABASE` line it needs: dlt keeps each dataset
        in a file of its own (`<db>__<dataset>.db`), which a fresh `sqlite3` shell has not
        attached, so the SELECT alone fails with "no such table"."""
        select = super().reproduce(query, params)
        client = self._client
        if client is None or self.dataset in ("main", ""):
            return select
        try:
            path = dlt_private.sqlite_dataset_file(client, self.dataset)
        except Exception:  # an in-memory or unusual database: the SELECT as it is
            return select
        literal = exp.Literal.string(str(path)).sql(dialect="sqlite")
        name = exp.to_identifier(self.live_dataset, quoted=True).sql(dialect="sqlite")
        return f"ATTACH DATABASE {literal} AS {name};\n{select}"


class MySQLAdapter(SqlalchemyAdapter):
    """MySQL and MariaDB: a dataset is a database, `information_schema.columns` filtered on
    `table_schema`. Sessions run `SET SESSION TRANSACTION READ ONLY`. Types are reported as
    `COLUMN_TYPE` (`TINYINT(1)`, `DECIMAL(38,9)`): `TINYINT(1)` is how MySQL stores a
    boolean, which the bare `DATA_TYPE` (`tinyint`) cannot tell from a small integer. The
    size is read from `COLUMN_TYPE` too: MySQL has no `numeric_precision_radix`, and its
    `numeric_precision` counts an integer's digits, a float's in its own way.
    """

    metadata_size_columns: ClassVar[tuple[str, ...]] = ()
    capabilities: ClassVar[Capabilities] = Capabilities(
        dialect="mysql", read_only="`SET SESSION TRANSACTION READ ONLY` on every connection",
        query_timeout_by="server", prepared_queries=True,
        no_regex="MariaDB has no REGEXP_LIKE, so MySQL-family destinations are not matched")
    backends: ClassVar[tuple[str, ...]] = ("mysql", "mariadb")
    on_connect = staticmethod(read_only("SET SESSION TRANSACTION READ ONLY"))

    def __init__(self, sql_client: Any, **kwargs: Any) -> None:
        super().__init__(sql_client, **kwargs)
        self._session_id: int | None = None  # CONNECTION_ID() of the open session

    def session_settings(self, dbapi_connection: Any) -> dict[str, int | float]:
        """MariaDB's `max_statement_time` is in seconds, MySQL's `max_execution_time` in
        milliseconds; both wait for locks at most `lock_wait_timeout` (metadata, LOCK TABLES)
        and `innodb_lock_wait_timeout` (rows), in whole seconds."""
        server = str(getattr(dbapi_connection, "get_server_info", lambda: "")()).lower()
        statement: dict[str, int | float] = (
            {"max_statement_time": self.timeouts.query}
            if "mariadb" in server
            else {"max_execution_time": self.timeouts.query_ms}
        )
        return {
            **statement,
            "lock_wait_timeout": self.timeouts.lock_seconds,
            "innodb_lock_wait_timeout": self.timeouts.lock_seconds,
        }

    def _on_open(self) -> None:
        super()._on_open()
        # `KILL QUERY` needs the server's id of this session
        query = exp.select(exp.Anonymous(this="CONNECTION_ID"))
        rows = self._execute(self.driver_sql(query, 0, "metadata"), [])
        self._session_id = int(rows[0][0]) if rows else None

    def _close_on_session(self) -> None:
        self._session_id = None
        super()._close_on_session()

    def _interrupt_query(self) -> None:
        session_id = self._session_id
        if session_id is None or self._client is None:
            return
        # from a connection of its own: the session's is busy running the query
        connection = self._client.engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                cursor.execute(render_kill_query(session_id, self.capabilities.dialect))
            finally:
                cursor.close()
        finally:
            connection.close()

    def metadata_query(self) -> exp.Select:
        query = super().metadata_query()
        query.expressions[2] = exp.column("column_type")
        return query

    def adapt_param(self, value: Any) -> Any:
        # DATETIME holds UTC wall time as dlt writes it; a driver would drop the offset
        if isinstance(value, datetime) and value.tzinfo is not None:
            return value.astimezone(timezone.utc).replace(tzinfo=None)
        return value

    def parse_type(self, dialect: Any, db_type: str) -> Any:
        if re.fullmatch(r"\s*tinyint\s*\(\s*1\s*\)\s*", db_type, flags=re.IGNORECASE):
            import sqlalchemy as sa

            return sa.Boolean()
        return super().parse_type(dialect, db_type)


class SqlaPostgresAdapter(SqlalchemyAdapter):
    """PostgreSQL through SQLAlchemy: sessions default to read-only transactions."""

    capabilities: ClassVar[Capabilities] = Capabilities(
        dialect="postgres", query_timeout_by="server", regex_search=True, prepared_queries=True,
        read_only="`SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY` on every connection")
    backends: ClassVar[tuple[str, ...]] = ("postgresql",)
    on_connect = staticmethod(
        read_only("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    )

    def connect_params(self, cparams: dict[str, Any]) -> None:
        # startup options, as on the `postgres` destination; appended, so they win
        ours = (
            f"-c statement_timeout={self.timeouts.query_ms} "
            f"-c lock_timeout={self.timeouts.lock_ms}"
        )
        cparams["options"] = f"{cparams.get('options') or ''} {ours}".strip()

    def _interrupt_query(self) -> None:
        dbapi = self._dbapi
        if dbapi is not None:
            dbapi.cancel()  # psycopg2's cancel request: thread-safe by design
