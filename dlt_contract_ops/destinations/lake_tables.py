"""Delta and Iceberg tables of a dlt `filesystem` dataset: the columns from the table's own log
or metadata, and the rows of its current version as a view on the adapter's DuckDB connection.

DuckDB's `delta` and `iceberg` extensions cannot be downloaded on an air-gapped machine, so
the tables are read through the libraries dlt writes them with: `deltalake` and `pyiceberg`
name the current version's data files, which DuckDB's `read_parquet` reads where they hold
the rows as they are (no deletion vector or delete file, no partition column kept in the log
alone, no renamed column); else the table is read as those libraries read it (an Arrow
dataset of the Delta table, which DuckDB scans with filters and projections pushed down; the
Iceberg snapshot's scan, as Arrow). Where the files hold the rows as they are, each file's
`_dlt_load_id` range from the table's own statistics (Delta add actions, Iceberg manifest
bounds) goes along (`TableFiles.ranges`): a query of some loads reads only the files whose
range can hold them (`lake_loads`). Where the extension is already installed,
`delta_scan` reads a local Delta table instead. Storage options, credentials and the current
Iceberg metadata file come from dlt's own helpers, as dlt's loader uses them.

Only the log and metadata are read: no snapshot, log entry, checkpoint or catalog entry is
written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from sqlglot import exp

from dlt_contract_ops.core.columns import LOAD_ID
from dlt_contract_ops.destinations.lake_files import (
    ReadProblem,
    TableColumns,
    TableFiles,
    duckdb_types,
    parquet_relation,
)

__all__ = ["open_table_scan", "read_open_table"]

log = logging.getLogger("dlt_contract_ops")
#: each data file's least and greatest `_dlt_load_id` (`TableFiles.ranges`); None: not known
Ranges = tuple[tuple[str, str], ...] | None
#: the DuckDB table function that reads each open table format where its extension loads
_SCANS = {"delta": "delta_scan", "iceberg": "iceberg_scan"}
#: a string statistic this long may have been cut short by its writer (Spark: 32)
_TRUNCATED = 32


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
    uris = tuple(delta.file_uris())
    plain = bool(uris) and _plain_files(delta)
    files = TableFiles(table.name, "delta", uris, table.location,
                       _exactly(_delta_ranges, delta, uris) if plain else None)
    if config.is_local_filesystem and _extension_loads(connection, "delta"):
        scan = exp.select(exp.Star()).from_(exp.Table(this=open_table_scan(table)))
        connection.sql(scan.sql("duckdb")).create_view(table.name, replace=True)
    elif plain:
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


def _exactly(ranges: Callable[..., Ranges], *args: Any) -> Ranges:
    """`ranges(*args)`, or None (the table read whole) when the statistics cannot be read
    as expected: a library version that lays them out otherwise must not fail the table."""
    try:
        return ranges(*args)
    except Exception as exc:
        log.debug("load id ranges unreadable (%s): the table is read whole", exc)
        return None


def _delta_ranges(delta: Any, uris: tuple[str, ...]) -> Ranges:
    """Each file's `_dlt_load_id` range from the current version's add actions (the per-file
    statistics delta-rs and Spark write), in `uris` order; None when a file has none, or its
    bound may be a truncated one (32 characters and more: Spark cuts string statistics
    there; a load id is 17 or so)."""
    import pyarrow as pa

    actions = pa.table(delta.get_add_actions(flatten=True))
    low, high = f"min.{LOAD_ID}", f"max.{LOAD_ID}"
    if low not in actions.column_names or high not in actions.column_names:
        return None
    by_path = {unquote(str(row["path"])): (row[low], row[high])
               for row in actions.select(["path", low, high]).to_pylist()}
    ranges = []
    for uri in uris:
        found = [r for p, r in by_path.items() if uri.endswith(f"/{p}")]
        if len(found) != 1 or not _exact(*found[0]):
            return None
        ranges.append(found[0])
    return tuple(ranges)


def _exact(low: Any, high: Any) -> bool:
    return (isinstance(low, str) and isinstance(high, str)
            and len(low) < _TRUNCATED and len(high) < _TRUNCATED)


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
    tasks = list(scan.plan_files())
    paths = tuple(task.file.file_path for task in tasks)
    if paths and _plain_iceberg(iceberg, tasks):
        files = TableFiles(table.name, "iceberg", paths, metadata,
                           _exactly(_iceberg_ranges, iceberg, tasks))
        parquet_relation(connection, paths).create_view(table.name, replace=True)
    else:
        # the current snapshot in memory: pyiceberg applies deletes and schema evolution by
        # field id, which a plain Parquet scan of the data files would not
        files = TableFiles(table.name, "iceberg", paths, metadata)
        connection.register(table.name, scan.to_arrow())
    return TableColumns(files, _columns(connection, schema), files.files)


def _plain_iceberg(iceberg: Any, tasks: list[Any]) -> bool:
    """Whether the current snapshot's rows are exactly its data files' rows, by name: Parquet
    files with no delete file against them, and every field name bound to one field id in
    every schema the table had (a rename, or a column dropped and added again, would make a
    file's column mean another one)."""
    from pyiceberg.manifest import FileFormat

    if any(task.delete_files or task.file.file_format != FileFormat.PARQUET for task in tasks):
        return False
    ids: dict[str, int] = {}
    names: dict[int, str] = {}
    for schema in iceberg.metadata.schemas:
        for field in schema.fields:
            if ids.setdefault(field.name, field.field_id) != field.field_id or \
                    names.setdefault(field.field_id, field.name) != field.name:
                return False
    return True


def _iceberg_ranges(iceberg: Any, tasks: list[Any]) -> Ranges:
    """Each data file's `_dlt_load_id` bounds from the manifests (what pyiceberg's own scan
    planning prunes by; truncated to 16 characters by default: the lower bound a prefix, the
    upper one rounded up), in `tasks` order; None when a file has none."""
    from pyiceberg.conversions import from_bytes

    try:
        field = iceberg.schema().find_field(LOAD_ID)
    except ValueError:
        return None
    ranges = []
    for task in tasks:
        low = (task.file.lower_bounds or {}).get(field.field_id)
        high = (task.file.upper_bounds or {}).get(field.field_id)
        if low is None or high is None:
            return None
        ranges.append((str(from_bytes(field.field_type, low)),
                       str(from_bytes(field.field_type, high))))
    return tuple(ranges)
