"""Case tables for the pure removal and declared-side detectors."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable, LiveColumn, LiveTable
from dlt_contract_ops.core.declared import detect_missing, detect_type
from dlt_contract_ops.core.removal import (
    DEFAULT_BASELINE_THRESHOLD,
    DEFAULT_RECENT_THRESHOLD,
    WindowCounts,
    detect_dark_columns,
)
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings import RemovalSettings, parse_duration


def _counts(base_rows: int, base_nn: int, recent_rows: int, recent_nn: int) -> WindowCounts:
    return WindowCounts(base_rows, recent_rows, {"c": base_nn}, {"c": recent_nn})


@pytest.mark.parametrize(
    ("base_rows", "base_nn", "recent_rows", "recent_nn", "dark"),
    [
        (100, 80, 10, 0, True),  # the classic: 80% -> 0%
        (100, 21, 100, 0, True),  # baseline just above 0.20
        (100, 20, 100, 0, False),  # baseline exactly 0.20 does not exceed it
        (100, 19, 100, 0, False),  # a mostly-null column was never carrying data
        (100, 80, 1000, 9, True),  # recent 0.009 is below 0.01
        (100, 80, 100, 1, False),  # recent exactly 0.01 is not below it
        (100, 80, 100, 2, False),  # still trickling
        (100, 80, 0, 0, False),  # idle recent window: no ratio, never flags
        (0, 0, 100, 0, False),  # no baseline rows: no ratio, never flags
        (0, 0, 0, 0, False),  # an empty table
    ],
)
def test_dark_column_edges(
    base_rows: int, base_nn: int, recent_rows: int, recent_nn: int, dark: bool
) -> None:
    found = detect_dark_columns(_counts(base_rows, base_nn, recent_rows, recent_nn))
    assert [d.name for d in found] == (["c"] if dark else [])
    if dark:
        assert found[0].baseline == base_nn / base_rows
        assert found[0].recent == recent_nn / recent_rows


def test_thresholds_are_parameters() -> None:
    counts = _counts(100, 50, 100, 5)
    assert detect_dark_columns(counts) == []
    found = detect_dark_columns(counts, baseline_threshold=0.4, recent_threshold=0.06)
    assert [d.name for d in found] == ["c"]
    assert (DEFAULT_BASELINE_THRESHOLD, DEFAULT_RECENT_THRESHOLD) == (0.20, 0.01)


def test_dark_columns_sorted_and_only_dark() -> None:
    counts = WindowCounts(10, 10, {"b": 9, "a": 9, "z": 9}, {"b": 0, "a": 0, "z": 9})
    assert [d.name for d in detect_dark_columns(counts)] == ["a", "b"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("6h", timedelta(hours=6)),
        ("90m", timedelta(minutes=90)),
        ("7d", timedelta(days=7)),
        ("1w", timedelta(weeks=1)),
        (" 30s ", timedelta(seconds=30)),
        (3600, timedelta(hours=1)),
        ("1.5h", timedelta(minutes=90)),
        # the grammars that used to differ between removal and dedup are one now
        ("1h30m", timedelta(minutes=90)),
        ("2w3d", timedelta(days=17)),
        ("PT6H", timedelta(hours=6)),
        ("P1DT12H", timedelta(hours=36)),
        ("p2w", timedelta(weeks=2)),
        ("90", timedelta(seconds=90)),  # environment variables arrive as text
        (timedelta(minutes=5), timedelta(minutes=5)),
    ],
)
def test_parse_duration(value: object, expected: timedelta) -> None:
    assert parse_duration(value, "k") == expected


@pytest.mark.parametrize(
    "value", ["h", "-1h", "0h", "six hours", "6 hours x", 0, -5, True, None, "P1M", "PT", "1y"]
)
def test_parse_duration_rejects_with_key(value: object) -> None:
    with pytest.raises(ConfigError, match=r"`contract_ops.removal.recent_window` = .*e\.g\."):
        parse_duration(value, "contract_ops.removal.recent_window")


@pytest.mark.parametrize("value", [-0.1, 1.5, "x", True])
def test_threshold_rejects(value: object) -> None:
    with pytest.raises(ConfigError, match="between 0 and 1"):
        RemovalSettings().overridden({"recent_threshold": value}, lambda k: f"`{k}`")


def test_settings_override_and_unknown_key() -> None:
    opts = RemovalSettings().overridden(
        {"recent_window": "2h", "recent_threshold": 0.05}, lambda k: f"`{k}`"
    )
    assert opts.recent_window == timedelta(hours=2)
    assert opts.recent_threshold == 0.05
    assert opts.baseline_window == timedelta(days=7)
    with pytest.raises(ConfigError, match="`recent_windw`"):
        RemovalSettings().overridden({"recent_windw": "2h"}, lambda k: f"`{k}`")


def _table(*cols: ExpectedColumn) -> ExpectedTable:
    return ExpectedTable("res", "tbl", cols)


def _live(**cols: str) -> LiveTable:
    return LiveTable("tbl", {n: LiveColumn(n, t) for n, t in cols.items()})


def test_missing_groups_fields_landing_under_two_names() -> None:
    expected = _table(
        ExpectedColumn("id", "bigint", field="id"),
        ExpectedColumn("amt", "double", field="amt"),
        ExpectedColumn("amount_usd", "double", field="amt"),  # serialization_alias
        ExpectedColumn("gone", "text", field="gone"),
    )
    drift = detect_missing(expected, _live(id="BIGINT", amount_usd="DOUBLE"))
    assert drift is not None
    assert drift.columns == ("gone",)
    assert drift.expected_types == {"gone": "text"}
    assert detect_missing(expected, _live(id="BIGINT", amt="DOUBLE", gone="VARCHAR")) is None


def test_detect_type_skips_types_it_cannot_judge() -> None:
    expected = _table(
        ExpectedColumn("a", "bigint", field="a"),
        ExpectedColumn("b", "bigint", field="b"),
        ExpectedColumn("c", "text", field="c"),
        ExpectedColumn("absent", "bigint", field="absent"),
    )
    live = _live(a="VARCHAR", b="GEOGRAPHY", c="VARCHAR")
    reader = {"VARCHAR": "text"}.get
    drift = detect_type(expected, live, reader)
    assert drift is not None
    assert drift.columns == ("a",)
    assert drift.live_types == {"a": "VARCHAR"}
    assert drift.expected_types == {"a": "bigint"}


@pytest.mark.parametrize(
    ("destination", "db_type", "expected"),
    [
        ("duckdb", "VARCHAR", "text"),
        ("duckdb", "BIGINT", "bigint"),
        ("duckdb", "INTEGER", "bigint"),
        ("duckdb", "DECIMAL(10,2)", "decimal"),
        ("duckdb", "TIMESTAMP WITH TIME ZONE", "timestamp"),
        ("duckdb", "REAL", "double"),  # dlt falls back to text; a float all the same
        ("duckdb", "FLOAT", "double"),
        ("postgres", "real", "double"),
        ("postgres", "numeric(5,2)", "decimal"),
        ("postgres", "character varying(3)", "text"),
        ("duckdb", "UNION(a INTEGER)", None),
        ("snowflake", "NUMBER(19,0)", "decimal"),  # the size is judged apart (capacity)
        ("snowflake", "TEXT(16)", "text"),
        ("postgres", "text", "text"),
        ("postgres", "character varying", "text"),
        ("postgres", "integer", "bigint"),
        ("postgres", "numeric", "decimal"),
        ("postgres", "jsonb", "json"),
        ("postgres", "tsvector", None),
    ],
)
def test_type_reader_over_dlt_mappers(destination: str, db_type: str, expected: str | None) -> None:
    from dlt.common.destination import Destination

    from dlt_contract_ops.core.declared import type_reader

    mapper = Destination.from_reference(destination).capabilities().get_type_mapper()
    assert type_reader(mapper)(db_type) == expected
