"""The DestinationAdapter protocol and the shared implementation over dlt's SQL clients.

An adapter lists live columns of a whole dataset in one query, runs read-only queries with
bound parameters, reports a table's partition column and declares its sqlglot dialect.
Credentials, dataset-name normalization and connections come from dlt's destination client.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from sqlglot import exp

from dlt_contract_ops.core.columns import LiveColumn, LiveTable, TimeAxis
from dlt_contract_ops.destinations.sql import col, inline_params, param, render, table_ref

QueryKind = Literal["metadata", "sample", "coverage", "partition"]


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

    def run(self, query: exp.Expression, params: Sequence[Any], kind: QueryKind) -> list[tuple[Any, ...]]:
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


class SqlClientAdapter:
    """A DestinationAdapter over a dlt `SqlClientBase`; subclasses set name and dialect."""

    name: ClassVar[str] = "sql"
    dialect: ClassVar[str] = "duckdb"
    #: how the metadata query filters the dataset column of information_schema.columns
    metadata_schema_column: ClassVar[str] = "table_schema"

    def __init__(self, sql_client: Any) -> None:
        self._client = sql_client
        self._opened = False
        self.queries: Counter[str] = Counter()
        self.query_seconds: Counter[str] = Counter()
        self.casefold = sql_client.capabilities.casefold_identifier

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_job_client(cls, job_client: Any) -> SqlClientAdapter:
        """Build from a dlt job client; subclasses make the session read-only here."""
        return cls(job_client.sql_client)

    def _ensure_open(self) -> None:
        if not self._opened:
            self._client.open_connection()
            self._opened = True
            self._on_open()

    def _on_open(self) -> None:
        """Hook to make a fresh session read-only where the destination supports it."""

    def close(self) -> None:
        if self._opened:
            self._client.close_connection()
            self._opened = False

    # -- naming -------------------------------------------------------------------------
    @property
    def dataset(self) -> str:
        return str(self._client.dataset_name)

    @property
    def catalog(self) -> str | None:
        return None

    def table(self, name: str) -> exp.Table:
        return table_ref(self.casefold(name), self.dataset, self.catalog)

    def live_name(self, name: str) -> str:
        """Map a name the destination reports back to the name dlt's schema uses.

        Destinations that casefold unquoted identifiers (Snowflake: upper) report dlt's
        lower-case names folded; a name that folds to itself came from dlt and is unfolded.
        """
        if self.casefold is str or self.casefold(name.lower()) != name:
            return name
        return name.lower()

    # -- queries ------------------------------------------------------------------------
    def metadata_query(self) -> exp.Select:
        info = exp.Table(this=exp.to_identifier("columns"), db=exp.to_identifier("information_schema"))
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
        return [self.dataset]

    def list_columns(self) -> dict[str, LiveTable]:
        rows = self.run(self.metadata_query(), self.metadata_params(), "metadata")
        tables: dict[str, dict[str, LiveColumn]] = {}
        for table_name, column_name, data_type, is_nullable in rows:
            t = self.live_name(str(table_name))
            c = self.live_name(str(column_name))
            nullable = str(is_nullable).upper() in ("YES", "TRUE", "1")
            tables.setdefault(t, {})[c] = LiveColumn(c, str(data_type).upper(), nullable)
        return {t: LiveTable(t, cols) for t, cols in tables.items()}

    def partition_column(self, table: str) -> str | None:
        return None

    def render(self, query: exp.Expression) -> str:
        return render(query, self.dialect)

    def run(
        self, query: exp.Expression, params: Sequence[Any], kind: QueryKind
    ) -> list[tuple[Any, ...]]:
        sql = self.render(query)  # refuses non-SELECT before any driver sees it
        self._ensure_open()
        started = time.perf_counter()
        try:
            rows = self._client.execute_sql(sql, *params)
        finally:
            self.queries[kind] += 1
            self.query_seconds[kind] += time.perf_counter() - started
        return [tuple(r) for r in (rows or [])]

    def reproduce(self, query: exp.Expression, params: Sequence[Any]) -> str:
        return self.render(inline_params(query, params))


def column(name: str) -> exp.Column:
    """Re-exported so detectors' query builders use the same quoting path."""
    return col(name)
