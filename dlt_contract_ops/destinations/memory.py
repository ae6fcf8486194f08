"""An adapter over an in-memory DuckDB database a test fills: a detector author's warehouse.

`InMemoryAdapter` is a real adapter (every query goes through the one renderer, the metadata
query reads DuckDB's catalog, `reproduce` renders DuckDB SQL), only its data is the test's
own: `add_table` creates a table with the columns and rows given. No dlt pipeline, no file,
no server. It is registered in no entry-point group: a run never picks it.

>>> adapter = InMemoryAdapter("shop_data")
>>> adapter.add_table("orders", {"id": "BIGINT", "_dlt_load_id": "VARCHAR"},
...                   [(1, "1767225600.1")])
>>> sorted(adapter.list_columns()["orders"].columns)
['_dlt_load_id', 'id']
>>> adapter.close()
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from sqlglot import exp

from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.duckdb import DuckDBAdapter, quiet_progress_bar
from dlt_contract_ops.destinations.naming import capabilities
from dlt_contract_ops.destinations.sql import ident
from dlt_contract_ops.destinations.timeouts import DEFAULT_TIMEOUTS, Timeouts

__all__ = ["InMemoryAdapter"]


class MemoryClient:
    """The part of a dlt SQL client `SqlClientAdapter` drives, over one in-memory DuckDB
    connection made up front, so the test fills it before the adapter's session opens."""

    def __init__(self, dataset_name: str) -> None:
        import duckdb

        self.dataset_name = dataset_name
        self.capabilities = capabilities("duckdb")  # names and types as DuckDB's
        self.native_connection: Any = duckdb.connect(":memory:")
        quiet_progress_bar(self.native_connection)
        schema = exp.Create(this=exp.Table(this=ident(dataset_name)), kind="SCHEMA")
        self.native_connection.execute(schema.sql("duckdb"))

    def open_connection(self) -> Any:
        return self.native_connection

    def close_connection(self) -> None:
        self.native_connection.close()

    def execute_sql(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = self.native_connection.execute(sql, list(params)).fetchall()
        return rows


class InMemoryAdapter(DuckDBAdapter):
    """A DuckDB adapter over an in-memory database of the test's own (`add_table`)."""

    name: ClassVar[str] = "memory"
    capabilities: ClassVar[Capabilities] = replace(
        DuckDBAdapter.capabilities,
        read_only="an in-memory database of the test's own; queries through the renderer",
    )

    def __init__(self, dataset: str = "dataset", *, timeouts: Timeouts = DEFAULT_TIMEOUTS
                 ) -> None:
        super().__init__(MemoryClient(dataset), location="memory", timeouts=timeouts)

    @classmethod
    def from_job_client(
        cls, job_client: Any, *, timeouts: Timeouts = DEFAULT_TIMEOUTS
    ) -> InMemoryAdapter:
        """An empty in-memory dataset named as the job client's (nothing of it is read)."""
        return cls(str(job_client.sql_client.dataset_name), timeouts=timeouts)

    @classmethod
    def offline(
        cls, dataset: str, *, catalog: str | None = None
    ) -> InMemoryAdapter:
        """An empty in-memory dataset: it costs no more than an adapter without one."""
        return cls(dataset)

    @classmethod
    def destination_type(cls) -> str:
        return "duckdb"

    def add_table(
        self, table: str, columns: Mapping[str, str],
        rows: Iterable[Sequence[Any] | Mapping[str, Any]] = (),
    ) -> None:
        """Create `table` in the dataset with `columns` (name -> DuckDB type, in order) and
        insert `rows`: tuples in the columns' order, or mappings by column name (a column
        a mapping lacks is NULL). Call it before the first query."""
        names = list(columns)
        ref = exp.Table(this=ident(table), db=ident(self.dataset))
        defs = [exp.ColumnDef(this=ident(n), kind=exp.DataType.build(t, dialect="duckdb"))
                for n, t in columns.items()]
        create = exp.Create(this=exp.Schema(this=ref, expressions=defs), kind="TABLE")
        connection = self._client.native_connection
        connection.execute(create.sql("duckdb"))
        values = [[r.get(n) for n in names] if isinstance(r, Mapping) else list(r) for r in rows]
        if values:
            marks = exp.Tuple(expressions=[exp.Placeholder() for _ in names])
            insert = exp.Insert(this=ref, expression=exp.Values(expressions=[marks]))
            connection.executemany(insert.sql("duckdb"), values)
