"""The DestinationAdapter protocol and the shared implementation over dlt's SQL clients.

An adapter lists live columns of a whole dataset in one query, runs read-only queries with
bound parameters, reports a table's partition column and declares its sqlglot dialect.
Credentials, casefolding and connections come from dlt's destination client; SQL text comes
only from `destinations.sql`, whose renderer refuses anything but a SELECT.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, ClassVar, Literal, Protocol, TypeVar, runtime_checkable

from sqlglot import exp

from dlt_contract_ops.core.columns import LiveColumn, LiveTable, TimeAxis
from dlt_contract_ops.destinations.sql import (
    ParamStyle,
    ident,
    inline_params,
    param,
    render,
    render_bound,
    table_ref,
)
from dlt_contract_ops.errors import DestinationError

__all__ = ["DestinationAdapter", "QueryKind", "SqlClientAdapter", "TimeAxis"]

QueryKind = Literal["metadata", "sample", "coverage", "partition"]

_A = TypeVar("_A", bound="SqlClientAdapter")
#: what an unquoted identifier may hold on every SQL destination dlt supports
_PLAIN_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_$]*")
_COMPARISONS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ)


@runtime_checkable
class DestinationAdapter(Protocol):
    """What the reconciler needs from a destination. Implement it to add one."""

    name: ClassVar[str]
    dialect: ClassVar[str]

    @property
    def dataset(self) -> str: ...

    def list_columns(self) -> dict[str, LiveTable]:
        """Every table of the dataset with its columns, in ONE metadata query."""
        ...

    def run(
        self, query: exp.Expression, params: Sequence[Any], kind: QueryKind
    ) -> list[tuple[Any, ...]]:
        """Run a read-only query (rendered through the one renderer) with bound parameters."""
        ...

    def partition_column(self, table: str) -> str | None:
        """The column the destination partitions `table` on, if any."""
        ...

    def table(self, name: str) -> exp.Table:
        """A fully qualified, quoted reference to `name` in the dataset."""
        ...

    def reproduce(self, query: exp.Expression, params: Sequence[Any]) -> str:
        """The query as text a user pastes into the destination's console."""
        ...

    def close(self) -> None: ...


def data_location(config: Any) -> str:
    """Where a dlt destination config points (host/port/database or file), without secrets.

    Two sources whose datasets share a name on different servers must not share a metadata
    cache entry, so the reconciler keys its cache on this.
    """
    for getter in ("data_location", "fingerprint"):
        try:
            value = getattr(config, getter)()
        except Exception:  # a config without that information raises; try the next
            continue
        if value:
            return str(value)
    return ""


def _capabilities(destination_type: str) -> Any:
    """dlt's capabilities of a destination type: no credentials, no driver needed."""
    from dlt.common.destination import Destination

    factory = Destination.from_reference(destination_type)
    assert factory is not None  # from_reference returns None only for a None reference
    return factory.capabilities()


class SqlClientAdapter:
    """A DestinationAdapter over a dlt `SqlClientBase`; subclasses declare what differs.

    Class attributes a subclass sets: `name` (the dlt destination type and entry-point name),
    `dialect` (sqlglot), `paramstyle` (how its driver binds), `metadata_schema_column`.
    Hooks: `metadata_query`/`metadata_params`, `adapt_param`, `coerce_placeholder`,
    `_before_open`/`_on_open` (make a session read-only), `_execute`.
    """

    name: ClassVar[str] = "sql"
    dialect: ClassVar[str] = "duckdb"
    paramstyle: ClassVar[ParamStyle] = "format"
    #: the column of information_schema.columns that holds the dataset (schema) name
    metadata_schema_column: ClassVar[str] = "table_schema"

    def __init__(
        self,
        sql_client: Any,
        *,
        dataset: str | None = None,
        catalog: str | None = None,
        casefold: Callable[[str], str] | None = None,
        location: str = "",
    ) -> None:
        self._client = sql_client
        self._dataset = dataset if dataset is not None else str(sql_client.dataset_name)
        self._catalog = catalog
        self.casefold: Callable[[str], str] = (
            casefold if casefold is not None else sql_client.capabilities.casefold_identifier
        )
        self.location = location
        self._opened = False
        self.queries: Counter[str] = Counter()
        self.query_seconds: defaultdict[str, float] = defaultdict(float)
        # from the last metadata query: live table name -> dlt-side column -> (live name, type)
        self._catalog_columns: dict[str, dict[str, tuple[str, str]]] = {}
        self._live_tables: dict[str, str] = {}  # dlt-side table name -> live table name

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_job_client(cls, job_client: Any) -> SqlClientAdapter:
        """Build from a dlt job client; subclasses make the session read-only here."""
        return cls(job_client.sql_client, location=data_location(job_client.config))

    @classmethod
    def offline(cls: type[_A], dataset: str, *, catalog: str | None = None) -> _A:
        """An adapter that builds and renders queries but has no connection (golden tests,
        docs). Casefolding comes from dlt's capabilities for `name`; `run` refuses.

        >>> SqlClientAdapter.offline("raw").name
        'sql'
        """
        caps = _capabilities(cls.destination_type())
        return cls(None, dataset=dataset, catalog=catalog, casefold=caps.casefold_identifier)

    @classmethod
    def destination_type(cls) -> str:
        """The dlt destination whose capabilities an offline adapter borrows."""
        return cls.name if cls.name != "sql" else "duckdb"

    def _before_open(self) -> None:
        """Hook: configure the connection (read-only, timeouts) before it is made."""

    def _on_open(self) -> None:
        """Hook: make a fresh session read-only where it can only be done after connecting."""

    def _ensure_open(self) -> None:
        if self._opened:
            return
        if self._client is None:
            raise DestinationError(
                f"The `{self.name}` adapter for dataset `{self.dataset}` was built offline: "
                "it renders queries but cannot run them. Open it with `open_adapter`."
            )
        try:
            self._before_open()
            self._client.open_connection()
            self._opened = True
            self._on_open()
        except DestinationError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise DestinationError(self._connect_message(exc)) from exc

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

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._opened:
            self._opened = False
            self._client.close_connection()

    @property
    def sql_client(self) -> Any:
        """dlt's SQL client the adapter runs on (None when built `offline`)."""
        return self._client

    # -- naming -------------------------------------------------------------------------
    @property
    def dataset(self) -> str:
        """The dataset name as dlt's schema knows it."""
        return self._dataset

    @property
    def catalog(self) -> str | None:
        """The catalog (BigQuery project) tables are qualified with, if any."""
        return self._catalog

    @property
    def live_dataset(self) -> str:
        """The dataset name as the destination's catalog spells it."""
        return self.casefold(self.dataset)

    def live_name(self, name: str) -> str:
        """Map a name the destination reports back to the name dlt's schema uses.

        Destinations that casefold unquoted identifiers (Snowflake: upper) report dlt's
        lower-case names folded; a name that folds to itself came from dlt and is unfolded.
        """
        if self.casefold is str or self.casefold(name.lower()) != name:
            return name
        return name.lower()

    def to_live(self, name: str) -> str:
        """The destination's spelling of a dlt-side `name` (inverse of `live_name`).

        Names the last metadata query reported are looked up exactly (`prepare`, `table`);
        this is the rule for the others: dlt's casefolding for a plain identifier
        (`payload_size` -> `PAYLOAD_SIZE` on Snowflake), the name as it is when folding would
        not read back as it (`userId`) or when only a quoted identifier can hold it
        (`ip-address`, `größe`): such a column was made out of band, quoted.
        """
        folded = self.casefold(name)
        if folded == name:
            return name
        if self.live_name(folded) == name and _PLAIN_IDENTIFIER.fullmatch(name):
            return folded
        return name

    def table(self, name: str) -> exp.Table:
        live = self._live_tables.get(name) or self.to_live(name)
        return table_ref(live, self.live_dataset, self.catalog)

    # -- metadata -----------------------------------------------------------------------
    def metadata_query(self) -> exp.Select:
        """One query over information_schema.columns for the whole dataset."""
        info = exp.Table(
            this=exp.to_identifier("columns"), db=exp.to_identifier("information_schema")
        )
        return (
            exp.select(
                exp.column("table_name"),
                exp.column("column_name"),
                exp.column("data_type"),
                exp.column("is_nullable"),
            )
            .from_(info)
            .where(exp.EQ(this=exp.column(self.metadata_schema_column), expression=param()))
            .order_by(exp.column("table_name"), exp.column("ordinal_position"))
        )

    def metadata_params(self) -> list[Any]:
        return [self.live_dataset]

    def list_columns(self) -> dict[str, LiveTable]:
        rows = self.run(self.metadata_query(), self.metadata_params(), "metadata")
        return self.read_metadata(rows)

    def read_metadata(self, rows: Sequence[Sequence[Any]]) -> dict[str, LiveTable]:
        """Rows `(table, column, type, is_nullable, ...)` to live tables, names unfolded."""
        tables: dict[str, dict[str, LiveColumn]] = {}
        self._catalog_columns = {}
        self._live_tables = {}
        for row in rows:
            live_t, live_c, data_type, is_nullable = (str(v) for v in row[:4])
            t, c = self.live_name(live_t), self.live_name(live_c)
            nullable = is_nullable.upper() in ("YES", "TRUE", "1", "Y")
            db_type = self.normalize_type(data_type)
            tables.setdefault(t, {})[c] = LiveColumn(c, db_type, nullable)
            self._live_tables[t] = live_t
            self._catalog_columns.setdefault(live_t, {})[c] = (live_c, db_type)
            self._on_metadata_row(t, c, row)
        return {t: LiveTable(t, cols) for t, cols in tables.items()}

    def normalize_type(self, data_type: str) -> str:
        """The destination type as reported to detectors (upper-case by default)."""
        return data_type.upper()

    def _on_metadata_row(self, table: str, column: str, row: Sequence[Any]) -> None:
        """Hook: read extra metadata columns (BigQuery's partitioning flag)."""

    def partition_column(self, table: str) -> str | None:
        return None

    def type_mapper(self) -> Any:
        """dlt's type mapper for this destination: reads live types back as dlt data types."""
        if self._client is not None:
            return self._client.capabilities.get_type_mapper()
        return _capabilities(self.destination_type()).get_type_mapper()

    # -- queries ------------------------------------------------------------------------
    def adapt_param(self, value: Any) -> Any:
        """A parameter as the driver should bind it. A naive datetime is taken as UTC."""
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value

    def coerce_placeholder(self, placeholder: exp.Expression, live_type: str) -> exp.Expression:
        """Hook: wrap a parameter compared with a column of `live_type` so the comparison
        type-checks on this destination (BigQuery will not compare DATE with TIMESTAMP)."""
        return placeholder

    def prepare(self, query: exp.Expression) -> exp.Expression:
        """A copy of `query` with columns spelled as the destination stores them and
        parameters coerced to the type of the column they are compared with."""
        q = query.copy()
        # one walk collects what the rewrite needs; the rewrite then edits those nodes in place
        tables: list[str] = []
        aliases: set[str] = set()
        comparisons: list[exp.Expression] = []
        quoted_columns: list[exp.Column] = []
        for node in q.walk():
            if isinstance(node, exp.Table):
                tables.append(node.name)
            elif isinstance(node, exp.Alias):
                aliases.add(node.alias)
            elif isinstance(node, _COMPARISONS):
                comparisons.append(node)
            elif (
                isinstance(node, exp.Column)
                and isinstance(node.this, exp.Identifier)
                and node.this.quoted
            ):
                quoted_columns.append(node)

        def lookup(name: str) -> tuple[str, str] | None:
            for t in tables:
                found = self._catalog_columns.get(t, {}).get(name)
                if found is not None:
                    return found
            return None

        for cmp in comparisons:
            left, right = cmp.this, cmp.expression
            if isinstance(left, exp.Placeholder):
                left, right = right, left
            if isinstance(left, exp.Column) and isinstance(right, exp.Placeholder):
                found = lookup(left.name)
                if found is not None:
                    right.replace(self.coerce_placeholder(right.copy(), found[1]))

        for node in quoted_columns:
            found = lookup(node.name)
            if found is not None:
                spelled = found[0]
            elif node.name in aliases:  # an output name of a subquery, not a table column
                continue
            else:
                spelled = self.to_live(node.name)
            if spelled != node.name:
                node.set("this", ident(spelled))
        return q

    def render(self, query: exp.Expression) -> str:
        """The query in this destination's dialect, as it would run (placeholders as `?`)."""
        return render(self.prepare(query), self.dialect)

    def driver_sql(self, query: exp.Expression, n_params: int, kind: QueryKind) -> str:
        """The exact text `run` sends to the driver: prepared, checked, placeholders in
        the driver's paramstyle. Golden tests pin it for destinations that cannot run here."""
        prepared = query if kind == "metadata" else self.prepare(query)
        return render_bound(prepared, self.dialect, self.paramstyle, n_params)

    def run(
        self, query: exp.Expression, params: Sequence[Any], kind: QueryKind
    ) -> list[tuple[Any, ...]]:
        # refuses non-SELECT before a connection is even opened
        sql = self.driver_sql(query, len(params), kind)
        values = [self.adapt_param(p) for p in params]
        self._ensure_open()
        started = time.perf_counter()
        try:
            rows = self._execute(sql, values)
        finally:
            self.queries[kind] += 1
            self.query_seconds[kind] += time.perf_counter() - started
        return [tuple(r) for r in (rows or [])]

    def run_all(
        self, batch: Sequence[tuple[exp.Expression, Sequence[Any]]], kind: QueryKind
    ) -> list[list[tuple[Any, ...]] | Exception]:
        """Run independent read-only queries; each result, or the exception it raised, in
        order. One failing query never stops the others. This base runs them one by one on
        the adapter's connection; adapters whose warehouse gains from it run them on a small
        bounded pool (`PostgresAdapter`)."""
        out: list[list[tuple[Any, ...]] | Exception] = []
        for query, params in batch:
            try:
                out.append(self.run(query, params, kind))
            except Exception as exc:
                out.append(exc)
        return out

    def _execute(self, sql: str, params: Sequence[Any]) -> Sequence[Sequence[Any]] | None:
        """Send rendered SQL to the driver through dlt's client."""
        return self._client.execute_sql(sql, *params)  # type: ignore[no-any-return]

    def reproduce(self, query: exp.Expression, params: Sequence[Any]) -> str:
        values = [self.adapt_param(p) for p in params]
        return render(inline_params(self.prepare(query), values), self.dialect)
