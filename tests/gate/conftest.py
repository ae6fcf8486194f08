"""Destinations for the gate's tests: DuckDB in the test's folder, PostgreSQL on loopback in a
dataset of its own (so tests run in parallel), and readers of what landed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dlt
import pytest

from tests.conftest import require_server

DSN = "postgresql://postgres:x@127.0.0.1:5432/test"


@dataclass(frozen=True)
class Target:
    kind: str  # "duckdb" | "postgres"
    dataset: str
    folder: Path

    def destination(self) -> Any:
        if self.kind == "duckdb":
            return dlt.destinations.duckdb(str(self.folder / "warehouse.duckdb"))
        return dlt.destinations.postgres(DSN)

    def pipeline(self, name: str = "orders_gate") -> Any:
        return dlt.pipeline(
            pipeline_name=name, destination=self.destination(), dataset_name=self.dataset
        )


def _target(kind: str, folder: Path) -> Iterator[Target]:
    dataset = f"gate_{uuid.uuid4().hex[:10]}"
    if kind == "postgres":
        require_server("127.0.0.1", 5432, "PostgreSQL")
    yield Target(kind, dataset, folder)
    if kind == "postgres":
        import psycopg2

        with psycopg2.connect(DSN) as con, con.cursor() as cur:
            for schema in (dataset, f"{dataset}_staging"):
                cur.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(params=["duckdb", pytest.param("postgres", marks=pytest.mark.postgres)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    """Each test on DuckDB and on PostgreSQL."""
    yield from _target(request.param, tmp_path)


@pytest.fixture
def duckdb_target(tmp_path: Path) -> Iterator[Target]:
    """DuckDB only: for what does not depend on the destination (policy, settings, alerts)."""
    yield from _target("duckdb", tmp_path)


def query(pipeline: Any, sql: str) -> list[tuple[Any, ...]]:
    """Rows of `sql` on the pipeline's destination; qualify tables with `q(...)`."""
    [rows] = queries(pipeline, sql)
    return rows


def queries(pipeline: Any, *sqls: str) -> list[list[tuple[Any, ...]]]:
    """The rows of each of `sqls`, over one connection (each opens the database anew: a
    DuckDB open costs about 20 ms of CPU, a few per check add up over the suite)."""
    with pipeline.sql_client() as client:
        return [[tuple(r) for r in client.execute_sql(sql) or []] for sql in sqls]


#: `q`'s answers: (destination, dataset, table) -> the qualified name
_QUALIFIED: dict[tuple[str, str, str], str] = {}


def q(pipeline: Any, table: str) -> str:
    """`table` qualified and quoted for the pipeline's destination (the name needs the
    destination's dialect, not a connection: the client is made, not opened, once per name)."""
    key = (str(pipeline.destination.destination_name), str(pipeline.dataset_name), table)
    if key not in _QUALIFIED:
        _QUALIFIED[key] = str(pipeline.sql_client().make_qualified_table_name(table))
    return _QUALIFIED[key]


def trusted(pipeline: Any) -> tuple[int, int]:
    """(rows, total cents) of the trusted orders table."""
    [(rows, cents)] = query(
        pipeline, f"SELECT COUNT(*), COALESCE(SUM(amount_cents), 0) FROM {q(pipeline, 'orders')}"
    )
    return int(rows), int(cents)


def slice_of(pipeline: Any, day: str = "2026-03-18") -> tuple[int, int]:
    """(rows, known-channel total) of one date: the number the report shows."""
    [(rows, cents)] = query(
        pipeline,
        "SELECT COUNT(*), COALESCE(SUM(CASE WHEN channel IN ('web', 'store') "
        f"THEN amount_cents ELSE 0 END), 0) FROM {q(pipeline, 'orders')} "
        f"WHERE order_date = DATE '{day}'",
    )
    return int(rows), int(cents)


def marks(pipeline: Any) -> tuple[int, int, str]:
    """What a load leaves in the destination besides rows: the `_dlt_loads` rows, the stored
    schema versions and the newest one's hash."""
    [(loads,)], [(versions,)], [(newest,)] = queries(
        pipeline,
        f"SELECT COUNT(*) FROM {q(pipeline, '_dlt_loads')}",
        f"SELECT COUNT(*) FROM {q(pipeline, '_dlt_version')}",
        f"SELECT version_hash FROM {q(pipeline, '_dlt_version')} "
        "ORDER BY inserted_at DESC, version DESC LIMIT 1",
    )
    return int(loads), int(versions), str(newest)


def stored_version(pipeline: Any) -> int:
    """The newest schema version the destination stored."""
    [(version,)] = query(pipeline, f"SELECT MAX(version) FROM {q(pipeline, '_dlt_version')}")
    return int(version)


def columns_of(pipeline: Any, table: str = "orders") -> list[str]:
    """The destination table's column names, as the destination reports them."""
    with pipeline.sql_client() as client, client.execute_query(
        f"SELECT * FROM {client.make_qualified_table_name(table)} WHERE 1 = 0"
    ) as cursor:
        return [d[0] for d in cursor.description]
