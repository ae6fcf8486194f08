"""The adapters' pure parts as case tables: names both ways, parameters per dialect,
metadata rows, type names, read-only connection options. No database."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest

from dlt_contract_ops.destinations.base import SqlClientAdapter
from dlt_contract_ops.destinations.bigquery import BigQueryAdapter
from dlt_contract_ops.destinations.duckdb import DuckDBAdapter
from dlt_contract_ops.destinations.postgres import CONNECT_TIMEOUT, PostgresAdapter, make_read_only
from dlt_contract_ops.destinations.snowflake import SnowflakeAdapter
from dlt_contract_ops.destinations.sqlalchemy import (
    MySQLAdapter,
    SqlaTypeNames,
    SQLiteAdapter,
)
from dlt_contract_ops.destinations.timeouts import Timeouts

# (adapter, name the catalog reports, name dlt's schema uses)
LIVE_NAMES = [
    (SnowflakeAdapter, "PAYLOAD_SIZE", "payload_size"),
    (SnowflakeAdapter, "EVENTS", "events"),
    (SnowflakeAdapter, "userId", "userId"),  # made out of band, quoted
    (SnowflakeAdapter, "ip-address", "ip-address"),
    (SnowflakeAdapter, "_DLT_LOAD_ID", "_dlt_load_id"),
    (PostgresAdapter, "payload_size", "payload_size"),
    (PostgresAdapter, "userId", "userId"),
    (PostgresAdapter, 'Weird "Name"', 'Weird "Name"'),
    (PostgresAdapter, "größe", "größe"),
    (BigQueryAdapter, "UserId", "UserId"),
    (DuckDBAdapter, "ip-address", "ip-address"),
]


@pytest.mark.parametrize(("cls", "live", "dlt_name"), LIVE_NAMES)
def test_names_map_both_ways(cls: type[SqlClientAdapter], live: str, dlt_name: str) -> None:
    adapter = cls.offline("raw")
    assert adapter.live_name(live) == dlt_name
    assert adapter.to_live(dlt_name) == live


def test_dataset_and_tables_are_spelled_the_catalogs_way() -> None:
    snow = SnowflakeAdapter.offline("raw_events")
    assert snow.live_dataset == "RAW_EVENTS"
    assert snow.table("events").sql("snowflake") == '"RAW_EVENTS"."EVENTS"'
    bq = BigQueryAdapter.offline("raw_events", catalog="my-proj")
    assert bq.table("events").sql("bigquery") == "`my-proj`.`raw_events`.`events`"


def test_names_the_catalog_reported_win_over_folding() -> None:
    snow = SnowflakeAdapter.offline("raw")
    # a lower-case table made out of band, quoted: folding would guess EVENTS
    snow.read_metadata([("events", "ID", "NUMBER", "NO")])
    assert snow.table("events").name == "events"


BERLIN = timezone(timedelta(hours=2))
NOON_BERLIN = datetime(2026, 7, 16, 14, 0, 0, 250000, tzinfo=BERLIN)

# (adapter, parameter, what the driver gets)
PARAMS: list[tuple[type[SqlClientAdapter], Any, Any]] = [
    (SQLiteAdapter, NOON_BERLIN, "2026-07-16 12:00:00.250000"),
    (SQLiteAdapter, datetime(2026, 7, 16, 12), "2026-07-16 12:00:00.000000"),
    (SQLiteAdapter, date(2026, 7, 16), "2026-07-16"),
    (SQLiteAdapter, "1784203200.0000000", "1784203200.0000000"),
    (MySQLAdapter, NOON_BERLIN, datetime(2026, 7, 16, 12, 0, 0, 250000)),
    (PostgresAdapter, NOON_BERLIN, NOON_BERLIN),
    (PostgresAdapter, datetime(2026, 7, 16, 12), datetime(2026, 7, 16, 12, tzinfo=timezone.utc)),
    (BigQueryAdapter, 7, 7),
]


@pytest.mark.parametrize(("cls", "value", "bound"), PARAMS)
def test_parameters_are_adapted_per_dialect(
    cls: type[SqlClientAdapter], value: Any, bound: Any
) -> None:
    got = cls.offline("raw").adapt_param(value)
    assert got == bound
    assert type(got) is type(bound)


# (rows of the BigQuery metadata query, partition column of `t`)
BQ_PARTITIONS = [
    ([("t", "id", "INT64", "NO", "NO"), ("t", "day", "DATE", "YES", "YES")], "day"),
    ([("t", "ts", "TIMESTAMP", "YES", "YES")], "ts"),
    ([("t", "dt", "DATETIME", "YES", "YES")], "dt"),
    ([("t", "bucket", "INT64", "NO", "YES")], None),  # integer range: no time axis
    ([("t", "id", "INT64", "NO", "NO")], None),
]


@pytest.mark.parametrize(("rows", "partition"), BQ_PARTITIONS)
def test_bigquery_partition_column_comes_from_the_metadata_query(
    rows: list[tuple[str, ...]], partition: str | None
) -> None:
    adapter = BigQueryAdapter.offline("raw", catalog="p")
    live = adapter.read_metadata(rows)
    assert adapter.partition_column("t") == partition
    assert set(live["t"].columns) == {r[1] for r in rows}


def test_metadata_rows_become_live_tables() -> None:
    adapter = SnowflakeAdapter.offline("raw")
    live = adapter.read_metadata([
        ("EVENTS", "ID", "number", "NO"),
        ("EVENTS", "payload", "text", "YES"),
        ("ACCOUNTS", "LOGIN", "text", "YES"),
    ])
    assert sorted(live) == ["accounts", "events"]
    events = live["events"].columns
    assert (events["id"].data_type, events["id"].nullable) == ("NUMBER", False)
    assert (events["payload"].data_type, events["payload"].nullable) == ("TEXT", True)


# (adapter, type name the catalog reports, dlt data type it reads back as)
TYPE_NAMES = [
    (SQLiteAdapter, "BIGINT", "bigint"),
    (SQLiteAdapter, "NUMERIC(38, 9)", "decimal"),
    (SQLiteAdapter, "DATETIME", "timestamp"),
    (SQLiteAdapter, "BOOLEAN", "bool"),
    (SQLiteAdapter, "VARCHAR(128)", "text"),
    (SQLiteAdapter, "DOUBLE", "double"),
    (MySQLAdapter, "TINYINT(1)", "bool"),  # how MySQL stores a boolean
    (MySQLAdapter, "TINYINT(4)", "bigint"),
    (MySQLAdapter, "BIGINT(20)", "bigint"),
    (MySQLAdapter, "BIGINT(20) UNSIGNED", "bigint"),
    (MySQLAdapter, "DATETIME(6)", "timestamp"),
    (MySQLAdapter, "DECIMAL(38,9)", "decimal"),
    (MySQLAdapter, "LONGTEXT", "text"),
    (MySQLAdapter, "NO_SUCH_TYPE", None),
]


@pytest.mark.parametrize(("cls", "db_type", "dlt_type"), TYPE_NAMES)
def test_sqlalchemy_type_names_read_through_the_backend_dialect(
    cls: type[SQLiteAdapter | MySQLAdapter], db_type: str, dlt_type: str | None
) -> None:
    from dlt.common.destination import Destination
    from sqlalchemy.dialects import mysql, sqlite

    adapter = cls.offline("raw")
    dialect = sqlite.dialect() if cls is SQLiteAdapter else mysql.dialect()
    caps = Destination.from_reference("sqlalchemy").capabilities()  # type: ignore[union-attr]
    names = SqlaTypeNames(caps.get_type_mapper(dialect), dialect, adapter.parse_type)
    assert names.from_destination_type(db_type).get("data_type") == dlt_type


#: the startup options every session gets, for Timeouts(query=5, lock=0.25)
OURS = ("-c default_transaction_read_only=on -c statement_timeout=5000 -c lock_timeout=250 "
        "-c jit=off")

# (credentials, connect_timeout after, options after)
PG_CREDENTIALS = [
    ("postgresql://u:p@h:5432/db", 15, OURS),
    ("postgresql://u:p@h:5432/db?connect_timeout=0", CONNECT_TIMEOUT, OURS),
    ("postgresql://u:p@h:5432/db?connect_timeout=3", 3, OURS),
    # a user's own read-write default or timeout is overridden: the adapter's come last
    ("postgresql://u:p@h:5432/db?options=-c%20default_transaction_read_only%3Doff", 15,
     f"-c default_transaction_read_only=off {OURS}"),
    ("postgresql://u:p@h:5432/db?options=-c%20statement_timeout%3D0", 15,
     f"-c statement_timeout=0 {OURS}"),
]


@pytest.mark.parametrize(("url", "timeout", "options"), PG_CREDENTIALS)
def test_postgres_sessions_start_read_only_and_bounded(
    url: str, timeout: int, options: str
) -> None:
    from dlt.destinations.impl.postgres.configuration import PostgresCredentials

    credentials = PostgresCredentials(url)
    make_read_only(credentials, Timeouts(query=5, lock=0.25))
    assert credentials.connect_timeout == timeout
    assert credentials.get_query()["options"] == options
    make_read_only(credentials, Timeouts(query=5, lock=0.25))  # opening twice adds nothing
    assert credentials.get_query()["options"] == options


@pytest.mark.parametrize(
    ("query", "lock", "message"),
    [
        (0, 1, r"`query_timeout` must be a number of seconds > 0, got 0"),
        (5, -1, r"`lock_timeout` must be a number of seconds > 0, got -1"),
        (float("inf"), 1, r"`query_timeout` must be a number of seconds > 0, got inf"),
        (True, 1, r"`query_timeout` must be a number of seconds > 0, got True"),
    ],
)
def test_timeouts_must_be_positive_seconds(query: float, lock: float, message: str) -> None:
    from dlt_contract_ops.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        Timeouts(query=query, lock=lock)


def test_a_table_column_named_like_an_output_alias_is_still_spelled_the_catalogs_way() -> None:
    from dlt_contract_ops.core.columns import TimeAxis
    from dlt_contract_ops.detectors.queries import reproduce_coverage_query

    snow = SnowflakeAdapter.offline("raw")
    snow.read_metadata([
        ("EVENTS", "ROWS", "NUMBER", "YES"),
        ("EVENTS", "TS", "TIMESTAMP_TZ", "YES"),
    ])
    sql = snow.reproduce(
        reproduce_coverage_query(snow.table("events"), ["rows"], TimeAxis("ts")), [1, 2]
    )
    assert 'COUNT("ROWS") AS "rows non-null"' in sql
    assert 'COUNT(*) AS "rows"' in sql
