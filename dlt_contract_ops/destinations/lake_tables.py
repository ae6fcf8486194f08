"""Delta and Iceberg tables of a dlt `filesystem` dataset: the columns from the table's own log
or metadata, and the rows of its current version as a view on the adapter's DuckDB connection.

DuckDB's `delta` and `iceberg` extensions cannot be downloaded on an air-gapped machine, so
the tables are read through the libraries dlt writes them with: `deltalake` (the current
version's files, read by DuckDB's `read_parquet` where they hold the rows as they are; else
an Arrow dataset of them, which DuckDB scans with filters and projections pushed down) and
`pyiceberg` (the current snapshot's scan, as Arrow). Where the extension is already installed,
`delta_scan` reads a local Delta table instead. Storage options, credentials and the current
Iceberg metadata file come from dlt's own helpers, as dlt's loader uses them.

Only the log and metadata are read: no snapshot, log entry, checkpoint or catalog entry is
written.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dlt_contract_ops.destinations.lake_files import (
    ReadProblem,
    TableColumns,
    TableFiles,
    duckdb_types,
    parquet_relation,
)

__all__ = ["open_table_scan", "read_open_table"]

#: the DuckDB table function that reads each open table format where its extension loads
_SCANS = {"delta": "delta_scan", "iceberg": "iceberg_scan"}


def read_open_table(connection: Any, table: TableFiles, job_client: Any
                    ) -> tuple[TableColumns, bool]:
    """`table`'s columns from its log or metadata, and whether its view was made (named as
    the table) on `connection`. A table that cannot be opened is a `ReadProblem` naming the
    table and its folder; the other tables are read all the same."""
    read = _read_delta if table.format == "delta" else _read_iceberg
    try:
        return read(connection, table, job_client), True
    except Exception as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        kind = table.format.capitalize()
        return TableColumns(table, problems=[ReadProblem(
            table.name, f"table `{table.name}`: the {kind} table at `{table.location}` cannot "
            f"be read ({detail}). Check that its log and data files are intact and readable; "
            "the other tables were checked.")]), False


def open_table_scan(table: TableFiles) -> exp.Expression:
    """The DuckDB table function a shell with the format's extension reads `table` with.

    >>> open_table_scan(TableFiles("t", "delta", (), "/b/t")).sql("duckdb")
    "DELTA_SCAN('/b/t')"
    """
    return exp.Anonymous(this=_SCANS[table.format],
                         expressions=[exp.Literal.string(table.location)])


def _columns(connection: Any, schema: Any) -> list[tuple[str, str, bool]]:
    return [(f.name, t, f.nullable)
            for f, t in zip(schema, duckdb_types(connection, schema), strict=True)]


def _extension_loads(connection: Any, name: str) -> bool:
    """Whether DuckDB's `name` extension is installed here (never downloaded: the
    connection has autoinstall off)."""
    try:
        connection.load_extension(name)
    except Exception:
        return False
    return True


def _read_delta(connection: Any, table: TableFiles, job_client: Any) -> TableColumns:
    import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no stubs
    from deltalake import DeltaTable
    from dlt.common.libs.deltalake import deltalake_storage_options

    config = job_client.config
    options = deltalake_storage_options(config.credentials, config.deltalake_storage_options)
    delta = DeltaTable(table.location, storage_options=options)
    schema = pa.schema(delta.schema().to_arrow())
    files = TableFiles(table.name, "delta", tuple(delta.file_uris()), table.location)
    if config.is_local_filesystem and _extension_loads(connection, "delta"):
        scan = exp.select(exp.Star()).from_(exp.Table(this=open_table_scan(table)))
        connection.sql(scan.sql("duckdb")).create_view(table.name, replace=True)
    elif files.files and _plain_files(delta):
        # the current version's files as they lie: an Arrow dataset would push DuckDB's
        # filters down with the table's `string` type, and a file a merge wrote holds
        # `string_view` (pyarrow then fails the scan); DuckDB reads both as VARCHAR
        parquet_relation(connection, files.files).create_view(table.name, replace=True)
    else:
        connection.register(table.name, delta.to_pyarrow_dataset())
    return TableColumns(files, _columns(connection, schema), files.files)


def _plain_files(delta: Any) -> bool:
    """Whether the current version's rows are exactly its files' rows: no partition column
    (kept in the log, not the files), and reader version 1 (no column mapping, which renames
    columns in the files, and no deletion vectors, which drop rows of a file)."""
    return (not delta.metadata().partition_columns
            and delta.protocol().min_reader_version < 2)


def _read_iceberg(connection: Any, table: TableFiles, job_client: Any) -> TableColumns:
    from dlt.common.libs.pyiceberg import get_last_metadata_file
    from pyiceberg.table import StaticTable

    config = job_client.config
    folder = job_client.pathlib.join(job_client.get_table_dir(table.name), "metadata")
    metadata = get_last_metadata_file(folder, job_client.fs_client, config)
    fileio = getattr(config.credentials, "to_pyiceberg_fileio_config", None)
    iceberg = StaticTable.from_metadata(metadata, properties=fileio() if fileio else {})
    schema = iceberg.schema().as_arrow()
    scan = iceberg.scan()
    files = TableFiles(table.name, "iceberg",
                       tuple(task.file.file_path for task in scan.plan_files()), metadata)
    # the current snapshot in memory: pyiceberg applies deletes and schema evolution by
    # field id, which a plain Parquet scan of the data files would not
    connection.register(table.name, scan.to_arrow())
    return TableColumns(files, _columns(connection, schema), files.files)
