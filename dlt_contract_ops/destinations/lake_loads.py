"""Which files of a table a query reads, on dlt's `filesystem` destination.

dlt writes each load of a Parquet or JSONL table to files of its own,
`<table>/<load_id>.<file_id>.<ext>`, and never adds rows to them later. So a query whose every
read of a table is filtered `_dlt_load_id IN (...)` (a repeat profile sweep's new loads, their
category shares, removal's straddling loads) needs only the files named after those loads:
the view over every file of the table is swapped for a scan of those files alone, under the
view's columns and types, `(SELECT * FROM view LIMIT 0) UNION ALL BY NAME SELECT * FROM
read_parquet([...])` (a JSONL file leaves out a column that is NULL in every row of its
load, a file written before a column was added lacks it: NULL there, as in the view); a load
that wrote no file to the table reads nothing. Binding the view reads what DuckDB binds it
from (Parquet footers, a sample of each JSONL file), not the rows; Parquet files whose
footers all hold every column of the table with one type (`TableFiles.alike`) are scanned
as they are, without it. A scan the filter does not
bound (the table's row count beside the profile, `COUNT(*)` alone) keeps the view: DuckDB
answers a bare count from the Parquet footers (JSONL files are read whole for it). A replaced
or vanished file shows in that count, and the profile sweep then profiles the table afresh
(`profiles.sweep`).

Delta and Iceberg tables name their files otherwise, but their own metadata holds each data
file's least and greatest `_dlt_load_id` (Delta's add actions, Iceberg's manifest bounds;
`TableFiles.ranges`): a bounded read of such a table scans only the files of its current
version whose range can hold a listed id, as above. Where the ranges are not exact
(deletion vectors, delete files, partition columns, missing statistics: `lake_tables`) the
table is read whole through its current version, with the filter pushed down to the row
groups. A merge, replace or delete changes the current version's row count, which the
profile sweep compares as for Parquet files.

Pure: trees in, trees out; `FilesystemAdapter.prepared` applies it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlglot import exp

from dlt_contract_ops.core.columns import LOAD_ID
from dlt_contract_ops.destinations.lake_files import TableFiles
from dlt_contract_ops.destinations.sql import ident

__all__ = ["by_load", "load_files", "range_files"]

#: the formats whose file names start with the load id
_PER_LOAD = ("parquet", "jsonl")


def load_files(files: Sequence[str], load_ids: Sequence[str]) -> tuple[str, ...]:
    """The files of `load_ids` among `files` (dlt names them `<load_id>.<file_id>.<ext>`).

    >>> load_files(["/b/t/17.1.a.parquet", "/b/t/17.12.b.parquet"], ["17.1"])
    ('/b/t/17.1.a.parquet',)
    """
    prefixes = tuple(f"{i}." for i in load_ids)
    return tuple(f for f in files if f.rsplit("/", 1)[-1].startswith(prefixes))


def range_files(files: TableFiles, load_ids: Sequence[str]) -> tuple[str, ...]:
    """The files of an open table whose `_dlt_load_id` range can hold one of `load_ids`.

    >>> t = TableFiles("t", "delta", ("/t/a", "/t/b"), "/t", (("17.1", "17.3"), ("18", "18")))
    >>> range_files(t, ["17.2"]), range_files(t, ["18", "19"]), range_files(t, ["16"])
    (('/t/a',), ('/t/b',), ())
    """
    ranges = files.ranges or ()
    return tuple(f for f, (low, high) in zip(files.files, ranges, strict=True)
                 if any(low <= i <= high for i in load_ids))


def _on_load_ids(node: exp.Placeholder) -> bool:
    parent = node.parent
    return (isinstance(parent, exp.In) and isinstance(parent.this, exp.Column)
            and parent.this.name == LOAD_ID)


def _bounded(select: exp.Expression) -> bool:
    """Whether `select`'s WHERE keeps only rows of listed loads (a conjunct of it)."""
    where = select.args.get("where")
    if where is None:
        return False
    conjuncts = where.this.flatten() if isinstance(where.this, exp.And) else [where.this]
    return any(isinstance(c, exp.In) and isinstance(c.this, exp.Column)
               and c.this.name == LOAD_ID for c in conjuncts)


def by_load(
    tree: exp.Expression, params: Sequence[Any], tables: Mapping[str, TableFiles],
    scan: Callable[[TableFiles], exp.Expression], *, owned: bool = False,
) -> tuple[exp.Expression, dict[str, tuple[str, ...]]] | None:
    """`tree` with each bounded read of a Parquet or JSONL table swapped for `scan` of the
    files of the listed loads (of an open table with `ranges`: the files that can hold
    them), and those files per table; None when the query's parameters
    are not all load ids in `_dlt_load_id IN (...)` lists, or no read is bounded. `owned`:
    the caller handed `tree` over, so it is edited in place instead of copied."""
    placeholders = list(tree.find_all(exp.Placeholder))
    if not placeholders or len(placeholders) != len(params):
        return None
    if not all(_on_load_ids(p) for p in placeholders):
        return None
    ids = sorted({str(p) for p in params})
    out = tree if owned else tree.copy()
    read: dict[str, tuple[str, ...]] = {}
    for node in list(out.find_all(exp.Table)):
        files = tables.get(node.name)
        select = node.parent.parent if isinstance(node.parent, exp.From) else None
        per_load = files is not None and files.format in _PER_LOAD
        if (files is None or node.args.get("db") or (not per_load and files.ranges is None)
                or not isinstance(select, exp.Select) or not _bounded(select)):
            continue
        mine = load_files(files.files, ids) if per_load else range_files(files, ids)
        read[node.name] = tuple(sorted({*read.get(node.name, ()), *mine}))
        alias = exp.TableAlias(this=ident(node.name))
        fmt = files.format if per_load else "parquet"
        some: exp.Expression = exp.Table(this=scan(TableFiles(node.name, fmt, mine)))
        if mine and files.alike is not None and files.alike.issuperset(mine):
            some.set("alias", alias)  # the view's columns and types as the files have them
            node.replace(some)
        elif mine:  # these files, under the view's columns and types (see the docstring)
            shape = exp.select(exp.Star()).from_(node.copy()).limit(0)
            union = exp.union(shape, exp.select(exp.Star()).from_(some), distinct=False)
            union.set("by_name", True)
            node.replace(exp.Subquery(this=union, alias=alias))
        else:  # no file of these loads: nothing to read (LIMIT 0 scans no file)
            empty = exp.select(exp.Star()).from_(node.copy()).limit(0)
            node.replace(exp.Subquery(this=empty, alias=alias))
    return (out, read) if read else None
