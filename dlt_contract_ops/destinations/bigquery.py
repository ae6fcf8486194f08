"""BigQuery: the dataset's own `INFORMATION_SCHEMA.COLUMNS`, one query, partitions included.

Importing this module needs no Google library: queries are built from the dataset and
project alone (`BigQueryAdapter.offline`), so they are golden-tested without a network.
BigQuery has no read-only session switch; the renderer refuses every non-SELECT, and the
credentials should carry read-only roles (docs/destinations.md). Nor has it a session
statement timeout: the adapter stops waiting after `Timeouts.query` (the job is not cancelled).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from sqlglot import exp

from dlt_contract_ops.core.columns import LiveTable
from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.execution import SqlClientAdapter
from dlt_contract_ops.destinations.naming import data_location
from dlt_contract_ops.destinations.sql import ParamStyle, ident
from dlt_contract_ops.destinations.timeouts import DEFAULT_TIMEOUTS, Timeouts

#: partitioning types a time window can be compared with (integer-range partitions cannot)
TIME_TYPES = frozenset({"TIMESTAMP", "DATE", "DATETIME"})


class BigQueryAdapter(SqlClientAdapter):
    """BigQuery through dlt's BigQuery client: tables are `project`.`dataset`.`table`.

    The partition column comes from `is_partitioning_column` in the same metadata query;
    a DATE or DATETIME partition column is compared with a `CAST` of the timestamp
    parameter, since BigQuery does not compare DATE with TIMESTAMP.
    """

    name: ClassVar[str] = "bigquery"
    capabilities: ClassVar[Capabilities] = Capabilities(
        dialect="bigquery", read_only="none: give it credentials that can only read",
        approximate_distinct=True, regex_search=True, prepared_queries=True,
    )
    paramstyle: ClassVar[ParamStyle] = "format"
    #: BigQuery's COLUMNS has no size columns: `data_type` spells it (`NUMERIC(5, 2)`)
    metadata_size_columns: ClassVar[tuple[str, ...]] = ()

    def __init__(self, sql_client: Any, **kwargs: Any) -> None:
        super().__init__(sql_client, **kwargs)
        self._partitions: dict[str, str] = {}
        self._metadata_read = False

    @classmethod
    def from_job_client(
        cls, job_client: Any, *, timeouts: Timeouts = DEFAULT_TIMEOUTS
    ) -> BigQueryAdapter:
        client = job_client.sql_client
        project = str(client.project_id)
        # the region alone would let two projects' same-named datasets share a cache entry
        location = f"{project}/{data_location(job_client.config)}"
        return cls(client, catalog=project, location=location, timeouts=timeouts)

    def metadata_query(self) -> exp.Select:
        project_dataset: exp.Expression = ident(self.live_dataset)
        if self.catalog:
            project_dataset = exp.Dot(this=ident(self.catalog), expression=project_dataset)
        info = exp.Table(
            this=exp.to_identifier("COLUMNS"),
            db=exp.to_identifier("INFORMATION_SCHEMA"),
            catalog=project_dataset,
        )
        return (
            exp.select(
                exp.column("table_name"),
                exp.column("column_name"),
                exp.column("data_type"),
                exp.column("is_nullable"),
                exp.column("is_partitioning_column"),
            )
            .from_(info)
            # pseudo columns (_PARTITIONTIME, _PARTITIONDATE) are not data a model declares
            .where(
                exp.EQ(this=exp.column("is_system_defined"), expression=exp.Literal.string("NO"))
            )
            .order_by(exp.column("table_name"), exp.column("ordinal_position"))
        )

    def metadata_params(self) -> list[Any]:
        return []  # the dataset is in the FROM clause: INFORMATION_SCHEMA is per dataset

    def read_metadata(self, rows: Sequence[Sequence[Any]]) -> dict[str, LiveTable]:
        self._partitions = {}
        live = super().read_metadata(rows)
        self._metadata_read = True
        return live

    def _on_metadata_row(self, table: str, column: str, row: Sequence[Any]) -> None:
        partitioning = str(row[4]).upper() == "YES" if len(row) > 4 else False
        if partitioning and self.normalize_type(str(row[2])) in TIME_TYPES:
            self._partitions[table] = column

    def partition_column(self, table: str) -> str | None:
        if not self._metadata_read and self._client is not None:
            # the reconciler may share another adapter's metadata; read our own once
            self.list_columns()
        return self._partitions.get(table)

    def coerce_placeholder(self, placeholder: exp.Expression, live_type: str) -> exp.Expression:
        if live_type in ("DATE", "DATETIME"):
            return exp.cast(placeholder, exp.DataType.build(live_type, dialect="bigquery"))
        return placeholder
