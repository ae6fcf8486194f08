"""Destinations for the gate's tests: DuckDB in the test's folder, PostgreSQL on loopback in a
dataset of its own (so tests run in parallel), and readers of what landed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dlt
import pytest
from filelock import FileLock

from tests.conftest import require_server
from tests.duckdb_baselines import BASELINES

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


#: the DuckDB tests' dataset: each has a database file of its own, so one name serves them all
#: and a loaded baseline copies from one test to the next (`baseline`)
DUCKDB_DATASET = "gate_data"


def _target(kind: str, folder: Path) -> Iterator[Target]:
    dataset = DUCKDB_DATASET if kind == "duckdb" else f"gate_{uuid.uuid4().hex[:10]}"
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


def _pipelines_dir() -> Path:
    """dlt's pipelines folder in this test's data dir: the pipelines and the gate's own
    folder (`.contract_ops_gate`: its lock and the accepted load ids)."""
    return Path(os.environ["DLT_DATA_DIR"]) / "pipelines"


def baseline(target: Target, key: str, build: Callable[[Any], object],
             name: str = "orders_gate") -> Any:
    """`target.pipeline(name)` after `build(pipeline)` (real gated runs into a fresh pipeline
    and destination). `build` runs once per test run under `key` (which names what it loads)
    and destination kind: later tests get a copy of what it left, dlt's pipelines folder (the
    same load ids, stored schemas and pipeline state, its local paths pointed at this test's
    folder) and the destination's data: on DuckDB the database file, on PostgreSQL the tables
    copied from schemas kept for the run into the test's own dataset (the dataset's name in
    dlt's state, local and stored, as a build into it would have it; `_postgres_copy`).
    `key` must change whenever `build` does."""
    if not BASELINES:
        pipeline = target.pipeline(name)
        build(pipeline)
        return pipeline
    assert not _pipelines_dir().exists(), "a baseline goes into a fresh pipelines folder"
    if target.kind == "duckdb":
        database = target.folder / "warehouse.duckdb"
        assert not database.exists(), "a baseline goes into a fresh destination"
        saved = BASELINES[0] / f"gate-{name}-{key}"
    else:
        # `pg-` + a file `postgres-schemas`: `tests/conftest.py` drops the kept schemas
        saved = BASELINES[0] / f"pg-gate-{name}-{key}"
    with FileLock(str(saved) + ".lock"):
        if not saved.exists():
            pipeline = target.pipeline(name)
            build(pipeline)
            partial = saved.with_name(saved.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            if target.kind == "duckdb":
                shutil.copyfile(database, partial / database.name)
            else:
                _postgres_keep(target, partial, f"{name}-{key}")
            shutil.copytree(_pipelines_dir(), partial / "pipelines")
            (partial / "folder").write_text(str(target.folder))
            partial.rename(saved)
            return pipeline
        if target.kind == "duckdb":
            shutil.copyfile(saved / database.name, database)
        else:
            _postgres_copy(target, saved)
    shutil.copytree(saved / "pipelines", _pipelines_dir())
    state_file = _pipelines_dir() / name / "state.json"
    state = json.loads(state_file.read_text())
    local = json.dumps(state["_local"]).replace((saved / "folder").read_text(),
                                                str(target.folder))
    state["_local"] = json.loads(local)
    if target.kind == "duckdb":
        state_file.write_text(json.dumps(state))
    else:  # dlt's typed JSON: the version hash is of the values it encodes
        from dlt.common.versioned_state import json_decode_state, json_encode_state

        state = json_decode_state(json.dumps(state))
        _in_dataset(state, target.dataset)
        state_file.write_text(json_encode_state(state))
    return target.pipeline(name)


def _in_dataset(state: Any, dataset: str) -> None:
    """A pipeline state as a build into `dataset` has it: its name, and the version hash of
    the content (the same version; `_local`'s record of the extracted hash follows)."""
    from dlt.pipeline.state_sync import generate_pipeline_state_version_hash

    old = state["_version_hash"]
    state["dataset_name"] = dataset
    state["_version_hash"] = generate_pipeline_state_version_hash(state)
    local = state.get("_local", {})
    if local.get("_last_extracted_hash") == old:
        local["_last_extracted_hash"] = state["_version_hash"]


def _postgres_keep(target: Target, partial: Path, what: str) -> None:
    """The build's dataset (and dlt's staging dataset) copied into schemas kept for the run."""
    from tests.postgres_baselines import keep

    tag = hashlib.sha256(f"{BASELINES[0]}\0{what}".encode()).hexdigest()[:16]
    keep(DSN, target.dataset, f"co_kept_gate_{tag}", partial)


def _postgres_copy(target: Target, saved: Path) -> None:
    """The kept schemas copied into the test's dataset (and its staging dataset), the state
    rows dlt stored rewritten for the dataset (`_in_dataset`), as a build into it stores them."""
    import psycopg2
    from dlt.common.versioned_state import compress_state, decompress_state
    from psycopg2.sql import SQL, Identifier

    from tests.postgres_baselines import copy_kept

    copy_kept(DSN, saved, target.dataset)
    table = Identifier(target.dataset, "_dlt_pipeline_state")
    con = psycopg2.connect(DSN)
    try:
        with con, con.cursor() as cur:
            cur.execute(SQL("SELECT _dlt_id, state FROM {}").format(table))
            for row_id, stored in cur.fetchall():
                state = decompress_state(stored)
                _in_dataset(state, target.dataset)
                cur.execute(SQL("UPDATE {} SET state = %s, version_hash = %s WHERE _dlt_id = %s")
                            .format(table), (compress_state(state), state["_version_hash"], row_id))
    finally:
        con.close()


def baseline_orders(target: Target) -> Any:
    """The seed's baseline (3 rows, 18500 cents) gated into `orders_gate`; see `baseline`."""
    from dlt_contract_ops import gated_run
    from tests.gate.seed import BASELINE, orders

    def build(pipeline: Any) -> None:
        report = gated_run(pipeline, orders(BASELINE))
        assert report.action == "loaded", report

    return baseline(target, "orders", build)


def query(pipeline: Any, sql: str) -> list[tuple[Any, ...]]:
    """Rows of `sql` on the pipeline's destination; qualify tables with `q(...)`."""
    [rows] = queries(pipeline, sql)
    return rows


def queries(pipeline: Any, *sqls: str) -> list[list[tuple[Any, ...]]]:
    """The rows of each of `sqls`, over one connection to the destination dlt loaded (each
    DuckDB open costs about 12 ms of CPU, and a connection through dlt's `sql_client` as much
    again to resolve the client's config; a few per check add up over the suite)."""
    with _connection(pipeline) as cursor:
        out = []
        for sql in sqls:
            cursor.execute(sql)
            out.append([tuple(r) for r in cursor.fetchall()])
        return out


@contextmanager
def _connection(pipeline: Any) -> Iterator[Any]:
    """A cursor on the pipeline's destination, opened without dlt: the DuckDB file dlt loads,
    or PostgreSQL at its DSN (one autocommit connection a process, kept: it holds no locks
    between statements, and sees each load as soon as dlt commits it)."""
    database = _duckdb_file(pipeline)
    if database is not None:
        import duckdb

        con = duckdb.connect(database)
        try:
            yield con
        finally:
            con.close()
        return
    dsn = pipeline.destination.config_params.get("credentials")
    assert dsn == DSN, dsn
    key = (os.getpid(), dsn)
    con = _PG.get(key)
    if con is None or con.closed:
        import psycopg2

        con = _PG[key] = psycopg2.connect(dsn)
        con.autocommit = True
    with con.cursor() as cursor:
        yield cursor


#: `_connection`'s PostgreSQL connections: (process id, DSN) -> the connection
_PG: dict[tuple[int, str], Any] = {}


def _duckdb_file(pipeline: Any) -> str | None:
    """The DuckDB database file a `Target` pipeline loads into; None for other destinations."""
    destination = pipeline.destination
    if destination.destination_type != "dlt.destinations.duckdb":
        return None
    database = destination.config_params.get("credentials")
    return database if isinstance(database, str) else None


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
    [(rows, cents)] = query(pipeline, _TRUSTED.format(q(pipeline, "orders")))
    return int(rows), int(cents)


_TRUSTED = "SELECT COUNT(*), COALESCE(SUM(amount_cents), 0) FROM {}"


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
    [(loads,)], [(versions,)], [(newest,)] = queries(pipeline, *_marks_sql(pipeline))
    return int(loads), int(versions), str(newest)


def _marks_sql(pipeline: Any) -> tuple[str, str, str]:
    return (
        f"SELECT COUNT(*) FROM {q(pipeline, '_dlt_loads')}",
        f"SELECT COUNT(*) FROM {q(pipeline, '_dlt_version')}",
        f"SELECT version_hash FROM {q(pipeline, '_dlt_version')} "
        "ORDER BY inserted_at DESC, version DESC LIMIT 1",
    )


def landed(pipeline: Any, more: Sequence[str] = ()) -> tuple[Any, ...]:
    """`trusted(pipeline)`, `marks(pipeline)` and the rows of each of `more`, read over one
    connection: (trusted, marks, *rows of more)."""
    [(rows, cents)], [(loads,)], [(versions,)], [(newest,)], *rest = queries(
        pipeline, _TRUSTED.format(q(pipeline, "orders")), *_marks_sql(pipeline), *more)
    return ((int(rows), int(cents)), (int(loads), int(versions), str(newest)), *rest)


def stored_version(pipeline: Any) -> int:
    """The newest schema version the destination stored."""
    [(version,)] = query(pipeline, f"SELECT MAX(version) FROM {q(pipeline, '_dlt_version')}")
    return int(version)


def columns_of(pipeline: Any, table: str = "orders") -> list[str]:
    """The destination table's column names, as the destination reports them."""
    with _connection(pipeline) as cursor:
        cursor.execute(f"SELECT * FROM {q(pipeline, table)} WHERE 1 = 0")
        return [d[0] for d in cursor.description]

