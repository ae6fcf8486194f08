"""Additive, removal, missing and type drift end to end on DuckDB, PostgreSQL (native and
through dlt's sqlalchemy destination), SQLite and MariaDB: a real dlt pipeline loads, drift
is made out of band with SQL, the CLI reports it, and each reproduce query runs as pasted on
the destination it was printed for."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.destinations import scenario
from tests.destinations.plain import plain_select
from tests.destinations.servers import Backend, make, unique
from tests.projects import Project

BACKENDS = ["duckdb", "postgres", "sqlite", "mariadb", "sqla_postgres"]

#: how each backend reports the BIGINT column added out of band, and the retyped `rank`
ADDED_TYPE = {"duckdb": "BIGINT", "postgres": "BIGINT", "sqlite": "BIGINT",
              "mariadb": "BIGINT(20)", "sqla_postgres": "BIGINT"}
RANK_TYPE = {"duckdb": "VARCHAR", "postgres": "TEXT", "sqlite": "TEXT", "mariadb": "VARCHAR(20)",
             "sqla_postgres": "TEXT"}


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make(request.param, tmp_path)


@pytest.fixture
def drifted(project: Project, backend: Backend) -> Iterator[tuple[Project, Backend, str]]:
    with scenario.drifted_dataset(project, backend, "co_e2e") as dataset:
        yield project, backend, dataset


def test_all_four_drift_kinds_are_reported_and_reproduce_as_pasted(
    drifted: tuple[Project, Backend, str]
) -> None:
    project, backend, dataset = drifted
    code, doc, stderr = scenario.reconcile_json(
        project, "-s", "telemetry", "--include-removal", "--dry-run"
    )
    assert code == 0, stderr
    _reported(doc, backend, dataset)
    _reproduced(doc, backend, dataset)


def _reported(doc: dict[str, Any], backend: Backend, dataset: str) -> None:
    assert [r["error"] for r in doc["results"]] == [None] * len(doc["results"])
    assert {r["dataset"] for r in doc["results"]} == {dataset}
    found = scenario.by_kind(doc, "telemetry")
    assert sorted(found) == [
        ("additive", "events"),
        ("missing", "events"),
        ("removal", "events"),
        ("removal", "readings"),
        ("type", "events"),
    ]

    added = found[("additive", "events")]
    assert added["columns"] == ["payload_size"]
    assert added["column_types"] == {"payload_size": ADDED_TYPE[backend.key]}
    values = added["samples"]["payload_size"]
    assert len(values) == 5
    assert set(values) <= {i * 7 for i in [*range(20), *range(100, 110)]}
    # first seen = the oldest load that carries a value: the backdated one, 3 days ago
    first_seen = datetime.fromisoformat(added["first_seen"]).timestamp()
    assert abs(first_seen - (time.time() - 3 * 86400)) < 600

    dark = found[("removal", "events")]  # windowed on _dlt_load_id
    assert dark["columns"] == ["actor_login"]
    assert dark["coverage"]["actor_login"] == {"baseline": 0.8, "recent": 0.0}
    dark_ts = found[("removal", "readings")]  # windowed on the loaded_at timestamp
    assert dark_ts["columns"] == ["sensor"]
    assert dark_ts["coverage"]["sensor"] == {"baseline": 1.0, "recent": 0.0}

    assert found[("missing", "events")]["columns"] == ["score"]
    retyped = found[("type", "events")]
    assert retyped["columns"] == ["rank"]
    assert retyped["column_types"] == {"rank": RANK_TYPE[backend.key]}
    assert retyped["expected_types"] == {"rank": "bigint"}


def _reproduced(doc: dict[str, Any], backend: Backend, dataset: str) -> None:
    """Each reproduce query runs as pasted on the destination it was printed for."""
    found = scenario.by_kind(doc, "telemetry")
    removal_sql = [found[("removal", r)]["reproduce"] for r in ("events", "readings")]
    added_sql = found[("additive", "events")]["reproduce"]
    quote = backend.quote
    assert all(f"{quote}{dataset}{quote}" in sql for sql in [*removal_sql, added_sql])

    # the backend's session has attached the dataset already: SQLite's ATTACH line (pasted
    # into a fresh shell by the next test) is left out here
    events_cov, readings_cov, added_rows = backend.execute(
        dataset, [s.rpartition(";\n")[2] for s in (*removal_sql, added_sql)]
    )
    # (window, rows, non-null of the dark column)
    assert sorted((w, int(n), int(c)) for w, n, c in events_cov) == [
        ("baseline", 20, 16), ("recent", 10, 0)
    ]
    assert sorted((w, int(n), int(c)) for w, n, c in readings_cov) == [
        ("baseline", 20, 20), ("recent", 10, 0)
    ]
    # the sampled rows, read plainly: the added column's samples, newest first, each beside
    # its load (the time axis)
    plain_select(added_sql, {"mariadb": "mysql"}.get(backend.kind, backend.kind))
    assert [row[0] for row in added_rows] == found[("additive", "events")]["samples"][
        "payload_size"]
    assert [row[1] for row in added_rows] == sorted((row[1] for row in added_rows), reverse=True)


def test_clean_dataset_reports_nothing(project: Project, backend: Backend) -> None:
    dataset = unique("co_clean")
    scenario.setup(project, backend, dataset)
    try:
        scenario.load(project, dataset, backend, n=10)
        code, doc, stderr = scenario.reconcile_json(
            project, "-s", "telemetry", "--include-removal", "--dry-run"
        )
    finally:
        backend.drop_dataset(dataset)
    assert code == 0, stderr
    assert [(r["detector"], r["findings"], r["error"]) for r in doc["results"]] == [
        (r["detector"], [], None) for r in doc["results"]
    ]
    assert {r["detector"] for r in doc["results"]} >= {"additive", "removal"}


def test_sqlite_reproduce_runs_in_a_fresh_shell(project: Project, tmp_path: Path) -> None:
    """A fresh `sqlite3` session on the pipeline's file has not attached the dataset's own
    file: the reproduce text carries the ATTACH line it needs, and runs as pasted (only
    SQLite keeps a dataset in a file of its own)."""
    import sqlite3

    backend = make("sqlite", tmp_path)
    with scenario.drifted_dataset(project, backend, "co_e2e"):
        code, doc, stderr = scenario.reconcile_json(project, "-s", "telemetry", "--dry-run")
        assert code == 0, stderr
        sql = scenario.by_kind(doc, "telemetry")[("additive", "events")]["reproduce"]
        attach, _, select = sql.partition(";\n")
        assert attach.startswith("ATTACH DATABASE ")
        con = sqlite3.connect(str(backend.sqlite_file))  # nothing attached: a user's shell
        try:
            con.execute(attach)
            rows = con.execute(select).fetchall()
        finally:
            con.close()
    assert [r[0] for r in rows] == scenario.by_kind(doc, "telemetry")[
        ("additive", "events")]["samples"]["payload_size"]
