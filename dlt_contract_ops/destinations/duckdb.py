"""DuckDB: the database file is opened read-only."""

from __future__ import annotations

from typing import Any, ClassVar

from dlt_contract_ops.destinations.base import SqlClientAdapter


class DuckDBAdapter(SqlClientAdapter):
    name: ClassVar[str] = "duckdb"
    dialect: ClassVar[str] = "duckdb"

    @classmethod
    def from_job_client(cls, job_client: Any) -> DuckDBAdapter:
        # set before the first connection: dlt's pool opens the file with this flag
        job_client.config.credentials.read_only = True
        return cls(job_client.sql_client)
