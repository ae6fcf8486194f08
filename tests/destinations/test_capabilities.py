"""What each built-in adapter declares it can do, as a case table: the one place a capability
lives (`Capabilities`), which every caller asks instead of probing the adapter."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dlt_contract_ops.destinations.bigquery import BigQueryAdapter
from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.duckdb import DuckDBAdapter
from dlt_contract_ops.destinations.filesystem import FilesystemAdapter
from dlt_contract_ops.destinations.memory import InMemoryAdapter
from dlt_contract_ops.destinations.postgres import PostgresAdapter
from dlt_contract_ops.destinations.protocol import protocol_problems
from dlt_contract_ops.destinations.snowflake import SnowflakeAdapter
from dlt_contract_ops.destinations.sqlalchemy import (
    MySQLAdapter,
    SqlalchemyAdapter,
    SqlaPostgresAdapter,
    SQLiteAdapter,
)

ROOT = Path(__file__).parents[2] / "dlt_contract_ops"

# columns: dialect, timeout by, approximate distinct, regex search, pool size,
# load prune rows, lists per adapter, over files
CASES: list[tuple[type, tuple[object, ...]]] = [
    (DuckDBAdapter, ("duckdb", "client", True, True, 1, 122_880, False, False)),
    (PostgresAdapter, ("postgres", "server", False, True, 4, None, False, False)),
    (BigQueryAdapter, ("bigquery", "client", True, True, 1, None, False, False)),
    (SnowflakeAdapter, ("snowflake", "client", True, False, 1, None, False, False)),
    (FilesystemAdapter, ("duckdb", "client", True, True, 1, None, True, True)),
    (SqlalchemyAdapter, ("sqlite", "client", False, False, 1, None, False, False)),
    (SQLiteAdapter, ("sqlite", "client", False, False, 1, None, False, False)),
    (MySQLAdapter, ("mysql", "server", False, False, 1, None, False, False)),
    (SqlaPostgresAdapter, ("postgres", "server", False, True, 1, None, False, False)),
    (InMemoryAdapter, ("duckdb", "client", True, True, 1, 122_880, False, False)),
]


@pytest.mark.parametrize(("cls", "expected"), CASES, ids=[c.__name__ for c, _ in CASES])
def test_each_builtin_adapter_declares_its_capabilities(
    cls: type, expected: tuple[object, ...]
) -> None:
    caps = cls.capabilities  # type: ignore[attr-defined]
    assert isinstance(caps, Capabilities)
    assert (caps.dialect, caps.query_timeout_by, caps.approximate_distinct, caps.regex_search,
            caps.pool_size, caps.load_prune_rows, caps.lists_per_adapter,
            caps.over_files) == expected
    assert caps.prepared_queries  # every built-in runs the renderer's prepared queries
    assert caps.read_only.strip()
    assert (caps.regex_note == "") is caps.regex_search
    assert protocol_problems(cls) == []


@pytest.mark.parametrize(("cls", "words"), [
    (SnowflakeAdapter, "matches the whole value"),
    (SQLiteAdapter, "SQLite has no built-in regular-expression function"),
    (MySQLAdapter, "MariaDB has no REGEXP_LIKE"),
])
def test_a_destination_without_a_regex_search_says_why(cls: type, words: str) -> None:
    assert words in cls.capabilities.regex_note  # type: ignore[attr-defined]


def test_capabilities_are_frozen() -> None:
    with pytest.raises(AttributeError):
        DuckDBAdapter.capabilities.pool_size = 2  # type: ignore[misc]


def test_nothing_probes_an_adapter_or_keeps_a_dialect_set() -> None:
    """Outside the declarations, no `getattr` on an adapter, no `isinstance` on an adapter
    class, no set of dialect names: a capability is asked of `adapter.capabilities`."""
    probes = re.compile(r"getattr\([\w.]*adapter\b|isinstance\([^)]*Adapter\)|\w+_DIALECTS\s*=")
    found = [f"{f.relative_to(ROOT)}:{n}: {line.strip()}"
             for f in sorted(ROOT.rglob("*.py"))
             for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
             if probes.search(line)]
    assert found == []
