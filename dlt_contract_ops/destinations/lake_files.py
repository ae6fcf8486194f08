"""What a dlt `filesystem` dataset holds: its tables, each table's files and their format, and
the columns those files say they have (Parquet footers, JSONL as DuckDB infers it; Delta and
Iceberg tables are read in `lake_tables`).

Everything here only lists and reads: no file, folder or log entry is ever written. A file
that cannot be read is a `ReadProblem` naming its table and path; the other tables (and the
readable files of the same table) are read all the same.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from dlt_contract_ops.errors import DestinationError, UnsupportedDestinationError

__all__ = ["ReadProblem", "TableColumns", "TableFiles", "duckdb_types", "file_format",
           "list_tables", "read_columns"]

FileFormat = Literal["parquet", "jsonl", "delta", "iceberg"]

#: file name endings dlt's filesystem destination writes, per format it reads back here
_SUFFIXES: tuple[tuple[str, FileFormat], ...] = (
    (".parquet", "parquet"),
    (".jsonl", "jsonl"),
    (".jsonl.gz", "jsonl"),
)
#: the table prefix layouts whose table names are folder names (dlt's default layout)
_FOLDER_LAYOUTS = ("{table_name}/", "{schema_name}/{table_name}/")


@dataclass(frozen=True)
class ReadProblem:
    """Something about one table's files: an `error` (the table could not be read in full,
    the run exits nonzero) or a note (read, but worth knowing)."""

    table: str
    message: str
    error: bool = True


@dataclass(frozen=True)
class TableFiles:
    """One table folder: its files, oldest load first (dlt names them `<load_id>.…`), as
    URLs DuckDB reads (a local path, or `s3://…` through the filesystem registered on the
    connection); a Delta or Iceberg table's `location` is its folder's URL (or its current
    metadata file) and its `files` the data files of its current version."""

    name: str
    format: FileFormat
    files: tuple[str, ...]
    location: str = ""
    #: per file (in `files` order) the least and greatest `_dlt_load_id` an open table's
    #: metadata records for it (possibly truncated: a lower bound's prefix, an upper bound
    #: rounded up), where its current version is exactly the rows of `files`; None where not
    #: known so (`lake_tables`): every file may hold any load
    ranges: tuple[tuple[str, str], ...] | None = None
    #: the files that hold every column of the table, each with the one type every file
    #: gives it (Parquet footers say so): a scan of some of them alone has the view's
    #: columns and types; None where not known (JSONL, open tables)
    alike: frozenset[str] | None = None


@dataclass(frozen=True)
class TableColumns:
    """What a table's readable files say: `(column, DuckDB type, nullable)` in first-seen
    order, the files they were read from, and what could not be read."""

    table: TableFiles
    columns: list[tuple[str, str, bool]] = field(default_factory=list)
    readable: tuple[str, ...] = ()
    problems: list[ReadProblem] = field(default_factory=list)

    @property
    def unreadable(self) -> bool:
        return any(p.error for p in self.problems)


def file_format(path: str) -> FileFormat | None:
    """The format a data file holds, from its name; None for files that are not data.

    >>> file_format("1700000000.123.abcd.jsonl.gz"), file_format("init")
    ('jsonl', None)
    """
    for suffix, fmt in _SUFFIXES:
        if path.endswith(suffix):
            return fmt
    return None


def _check_layout(job_client: Any) -> None:
    layout = str(getattr(job_client, "table_prefix_layout", "{table_name}/"))
    if layout not in _FOLDER_LAYOUTS:
        raise UnsupportedDestinationError(
            f"The `filesystem` adapter reads datasets whose tables are folders (dlt's default "
            f"layout, `{{table_name}}/{{load_id}}.{{file_id}}.{{ext}}`); dataset "
            f"`{job_client.dataset_name}` uses the layout `{job_client.config.layout}`. Use "
            "the default layout for pipelines reconcile watches."
        )


def list_tables(job_client: Any) -> tuple[list[TableFiles], list[ReadProblem]]:
    """The tables of the dataset dlt's `FilesystemClient` points at, through its own fsspec
    client and file listing, and what kept a table folder from being listed."""
    _check_layout(job_client)
    fs = job_client.fs_client
    root = job_client.dataset_path
    try:
        entries = fs.ls(root, detail=True)
    except FileNotFoundError:
        return [], []
    except Exception as exc:  # credentials refused, endpoint unreachable, no such bucket
        raise DestinationError(
            f"Bucket `{job_client.config.bucket_url}` (dataset `{job_client.dataset_name}`) "
            f"cannot be listed: {_detail(exc).rstrip('.')}. Check the bucket URL and the "
            "credentials (`[destination.filesystem.credentials]` in `.dlt/secrets.toml`)."
        ) from exc
    tables: list[TableFiles] = []
    problems: list[ReadProblem] = []
    declared = _declared_formats(job_client)
    for entry in sorted(entries, key=lambda e: str(e["name"])):
        if entry.get("type") != "directory":
            continue
        name = str(entry["name"]).rstrip("/").rsplit("/", 1)[-1]
        if name.startswith("_dlt_pipeline_state"):
            continue  # dlt's own state blobs: not a table anyone models
        try:
            files = sorted(job_client.list_table_files(name))
        except Exception as exc:  # vanished between the listing and now, or unreadable
            problems.append(ReadProblem(
                name, f"table `{name}`: its folder `{job_client.get_table_dir(name)}` cannot be "
                f"listed ({_detail(exc)}); check that it exists and is readable."))
            continue
        local = job_client.config.is_local_filesystem
        urls = files if local else [job_client.make_remote_url(f) for f in files]
        folder = job_client.get_table_dir(name)
        found = _with_format(name, urls, problems, declared.get(name),
                             folder if local else job_client.make_remote_url(folder))
        if found is not None:
            tables.append(found)
    return tables, problems


def _declared_formats(job_client: Any) -> dict[str, str]:
    """Each table's `table_format` (`delta`, `iceberg`) as dlt recorded it: the newest schema
    it stored in the dataset (`_dlt_version`), read, never written."""
    try:
        stored = job_client.get_stored_schema(job_client.schema.name)
    except Exception:  # no record, or unreadable: the files alone say what a table is
        return {}
    tables = json.loads(stored.schema).get("tables", {}) if stored is not None else {}
    return {name: str(t["table_format"]) for name, t in tables.items()
            if t.get("table_format")}


#: the folder an open table format keeps its log or metadata in, and a file only it holds
_OPEN_TABLES: tuple[tuple[FileFormat, str, str], ...] = (
    ("delta", "_delta_log", ".json"),
    ("iceberg", "metadata", ".metadata.json"),
)


def _with_format(name: str, files: Sequence[str], problems: list[ReadProblem],
                 declared: str | None, location: str) -> TableFiles | None:
    """The table's format: Delta (a `_delta_log` folder), Iceberg (a `metadata` folder with a
    `*.metadata.json`), else the one format of its data files. An open table's data files
    are those its log names, read in `lake_tables`, not what the folder holds."""
    for fmt, folder, marker in _OPEN_TABLES:
        if any(f"/{name}/{folder}/" in f and f.endswith(marker) for f in files):
            return TableFiles(name, fmt, (), location.rstrip("/"))
        if declared == fmt:
            problems.append(ReadProblem(
                name, f"table `{name}` is a {fmt.capitalize()} table in dlt's stored schema, "
                f"but its folder `{location}` has no `{folder}` with a `*{marker}` file: it "
                f"was not checked. Restore the table's `{folder}`, or reload it."))
            return None
    formats: dict[FileFormat, list[str]] = {}
    for f in files:
        found = file_format(f)
        if found is not None:
            formats.setdefault(found, []).append(f)
    if not formats:
        return None  # an empty folder: no data, as an empty dataset has no table
    if len(formats) > 1:
        counts = ", ".join(f"{len(v)} {k}" for k, v in sorted(formats.items()))
        problems.append(ReadProblem(
            name, f"table `{name}` holds files of more than one format ({counts}): it was not "
            "checked. One table, one `loader_file_format`."))
        return None
    ((fmt, data),) = formats.items()
    return TableFiles(name, fmt, tuple(data))


def read_columns(connection: Any, table: TableFiles, fs: Any) -> TableColumns:
    """What `table`'s files say, read on `connection` (an in-memory DuckDB); Parquet footers
    through `fs` (dlt's fsspec client of the bucket)."""
    if table.format == "parquet":
        return _parquet_columns(connection, table, fs)
    return _jsonl_columns(connection, table)


def _detail(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def duckdb_types(connection: Any, schema: Any) -> list[str]:
    """The DuckDB type of each field of an Arrow schema, as DuckDB reads that file."""
    try:
        return [str(t) for t in connection.from_arrow(schema.empty_table()).types]
    except Exception:  # a type DuckDB has no mapping for: Arrow's own name, upper-cased
        return [str(f.type).upper() for f in schema]


def _parquet_columns(connection: Any, table: TableFiles, fs: Any) -> TableColumns:
    """The union of the files' footers (pyarrow), in first-seen order. A column whose type
    differs between files is reported with the newest file's type, and a note says so."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]  # pyarrow ships no stubs

    seen: dict[str, dict[str, list[str]]] = {}  # column -> type -> files, in file order
    has: dict[str, set[str]] = {}  # file -> its columns
    nullable: dict[str, bool] = {}
    readable: list[str] = []
    problems: list[ReadProblem] = []
    for path in table.files:
        try:
            with fs.open(path, "rb") as file:
                schema = pq.read_schema(file)
        except Exception as exc:
            problems.append(ReadProblem(
                table.name, f"table `{table.name}`: Parquet file `{path}` cannot be read "
                f"({_detail(exc)}). Restore or remove the file; its table was checked "
                "without it."))
            continue
        readable.append(path)
        has[path] = set(schema.names)
        for f, db_type in zip(schema, duckdb_types(connection, schema), strict=True):
            seen.setdefault(f.name, {}).setdefault(db_type, []).append(path)
            nullable[f.name] = nullable.get(f.name, False) or f.nullable
    columns = []
    for name, types in seen.items():
        in_all = sum(len(v) for v in types.values()) == len(readable)
        newest = max(types, key=lambda t: max(readable.index(p) for p in types[t]))
        if len(types) > 1:
            spread = ", ".join(f"{t} in {len(v)} file(s) (e.g. `{v[-1]}`)"
                               for t, v in types.items())
            problems.append(ReadProblem(
                table.name, f"table `{table.name}`: column `{name}` has different types in "
                f"different files: {spread}; reported as {newest}, the newest file's type.",
                error=False))
        columns.append((name, newest, nullable[name] or not in_all))
    one_type = all(len(types) == 1 for types in seen.values())
    alike = frozenset(p for p in readable if one_type and has[p] == set(seen))
    return TableColumns(replace(table, alike=alike), columns, tuple(readable), problems)


def _jsonl_columns(connection: Any, table: TableFiles) -> TableColumns:
    """DuckDB's schema inference over every file at once; when that fails, each file on its
    own, so the error names the file that cannot be read."""
    try:
        relation = jsonl_relation(connection, table.files)
        columns = [(c, str(t), True) for c, t in zip(relation.columns, relation.types,
                                                       strict=True)]
        return TableColumns(table, columns, table.files)
    except Exception as exc:
        whole = exc
    problems = []
    for path in table.files:
        try:
            jsonl_relation(connection, [path]).types  # noqa: B018  binding reads the file
        except Exception as exc:
            problems.append(ReadProblem(
                table.name, f"table `{table.name}`: JSONL file `{path}` cannot be read "
                f"({_detail(exc)}). Restore or remove the file."))
    if not problems:
        problems.append(ReadProblem(
            table.name, f"table `{table.name}`: its JSONL files cannot be read together "
            f"({_detail(whole)})."))
    return TableColumns(table, [], (), problems)


def parquet_relation(connection: Any, files: Sequence[str]) -> Any:
    """A DuckDB relation over Parquet files, columns matched by name across files."""
    return connection.read_parquet(list(files), union_by_name=True)


def jsonl_relation(connection: Any, files: Sequence[str]) -> Any:
    """A DuckDB relation over newline-delimited JSON files (gzip or plain), by name."""
    return connection.read_json(list(files), format="newline_delimited", union_by_name=True)
