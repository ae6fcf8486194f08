"""dlt's `filesystem` destination: a bucket of Parquet or JSONL files, or of Delta and Iceberg
tables, local or remote (`s3://`), read where they lie.

The adapter is resolved from the pipeline like every other one: bucket URL, layout and
credentials come from dlt's own configuration through its `FilesystemClient`, whose fsspec
client and file listing it uses. What a table holds is what its files say (`lake_files`: the
Parquet footers of every file, DuckDB's inference over the JSONL files; `lake_tables`: the
Delta log, the Iceberg metadata), not dlt's stored schema, which only says what dlt meant to
write.

Queries run on an in-memory DuckDB connection of the adapter's own, where each table is a
view over its files (`read_parquet` / `read_json`, columns matched by name across files; an
open table's current version), and go through the same renderer as on every other
destination: SELECT only. A remote bucket is read through dlt's fsspec client registered on
the connection (DuckDB's `httpfs` cannot be downloaded offline). The reproduce text reads the
files themselves, so it runs as pasted in a DuckDB shell. Nothing is ever written: not a
file, not a log entry, not a metadata pointer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from sqlglot import exp

from dlt_contract_ops.core.columns import LOAD_ID, LiveTable
from dlt_contract_ops.destinations.batch import Query
from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.duckdb import quiet_progress_bar
from dlt_contract_ops.destinations.execution import PreparedQuery, SqlClientAdapter
from dlt_contract_ops.destinations.lake_files import (
    ReadProblem,
    TableColumns,
    TableFiles,
    jsonl_relation,
    list_tables,
    parquet_relation,
    read_columns,
)
from dlt_contract_ops.destinations.lake_loads import by_load
from dlt_contract_ops.destinations.lake_reads import SweepReads, release, sweep_reads
from dlt_contract_ops.destinations.lake_tables import open_table_scan, read_open_table
from dlt_contract_ops.destinations.naming import capabilities, data_location
from dlt_contract_ops.destinations.protocol import QueryKind
from dlt_contract_ops.destinations.session import DeadlinePassed
from dlt_contract_ops.destinations.shapes import ShapedQuery
from dlt_contract_ops.destinations.sql import ParamStyle, ident
from dlt_contract_ops.destinations.timeouts import DEFAULT_TIMEOUTS, Timeouts
from dlt_contract_ops.errors import DestinationError

__all__ = ["FilesystemAdapter", "LakeSqlClient"]


def read_only_client(config: Any) -> Any:
    """dlt's fsspec client of a remote bucket, opened with dlt's `read_only` switch, which
    turns on fsspec's listings cache, as a private instance of this adapter. DuckDB asks a
    file's size and time many times while it reads it (seen: 34 HEAD requests a JSONL file
    on S3); with the cache, those are answered from the table folder's one listing, which
    the sweep makes first. A dlt load writes its own files and never changes them in place,
    so a listing holds for the sweep. The user's own `kwargs` still win."""
    from copy import copy

    from dlt.common.storages.fsspec_filesystem import fsspec_from_config

    read_only = copy(config)
    read_only.read_only = True
    read_only.kwargs = {"skip_instance_cache": True, **(config.kwargs or {})}
    return fsspec_from_config(read_only)[0]


class LakeSqlClient:
    """The part of a dlt SQL client `SqlClientAdapter` drives, over an in-memory DuckDB
    connection: the files are read, the connection holds nothing but views over them."""

    def __init__(self, dataset_name: str, filesystem: Any = None) -> None:
        self.dataset_name = dataset_name
        self.capabilities = capabilities("duckdb")  # the engine the queries run on
        self.native_connection: Any = None
        #: a remote bucket's fsspec client (dlt's), which DuckDB reads `s3://…` through
        self.filesystem = filesystem

    def open_connection(self) -> Any:
        import duckdb

        # an air-gapped machine cannot download extensions: never try (Parquet and JSON are
        # built in)
        config: dict[str, Any] = {
            "autoinstall_known_extensions": False, "autoload_known_extensions": False}
        if self.filesystem is not None:
            # DuckDB reading several files through a Python (fsspec) filesystem from several
            # threads at once deadlocks on the callbacks: one thread reads them in turn
            config["threads"] = 1
        self.native_connection = duckdb.connect(":memory:", config=config)
        quiet_progress_bar(self.native_connection)
        if self.filesystem is not None:
            # each sweep lists the bucket afresh (`read_only_client`), never an earlier one's
            self.filesystem.invalidate_cache()
            self.native_connection.register_filesystem(self.filesystem)
        return self.native_connection

    def close_connection(self) -> None:
        if self.native_connection is not None:
            self.native_connection.close()
            self.native_connection = None
        if isinstance(self.filesystem, SweepReads):
            release(self.filesystem)

    def execute_sql(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = self.native_connection.execute(sql, list(params)).fetchall()
        return rows


class FilesystemAdapter(SqlClientAdapter):
    """dlt's filesystem destination: Parquet or JSONL files, Delta or Iceberg tables, in a
    local (`file://`) or remote (`s3://`, any fsspec protocol dlt reaches) bucket.

    `read_problems` (after `list_columns`): what kept a table from being read in full, or is
    worth a note (a column whose type differs between files); the reconciler reports the
    errors among them for the tables a source models, and runs the other tables.
    """

    name: ClassVar[str] = "filesystem"
    capabilities: ClassVar[Capabilities] = Capabilities(
        dialect="duckdb",
        read_only="an in-memory DuckDB holding only views over the files; nothing is written",
        approximate_distinct=True, regex_search=True, prepared_queries=True,
        # its tables are views `list_columns` makes on its own in-memory connection: every
        # instance lists the dataset (a sweep's second source on the dataset too)
        lists_per_adapter=True, over_files=True,
    )
    paramstyle: ClassVar[ParamStyle] = "qmark"
    #: DuckDB type names carry their size (`DECIMAL(38,9)`): read from the name
    metadata_size_columns: ClassVar[tuple[str, ...]] = ()
    read_problems: tuple[ReadProblem, ...]
    files_read: Counter[str]

    def __init__(self, sql_client: Any, *, job_client: Any = None, **kwargs: Any) -> None:
        kwargs.setdefault("casefold", str)  # DuckDB keeps names as dlt wrote them
        super().__init__(sql_client, **kwargs)
        self._job_client = job_client
        self._tables: dict[str, TableFiles] = {}
        self._unreadable: dict[str, str] = {}
        self.read_problems: tuple[ReadProblem, ...] = ()
        #: the data files the queries scanned (path -> scans), besides the footers every
        #: sweep reads: a repeat sweep's count is the files of the new loads
        #: (`lake_loads`); what `SweepStats.files_read` reports
        self.files_read: Counter[str] = Counter()

    @classmethod
    def from_job_client(
        cls, job_client: Any, *, timeouts: Timeouts = DEFAULT_TIMEOUTS
    ) -> FilesystemAdapter:
        config = job_client.config
        remote = None
        if not config.is_local_filesystem:  # listed, footers read and scanned through it
            # listed through dlt's client; files opened through `sweep_reads` (each small
            # file fetched once a sweep, however often the queries open it)
            job_client.fs_client = read_only_client(config)
            remote = sweep_reads(job_client.fs_client)
        location = data_location(config) or str(job_client.dataset_path)
        return cls(LakeSqlClient(job_client.dataset_name, remote), job_client=job_client,
                   location=location, timeouts=timeouts)

    @classmethod
    def destination_type(cls) -> str:
        return "duckdb"  # an offline adapter names and types things as DuckDB does

    # -- metadata -------------------------------------------------------------------------
    def list_columns(self) -> dict[str, LiveTable]:
        """Every table folder of the dataset with the columns its files have: one listing of
        the dataset, then each table's footers (or JSONL inference) and its view."""
        if self._job_client is None:
            raise DestinationError(
                f"The `filesystem` adapter for dataset `{self.dataset}` was built offline: it "
                "renders queries but cannot read files. Open it with `open_adapter`."
            )
        self._open()
        tables, problems = list_tables(self._job_client)
        try:
            read = self._call(lambda: [self._read_table(t) for t in tables],
                              timeout=self.timeouts.query)
        except DeadlinePassed:
            self.cancel()
            raise self.timeout_error(exp.select(exp.Star()), "metadata",
                                     "statement timeout") from None
        finally:
            self.queries["metadata"] += 1
        rows: list[tuple[str, str, str, str]] = []
        self._tables = {}
        # a folder that could not be listed: its table cannot be queried
        self._unreadable = {p.table: p.message for p in problems if p.error}
        for found, viewed in read:
            problems.extend(found.problems)
            whole = found.readable == found.table.files  # `ranges` go with every file
            self._tables[found.table.name] = replace(
                found.table, files=found.readable,
                ranges=found.table.ranges if whole else None)
            if not viewed and found.unreadable:  # no file to query: refused, with why
                self._unreadable[found.table.name] = "; ".join(
                    p.message for p in found.problems if p.error)
            rows.extend((found.table.name, c, t, "YES" if n else "NO")
                        for c, t, n in found.columns)
        self.read_problems = tuple(problems)
        return self.read_metadata(rows)

    def _read_table(self, table: TableFiles) -> tuple[TableColumns, bool]:
        """On the session thread: the table's columns, and whether it got its view (over
        the files that read: a table with an unreadable file is checked without it, and
        the reconciler reports that file once)."""
        connection = self._client.native_connection
        if table.format in ("delta", "iceberg"):
            return read_open_table(connection, table, self._job_client)
        fs = self._client.filesystem or self._job_client.fs_client  # a bucket's: `sweep_reads`
        found = read_columns(connection, table, fs)
        if not found.readable or not found.columns:
            return found, False
        try:
            scan = parquet_relation if table.format == "parquet" else jsonl_relation
            scan(connection, found.readable).create_view(table.name, replace=True)
        except Exception as exc:
            detail = " ".join(str(exc).split())
            found.problems.append(ReadProblem(
                table.name, f"table `{table.name}`: its {table.format} files cannot be read "
                f"as one table ({detail})."))
            return found, False
        return found, True

    def table_folder(self, name: str) -> str:
        """Where `name`'s files were: its folder in the bucket, as a URL for a remote one,
        which the missing detector names when a loaded table's folder is gone (a table whose
        files could not be read is not gone: `read_problems` has its error)."""
        if self._job_client is None:
            return f"{self.location.rstrip('/')}/{name}"
        folder = str(self._job_client.get_table_dir(name)).rstrip("/")
        if self._job_client.config.is_local_filesystem:
            return folder
        return str(self._job_client.make_remote_url(folder))

    # -- queries --------------------------------------------------------------------------
    def table(self, name: str) -> exp.Table:
        """The table's view on the adapter's connection (`reproduce` reads the files)."""
        return exp.Table(this=ident(self._live_tables.get(name) or self.to_live(name)))

    def prepared(
        self, query: Query, params: Sequence[Any], kind: QueryKind, owned: bool,
    ) -> PreparedQuery:
        """As every adapter prepares a query; one that reads a table none of whose files
        could be read is refused with what went wrong, naming the table and the file."""
        names = ([query.table] if isinstance(query, ShapedQuery)
                 else [t.name for t in query.find_all(exp.Table)])
        for name in names:
            problem = self._unreadable.get(name)
            if problem is not None:
                raise DestinationError(problem)
        shaped = isinstance(query, ShapedQuery)
        built = query.expression(self) if isinstance(query, ShapedQuery) else query
        narrowed = by_load(built, params, self._tables, file_scan, owned=owned or shaped)
        if narrowed is not None:  # only the files of the listed loads (`lake_loads`)
            query, read = narrowed
            owned = owned or shaped  # a tree built here: rendered in place
            for files in read.values():
                self.files_read.update(files)
        self._count_scans(query)
        return super().prepared(query, params, kind, owned)

    def _count_scans(self, query: Query) -> None:
        """Add the files a query reads through a table's view to `files_read`: every file
        of the table, unless the SELECT reads no row (`LIMIT 0`: the view's shape) or no
        column of Parquet files (a bare `COUNT(*)`: footers; JSONL files are read whole)."""
        tree = (exp.select(exp.column(LOAD_ID)).from_(self.table(query.table))
                if isinstance(query, ShapedQuery) else query)
        for node in tree.find_all(exp.Table):
            files = self._tables.get(node.name)
            select = node.parent.parent if isinstance(node.parent, exp.From) else None
            if files is None or node.args.get("db") or not isinstance(select, exp.Select):
                continue
            limit = select.args.get("limit")
            if limit is not None and limit.expression == exp.Literal.number(0):
                continue
            where = select.args.get("where")
            if (where is not None or files.format == "jsonl"
                    or any(e.find(exp.Column) for e in select.expressions)):
                self.files_read.update(files.files)

    def reproduce(self, query: exp.Expression, params: Sequence[Any]) -> str:
        """The query as text a DuckDB shell runs as pasted: each view replaced by the scan
        of its files."""

        def scan(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.Table) or node.args.get("db"):
                return node
            files = self._tables.get(node.name)
            if files is None:
                return node
            alias = node.args.get("alias") or exp.TableAlias(this=ident(node.name))
            return exp.Table(this=file_scan(files), alias=alias)

        return super().reproduce(query.transform(scan), params)

    def _interrupt_query(self) -> None:
        connection = self._client.native_connection if self._client is not None else None
        if connection is not None:
            connection.interrupt()  # DuckDB's own: safe from another thread


def file_scan(files: TableFiles) -> exp.Expression:
    """`read_parquet([...], union_by_name = TRUE)` (or `read_json`) over a table's files,
    as the view the adapter queries reads them; `delta_scan` / `iceberg_scan` for an open
    table (run as pasted where DuckDB has that extension).

    >>> file_scan(TableFiles("t", "parquet", ("/b/t/1.parquet",))).sql("duckdb")
    "READ_PARQUET(['/b/t/1.parquet'], union_by_name = TRUE)"
    """
    if files.format in ("delta", "iceberg"):
        return open_table_scan(files)
    paths = exp.Array(expressions=[exp.Literal.string(f) for f in files.files])
    by_name = exp.EQ(this=exp.column("union_by_name"), expression=exp.true())
    if files.format == "parquet":
        return exp.ReadParquet(expressions=[paths, by_name])
    json_format = exp.EQ(this=exp.column("format"),
                         expression=exp.Literal.string("newline_delimited"))
    return exp.Anonymous(this="read_json", expressions=[paths, json_format, by_name])

