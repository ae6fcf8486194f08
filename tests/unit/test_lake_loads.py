"""Which files a query reads on the filesystem adapter (`destinations.lake_loads`): pure
cases, trees in and out."""

from __future__ import annotations

import pytest
from sqlglot import exp, parse_one

from dlt_contract_ops.destinations.filesystem import file_scan
from dlt_contract_ops.destinations.lake_files import TableFiles
from dlt_contract_ops.destinations.lake_loads import by_load

TABLES = {
    "t": TableFiles("t", "parquet", ("/b/t/1.5.a.parquet", "/b/t/2.5.b.parquet",
                                     "/b/t/2.5.c.parquet")),
    # every file's footer holds every column, with one type: scanned as they are
    "a": TableFiles("a", "parquet", ("/b/a/1.5.a.parquet", "/b/a/2.5.b.parquet"),
                    alike=frozenset({"/b/a/1.5.a.parquet", "/b/a/2.5.b.parquet"})),
    "d": TableFiles("d", "delta", ("/b/d/part-0.parquet",), "/b/d"),
    # an open table whose metadata gives each file's load id range (`lake_tables`)
    "r": TableFiles("r", "delta", ("/b/r/p-0.parquet", "/b/r/p-1.parquet"), "/b/r",
                    (("1.5", "2.5"), ("3.5", "3.5"))),
    "i": TableFiles("i", "iceberg", ("file:///w/i/0.parquet",), "/w/i/m.json",
                    (("1.5", "1.6"),)),
}


@pytest.mark.parametrize(("sql", "params", "sql_out", "read"), [
    # the loads' files only, under the view's columns; the bare count beside it keeps the
    # view (footers)
    ('SELECT _dlt_load_id, COUNT(*) FROM t WHERE _dlt_load_id IN (?) GROUP BY 1 '
     'UNION ALL SELECT NULL, COUNT(*) FROM t', ["2.5"],
     "SELECT _dlt_load_id, COUNT(*) FROM ((SELECT * FROM t LIMIT 0) UNION ALL BY NAME "
     "SELECT * FROM READ_PARQUET(['/b/t/2.5.b.parquet', '/b/t/2.5.c.parquet'], "
     "union_by_name = TRUE)) AS \"t\" WHERE _dlt_load_id IN (?) GROUP BY 1 "
     "UNION ALL SELECT NULL, COUNT(*) FROM t",
     {"t": ("/b/t/2.5.b.parquet", "/b/t/2.5.c.parquet")}),
    ("SELECT COUNT(x) FROM a WHERE _dlt_load_id IN (?)", ["2.5"],
     "SELECT COUNT(x) FROM READ_PARQUET(['/b/a/2.5.b.parquet'], union_by_name = TRUE) AS \"a\" "
     "WHERE _dlt_load_id IN (?)", {"a": ("/b/a/2.5.b.parquet",)}),
    # a load that wrote no file to the table: nothing is scanned
    ("SELECT COUNT(x) FROM t WHERE _dlt_load_id IN (?) AND x IS NOT NULL", ["3.5"],
     "SELECT COUNT(x) FROM (SELECT * FROM t LIMIT 0) AS \"t\" WHERE _dlt_load_id IN (?) AND "
     "NOT x IS NULL", {"t": ()}),
    # a range bound, a parameter that is not a load id, a Delta table without ranges:
    # unchanged
    ("SELECT COUNT(*) FROM t WHERE _dlt_load_id >= ?", ["1.5"], None, None),
    ("SELECT COUNT(*) FROM t WHERE _dlt_load_id IN (?) AND x = ?", ["1.5", 3], None, None),
    ("SELECT COUNT(*) FROM d WHERE _dlt_load_id IN (?)", ["1.5"], None, None),
    # an open table with load id ranges: the files whose range can hold an id, by name under
    # the view's columns; none of them: nothing scanned
    ("SELECT COUNT(x) FROM r WHERE _dlt_load_id IN (?)", ["3.5"],
     "SELECT COUNT(x) FROM ((SELECT * FROM r LIMIT 0) UNION ALL BY NAME SELECT * FROM "
     "READ_PARQUET(['/b/r/p-1.parquet'], union_by_name = TRUE)) AS \"r\" WHERE "
     "_dlt_load_id IN (?)", {"r": ("/b/r/p-1.parquet",)}),
    ("SELECT COUNT(*) FROM r WHERE _dlt_load_id IN (?, ?)", ["2.0", "3.5"],
     "SELECT COUNT(*) FROM ((SELECT * FROM r LIMIT 0) UNION ALL BY NAME SELECT * FROM "
     "READ_PARQUET(['/b/r/p-0.parquet', '/b/r/p-1.parquet'], union_by_name = TRUE)) AS \"r\" "
     "WHERE _dlt_load_id IN (?, ?)", {"r": ("/b/r/p-0.parquet", "/b/r/p-1.parquet")}),
    ("SELECT COUNT(*) FROM i WHERE _dlt_load_id IN (?)", ["1.7"],
     "SELECT COUNT(*) FROM (SELECT * FROM i LIMIT 0) AS \"i\" WHERE _dlt_load_id IN (?)",
     {"i": ()}),
    # an IN on the load id that does not bound the read (OR): unchanged
    ("SELECT COUNT(*) FROM t WHERE _dlt_load_id IN (?) OR x IS NULL", ["1.5"], None, None),
])
def test_by_load(sql: str, params: list[object], sql_out: str | None,
                 read: dict[str, tuple[str, ...]] | None) -> None:
    tree = parse_one(sql, read="duckdb")
    before = tree.sql("duckdb")
    out = by_load(tree, params, TABLES, file_scan)
    assert tree.sql("duckdb") == before  # not owned: copied, never edited
    if sql_out is None:
        assert out is None
        return
    assert out is not None
    narrowed, files = out
    assert narrowed.sql("duckdb") == sql_out
    assert files == read
    assert isinstance(narrowed, exp.Expression)
