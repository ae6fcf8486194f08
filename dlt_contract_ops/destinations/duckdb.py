"""DuckDB: the database file is opened read-only; queries are bounded by the adapter.

DuckDB has no statement or lock timeout setting: the adapter stops a query that runs past
`Timeouts.query` itself, with the connection's `interrupt()`, as it does on Ctrl-C. A DuckDB
file that another process has open for writing cannot be opened at all, so there is no lock
to wait for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from sqlglot import exp

from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.execution import SqlClientAdapter
from dlt_contract_ops.destinations.naming import data_location
from dlt_contract_ops.destinations.sql import ParamStyle
from dlt_contract_ops.destinations.timeouts import DEFAULT_TIMEOUTS, Timeouts


def quiet_progress_bar(connection: Any) -> None:
    """DuckDB draws a progress bar on the process's stdout (fd 1, piped or not) for a query
    running past `progress_bar_time` (2 s): it would cut a JSON document on stdout in two.
    A session setting, off for this connection (and cursors made from it)."""
    connection.execute("SET enable_progress_bar = false")


class DuckDBAdapter(SqlClientAdapter):
    """DuckDB through dlt's duckdb client; `information_schema.columns`, `?` parameters."""

    name: ClassVar[str] = "duckdb"
    capabilities: ClassVar[Capabilities] = Capabilities(
        dialect="duckdb", read_only="the database file is opened read-only",
        approximate_distinct=True, regex_search=True, prepared_queries=True, opens_early=True,
        # a row group: DuckDB's zone maps (min/max per column) skip whole row groups
        load_prune_rows=122_880,
    )
    paramstyle: ClassVar[ParamStyle] = "qmark"

    def metadata_rows_estimate(self) -> exp.Expression:
        """`duckdb_tables().estimated_size` of the row's table: the catalog's row count, no
        scan (it may lag behind deletes)."""
        def same(own: str, outer: str) -> exp.Expression:
            return exp.EQ(this=exp.column(own, "d"), expression=exp.column(outer, "columns"))

        tables = exp.Table(this=exp.Anonymous(this="duckdb_tables"),
                           alias=exp.TableAlias(this=exp.to_identifier("d")))
        return exp.Subquery(this=exp.select(exp.column("estimated_size", "d")).from_(tables)
                            .where(exp.and_(same("database_name", "table_catalog"),
                                            same("schema_name", "table_schema"),
                                            same("table_name", "table_name"))))

    @classmethod
    def from_job_client(
        cls, job_client: Any, *, timeouts: Timeouts = DEFAULT_TIMEOUTS
    ) -> DuckDBAdapter:
        # set before the first connection: dlt's pool opens the file with this flag, so
        # DuckDB itself rejects any write on this connection
        credentials = job_client.config.credentials
        credentials.read_only = True
        # no progress bar on stdout (`quiet_progress_bar`): after the user's settings (setting
        # `progress_bar_time` turns the bar on again), before dlt's `search_path`
        credentials.local_config = {**{
            k: v for k, v in (credentials.local_config or {}).items()
            if k != "enable_progress_bar"}, "enable_progress_bar": False}
        return cls(
            job_client.sql_client, location=data_location(job_client.config), timeouts=timeouts
        )

    def _execute(self, sql: str, params: Sequence[Any]) -> Sequence[Sequence[Any]] | None:
        # straight to the connection: dlt's execute_sql rewrites every `%s` in the text to
        # `?` when parameters are passed, which would corrupt a column named like `a%s`
        rows: list[tuple[Any, ...]] = self._client.native_connection.execute(
            sql, list(params)
        ).fetchall()
        return rows

    def _connect_message(self, exc: BaseException) -> str:
        """A file another process holds for writing says so first: it is not a credentials
        problem, and waiting (or running reconcile after the load) is the fix."""
        text = " ".join(str(exc).split())
        cause = exc.__cause__
        while cause is not None and cause is not cause.__cause__:
            text += " " + " ".join(str(cause).split())
            cause = cause.__cause__
        if "Could not set lock" in text or "Conflicting lock" in text:
            holder = re.search(r"\(PID (\d+)\)", text)
            who = f" (process {holder.group(1)})" if holder else ""
            return (
                f"DuckDB file `{self.location or self.dataset}` is locked by a writer{who}: a "
                "pipeline is probably loading into it. DuckDB lets no reader in meanwhile; run "
                "reconcile when the load has finished (or schedule it after the load)."
            )
        return super()._connect_message(exc)

    def _interrupt_query(self) -> None:
        connection = self._client.native_connection if self._client is not None else None
        if connection is not None:
            connection.interrupt()  # DuckDB's own: safe from another thread
