"""Each destination's metadata rows read as live columns with their size: from
information_schema's size columns (PostgreSQL, DuckDB, Snowflake) or from the type's name
(MySQL/MariaDB `COLUMN_TYPE`, BigQuery), and none where the destination enforces none
(SQLite). Offline adapters, rows as each catalog returns them."""

from __future__ import annotations

from typing import Any

import pytest

from dlt_contract_ops.destinations.bigquery import BigQueryAdapter
from dlt_contract_ops.destinations.snowflake import SnowflakeAdapter
from dlt_contract_ops.destinations.typesize import TypeSize, parse_size


def _sizes(adapter: Any, rows: list[tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
    live = adapter.read_metadata(rows)["t"]
    return {
        name: (c.data_type, c.precision, c.scale, c.radix, c.length)
        for name, c in live.columns.items()
    }


def test_snowflake_reads_the_catalog_size_and_text_without_length_is_unbounded() -> None:
    adapter = SnowflakeAdapter.offline("raw")
    assert adapter.metadata_query().sql().count("numeric_precision_radix") == 1
    sizes = _sizes(adapter, [
        ("T", "ID", "NUMBER", "NO", None, 19, 10, 0),
        ("T", "AMOUNT", "NUMBER", "NO", None, 5, 10, 2),
        ("T", "NOTE", "TEXT", "YES", 16777216, None, None, None),
        ("T", "CODE", "TEXT", "YES", 3, None, None, None),
        ("T", "RATIO", "FLOAT", "YES", None, None, None, None),
    ])
    assert sizes == {
        "id": ("NUMBER(19,0)", 19, 0, 10, None),
        "amount": ("NUMBER(5,2)", 5, 2, 10, None),
        "note": ("TEXT", None, None, None, None),
        "code": ("TEXT(3)", None, None, None, 3),
        "ratio": ("FLOAT", None, None, None, None),
    }


def test_bigquery_reads_the_size_from_the_type_name() -> None:
    adapter = BigQueryAdapter.offline("raw", catalog="p")
    assert "numeric_precision" not in adapter.metadata_query().sql()
    sizes = _sizes(adapter, [
        ("t", "id", "INT64", "NO", "NO"),
        ("t", "amount", "NUMERIC(5, 2)", "NO", "NO"),
        ("t", "code", "STRING(3)", "YES", "NO"),
        ("t", "note", "STRING", "YES", "NO"),
    ])
    assert sizes == {
        "id": ("INT64", 64, None, 2, None),
        "amount": ("NUMERIC(5, 2)", 5, 2, 10, None),
        "code": ("STRING(3)", None, None, None, 3),
        "note": ("STRING", None, None, None, None),
    }


@pytest.mark.parametrize(
    ("db_type", "size"),
    [
        ("bigint(20)", TypeSize(64, radix=2)),  # MySQL: (20) is a display width
        ("int(11) unsigned", TypeSize(32, radix=2)),
        ("decimal(5,2)", TypeSize(5, 2, 10)),
        ("float", TypeSize(24, radix=2)),  # MySQL's FLOAT is 4 bytes
        ("double", TypeSize(53, radix=2)),
        ("varchar(3)", TypeSize(length=3)),
        ("tinytext", TypeSize(length=255)),
        ("text", TypeSize()),  # what dlt creates for a str on MariaDB: not a narrowing
        ("longtext", TypeSize()),
        ("datetime(6)", TypeSize()),
        ("CHARACTER VARYING(3)", TypeSize(length=3)),
        ("ARRAY<INT64>", TypeSize()),
    ],
)
def test_parse_size(db_type: str, size: TypeSize) -> None:
    assert parse_size(db_type) == size
