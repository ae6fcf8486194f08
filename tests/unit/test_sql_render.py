"""The one renderer every query passes through: SELECT only, every identifier quoted."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from dlt_contract_ops.destinations.sql import col, inline_params, param, render, table_ref
from dlt_contract_ops.errors import UnsafeQueryError


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("INSERT INTO t SELECT 1", "duckdb"),
        ("UPDATE t SET a = 1", "duckdb"),
        ("DELETE FROM t", "duckdb"),
        ("DROP TABLE t", "duckdb"),
        ("CREATE TABLE x AS SELECT 1", "duckdb"),
        ("ALTER TABLE t ADD COLUMN c INT", "duckdb"),
        ("TRUNCATE t", "duckdb"),
        ("MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE", "postgres"),
        ("COPY t TO 'f.csv'", "duckdb"),
        ("ATTACH 'x.db'", "duckdb"),
        ("SET memory_limit = '1GB'", "duckdb"),
        ("PRAGMA show_tables", "duckdb"),
        ("GRANT SELECT ON t TO u", "postgres"),
        # a SELECT that writes or locks is not read-only either
        ("SELECT * INTO x FROM t", "postgres"),
        ("SELECT * FROM t FOR UPDATE", "postgres"),
        ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "postgres"),
    ],
)
def test_render_refuses_anything_but_a_select(sql: str, dialect: str) -> None:
    query = sqlglot.parse_one(sql, read=dialect)
    with pytest.raises(UnsafeQueryError, match=r"Refusing to run .*only reads \(SELECT\)"):
        render(query, dialect)


def test_render_refuses_a_command_it_cannot_parse() -> None:
    with pytest.raises(UnsafeQueryError):
        render(exp.Command(this="VACUUM"), "duckdb")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "WITH a AS (SELECT 1 AS x) SELECT x FROM a",
        "SELECT 1 UNION ALL SELECT 2",
        "SELECT a FROM t WHERE NOT a IS NULL ORDER BY a DESC LIMIT 5",
    ],
)
def test_render_passes_reads(sql: str) -> None:
    assert render(sqlglot.parse_one(sql, read="duckdb"), "duckdb") == sql


@pytest.mark.parametrize(
    ("name", "dialect", "quoted"),
    [
        ("ip-address", "duckdb", '"ip-address"'),
        ('Weird "Name"', "duckdb", '"Weird ""Name"""'),
        ('Weird "Name"', "postgres", '"Weird ""Name"""'),
        ("größe", "duckdb", '"größe"'),
        ("userId", "postgres", '"userId"'),
        ("select", "duckdb", '"select"'),
        ("a b", "mysql", "`a b`"),
        ("back`tick", "mysql", "`back``tick`"),
    ],
)
def test_every_identifier_is_quoted(name: str, dialect: str, quoted: str) -> None:
    query = exp.select(col(name)).from_(table_ref(name, "Data Set"))
    sql = render(query, dialect)
    assert sql.count(quoted) == 2  # the column and the table
    # and the destination reads back exactly the name it was given
    parsed = sqlglot.parse_one(sql, read=dialect)
    assert isinstance(parsed, exp.Select)
    assert parsed.selects[0].name == name
    table = parsed.find(exp.Table)
    assert table is not None
    assert (table.name, table.db) == (name, "Data Set")


def test_inline_params_for_reproduce_text() -> None:
    since = exp.GTE(this=col("ts"), expression=param())
    key = exp.EQ(this=col("k"), expression=param())
    query = exp.select(col("a")).from_(table_ref("t", "d")).where(exp.and_(since, key))
    sql = render(inline_params(query, ["2026-01-01 00:00:00", "it's"]), "duckdb")
    assert sql == (
        'SELECT "a" FROM "d"."t" WHERE "ts" >= \'2026-01-01 00:00:00\' AND "k" = \'it\'\'s\''
    )
    # the query object itself keeps its placeholders for the driver
    assert "?" in render(query, "duckdb")
