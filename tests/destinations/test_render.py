"""The one renderer: what it refuses, how it binds per driver, how it escapes and types.

Pure case tables; no database. That a refusal happens before any driver is reached is
proven against real connections in test_read_only.py.
"""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest
import sqlglot
from sqlglot import exp

from dlt_contract_ops.destinations.duckdb import DuckDBAdapter
from dlt_contract_ops.destinations.sql import (
    col,
    dialect_for,
    literal,
    param,
    render,
    render_bound,
    table_ref,
)
from dlt_contract_ops.errors import UnsafeQueryError

# (dialect, statement): every one writes, locks, or changes session state
REFUSED = [
    ("duckdb", "INSERT INTO t VALUES (1)"),
    ("duckdb", "INSERT INTO t SELECT * FROM u"),
    ("duckdb", "UPDATE t SET a = 1"),
    ("duckdb", "DELETE FROM t"),
    ("postgres", "MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE"),
    ("duckdb", "CREATE TABLE t (a INT)"),
    ("duckdb", "CREATE TABLE t AS SELECT 1 AS a"),
    ("duckdb", "CREATE VIEW v AS SELECT 1 AS a"),
    ("duckdb", "DROP TABLE t"),
    ("duckdb", "ALTER TABLE t ADD COLUMN b INT"),
    ("duckdb", "TRUNCATE TABLE t"),
    ("postgres", "SELECT * INTO t2 FROM t"),
    ("postgres", "SELECT * FROM t FOR UPDATE"),
    ("postgres", "WITH x AS (SELECT 1 AS a) INSERT INTO t SELECT a FROM x"),
    ("postgres", "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d"),
    ("postgres", "SELECT * FROM (SELECT 1) AS s WHERE EXISTS (SELECT 1 FROM t FOR SHARE)"),
    ("postgres", "SET search_path = other"),
    ("postgres", "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE"),
    ("sqlite", "PRAGMA query_only = OFF"),
    ("duckdb", "ATTACH 'other.db' AS other"),
    ("duckdb", "DETACH other"),
    ("postgres", "COPY t TO '/tmp/out.csv'"),
    ("postgres", "GRANT SELECT ON t TO someone"),
    ("postgres", "REVOKE SELECT ON t FROM someone"),
    ("postgres", "BEGIN"),
    ("postgres", "COMMIT"),
    ("postgres", "ROLLBACK"),
    ("postgres", "VACUUM t"),
    ("postgres", "CALL do_something()"),
    ("postgres", "ANALYZE t"),
    ("snowflake", "USE DATABASE other"),
]

ACCEPTED = [
    "SELECT 1",
    "SELECT a FROM t UNION ALL SELECT b FROM u",
    "SELECT a FROM t EXCEPT SELECT b FROM u",
    "WITH x AS (SELECT 1 AS a) SELECT a FROM x",
    "SELECT COUNT(*) FROM (SELECT a FROM t) AS s",
    "(SELECT a FROM t)",
]


@pytest.mark.parametrize(("dialect", "statement"), REFUSED)
def test_non_select_is_refused(dialect: str, statement: str) -> None:
    query = sqlglot.parse_one(statement, read=dialect)
    with pytest.raises(UnsafeQueryError, match="only reads"):
        render(query, dialect)
    with pytest.raises(UnsafeQueryError, match="only reads"):
        render_bound(query, dialect, "format", 0)


@pytest.mark.parametrize("statement", ACCEPTED)
def test_select_is_rendered(statement: str) -> None:
    query = sqlglot.parse_one(statement, read="duckdb")
    assert sqlglot.parse_one(render(query, "duckdb")) == query


def test_offline_adapter_refuses_before_it_could_connect() -> None:
    adapter = DuckDBAdapter.offline("raw")
    with pytest.raises(UnsafeQueryError):
        adapter.run(exp.delete("t"), [], "sample")
    with pytest.raises(UnsafeQueryError):
        adapter.reproduce(sqlglot.parse_one("DROP TABLE t"), [])


ODD_QUERY = (
    exp.select(
        exp.alias_(exp.Literal.string("50% :off"), "a:b%", quoted=True),
        exp.alias_(param(), "v", quoted=True),
    )
    .from_(table_ref("t", "d"))
    .where(exp.EQ(this=col("x:y"), expression=param()))
)

# (dialect, paramstyle, exact driver text): `%` doubled only for `format` with parameters,
# `:` escaped for SQLAlchemy text(), placeholders in order
BOUND = [
    ("duckdb", "qmark",
     """SELECT '50% :off' AS "a:b%", ? AS "v" FROM "d"."t" WHERE "x:y" = ?"""),
    ("postgres", "format",
     """SELECT '50%% :off' AS "a:b%%", %s AS "v" FROM "d"."t" WHERE "x:y" = %s"""),
    ("sqlite", "named",
     """SELECT '50% \\:off' AS "a\\:b%", :p0 AS "v" FROM "d"."t" WHERE "x\\:y" = :p1"""),
    ("mysql", "named",
     """SELECT '50% \\:off' AS `a\\:b%`, :p0 AS `v` FROM `d`.`t` WHERE `x\\:y` = :p1"""),
    ("bigquery", "format",
     """SELECT '50%% :off' AS `a:b%%`, %s AS `v` FROM `d`.`t` WHERE `x:y` = %s"""),
    ("snowflake", "format",
     """SELECT '50%% :off' AS "a:b%%", %s AS "v" FROM "d"."t" WHERE "x:y" = %s"""),
]


@pytest.mark.parametrize(("dialect", "style", "expected"), BOUND)
def test_render_bound_per_paramstyle(dialect: str, style: str, expected: str) -> None:
    assert render_bound(ODD_QUERY, dialect, style, 2) == expected  # type: ignore[arg-type]


def test_format_style_without_parameters_leaves_percent_alone() -> None:
    # drivers only %-format when parameters are passed
    q = exp.select(exp.Literal.string("100%"))
    assert render_bound(q, "postgres", "format", 0) == "SELECT '100%'"


def test_parameter_count_must_match() -> None:
    with pytest.raises(ValueError, match="2 placeholder"):
        render_bound(ODD_QUERY, "postgres", "format", 1)


# (identifier, BigQuery text): backslash escapes, as BigQuery's lexer reads them
BIGQUERY_IDENTIFIERS = [
    ("plain", "`plain`"),
    ("ip-address", "`ip-address`"),
    ('Weird "Name"', '`Weird "Name"`'),
    ("back`tick", "`back\\`tick`"),
    ("back\\slash", "`back\\\\slash`"),
    ("größe", "`größe`"),
]


@pytest.mark.parametrize(("name", "text"), BIGQUERY_IDENTIFIERS)
def test_bigquery_identifier_escaping_round_trips(name: str, text: str) -> None:
    rendered = render(exp.select(col(name)), "bigquery")
    assert rendered == f"SELECT {text}"
    assert sqlglot.parse_one(rendered, read=dialect_for("bigquery")).expressions[0].name == name


UTC_NOON = datetime(2026, 7, 16, 12, 0, tzinfo=timezone.utc)
NAIVE_NOON = datetime(2026, 7, 16, 12, 0)

# (value, dialect, literal text)
LITERALS = [
    (UTC_NOON, "postgres", "CAST('2026-07-16 12:00:00+00:00' AS TIMESTAMPTZ)"),
    (UTC_NOON, "duckdb", "CAST('2026-07-16 12:00:00+00:00' AS TIMESTAMPTZ)"),
    (UTC_NOON, "bigquery", "CAST('2026-07-16 12:00:00+00:00' AS TIMESTAMP)"),
    (UTC_NOON, "snowflake", "CAST('2026-07-16 12:00:00+00:00' AS TIMESTAMPTZ)"),
    (NAIVE_NOON, "mysql", "CAST('2026-07-16 12:00:00' AS DATETIME)"),
    (date(2026, 7, 16), "bigquery", "CAST('2026-07-16' AS DATE)"),
    ("1784203200.0000000", "postgres", "'1784203200.0000000'"),
    ("it's", "bigquery", "'it\\'s'"),
    ("it's", "postgres", "'it''s'"),
    (7, "duckdb", "7"),
    (None, "duckdb", "NULL"),
    (True, "postgres", "TRUE"),
]


@pytest.mark.parametrize(("value", "dialect", "text"), LITERALS)
def test_reproduce_literals_keep_their_type(value: object, dialect: str, text: str) -> None:
    assert literal(value).sql(dialect=dialect_for(dialect)) == text
