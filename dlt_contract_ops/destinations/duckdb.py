"""DuckDB: the database file is opened read-only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from dlt_contract_ops.destinations.base import SqlClientAdapter, data_location
from dlt_contract_ops.destinations.sql import ParamStyle


class DuckDBAdapter(SqlClientAdapter):
    """DuckDB through dlt's duckdb client; `information_schema.columns`, `?` parameters."""

    name: ClassVar[str] = "duckdb"
    dialect: ClassVar[str] = "duckdb"
    paramstyle: ClassVar[ParamStyle] = "qmark"

    @classmethod
    def from_job_client(cls, job_client: Any) -> DuckDBAdapter:
        # set before the first connection: dlt's pool opens the file with this flag, so
        # DuckDB itself rejects any write on this connection
        job_client.config.credentials.read_only = True
        return cls(job_client.sql_client, location=data_location(job_client.config))

    def _execute(self, sql: str, params: Sequence[Any]) -> Sequence[Sequence[Any]] | None:
        # straight to the connection: dlt's execute_sql rewrites every `%s` in the text to
        # `?` when parameters are passed, which would corrupt a column named like `a%s`
        rows: list[tuple[Any, ...]] = self._client.native_connection.execute(
            sql, list(params)
        ).fetchall()
        return rows
