"""Faults: an unreachable destination is that source's error (exit 1, the other sources still
reported, nothing hangs); a failing per-table query is an error of that source's result and
goes to the sink's error path, and the sweep continues."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.destinations import scenario
from tests.destinations.servers import Backend, make, postgres, unique
from tests.projects import Project


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts TCP connections and never says a word: a hung server."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield int(s.getsockname()[1])


@pytest.fixture
def healthy(project: Project, tmp_path: Path) -> Backend:
    """A drifted DuckDB source `local`: the one that must still be reported."""
    duck = make("duckdb", tmp_path)
    dataset = unique("co_ok")
    scenario.setup(project, duck, dataset, source="local", scoped=True)
    scenario.make_history_and_drift(project, duck, dataset)
    return duck


def _add_broken(project: Project, backend: Backend, credentials: str) -> None:
    project.secrets(backend.secrets("down_pipe", credentials))
    project.source("down", "telemetry_src:telemetry", pipeline_name="down_pipe",
                   destination=backend.destination, dataset_name="never_loaded")


def _sweep(project: Project) -> tuple[int, dict[str, object], str, float]:
    started = time.monotonic()
    code, doc, stderr = scenario.reconcile_json(project, "--all", "--dry-run")
    return code, doc, stderr, time.monotonic() - started


def _assert_isolated(
    code: int, doc: dict[str, object], stderr: str, *, exit_code: int = 1
) -> str:
    """Exit 1 (2 for refused credentials); `down` has one source error; `local` still has its
    findings. Returns the error."""
    assert code == exit_code, stderr
    results = doc["results"]
    assert isinstance(results, list)
    down = [r for r in results if r["source"] == "down"]
    assert len(down) == 1, down
    assert down[0]["error"], down
    local = scenario.by_kind(doc, "local")  # type: ignore[arg-type]
    assert local[("additive", "events")]["columns"] == ["payload_size"]
    return str(down[0]["error"])


def test_wrong_port(project: Project, healthy: Backend) -> None:
    pg = postgres()
    pg.require()
    port = _free_port()
    _add_broken(project, pg, f"postgresql://postgres:x@127.0.0.1:{port}/test")
    code, doc, stderr, _ = _sweep(project)
    error = _assert_isolated(code, doc, stderr)
    assert error.startswith("Cannot connect to destination `postgres`")
    assert f"127.0.0.1:{port}" in error
    assert "secrets.toml" in error


def test_bad_password_is_reported_without_the_password(
    project: Project, healthy: Backend, tmp_path: Path
) -> None:
    """Refused credentials are a configuration mistake: exit 2 (the others still reported),
    and never an alert."""
    maria = make("mariadb", tmp_path)
    _add_broken(project, maria, "mysql+pymysql://root:s3cr3t-pw@127.0.0.1:3306/test")
    code, doc, stderr, _elapsed = _sweep(project)
    error = _assert_isolated(code, doc, stderr, exit_code=2)
    assert "Access denied" in error
    assert "s3cr3t-pw" not in json.dumps(doc) + stderr


def test_unknown_role(project: Project, healthy: Backend) -> None:
    pg = postgres()
    pg.require()
    _add_broken(project, pg, "postgresql://no_such_role_co:x@127.0.0.1:5432/test")
    code, doc, stderr, _elapsed = _sweep(project)
    error = _assert_isolated(code, doc, stderr, exit_code=2)
    assert 'role "no_such_role_co" does not exist' in error


@pytest.mark.parametrize(
    ("key", "url", "says"),
    [
        ("postgres", "postgresql://postgres:x@127.0.0.1:5432/tset",
         'database "tset" does not exist'),
        ("mariadb", "mysql+pymysql://root:@127.0.0.1:3306/tset", "Unknown database 'tset'"),
    ],
)
def test_an_unknown_database_is_refused_like_an_unknown_role(
    project: Project, healthy: Backend, tmp_path: Path, key: str, url: str, says: str
) -> None:
    """A typo in the database name is the same kind of mistake as one in the role: exit 2
    and never an alert (it was a runtime error that paged, exit 1)."""
    backend = make(key, tmp_path)
    _add_broken(project, backend, url)
    code, doc, stderr, _elapsed = _sweep(project)
    error = _assert_isolated(code, doc, stderr, exit_code=2)
    assert says in error


@pytest.mark.parametrize("key", ["postgres", "mariadb"])
def test_a_hung_server_times_out(
    project: Project, healthy: Backend, silent_server: int, key: str, tmp_path: Path
) -> None:
    backend = make(key, tmp_path)
    if key == "postgres":  # the credentials' own bound is honoured
        url = f"postgresql://postgres:x@127.0.0.1:{silent_server}/test?connect_timeout=2"
    else:  # no bound configured: the adapter's default applies
        url = f"mysql+pymysql://root:@127.0.0.1:{silent_server}/test"
    _add_broken(project, backend, url)
    code, doc, stderr, _ = _sweep(project)
    error = _assert_isolated(code, doc, stderr)
    # the outcome is the bound: without a connect timeout the sweep would never return
    assert error.startswith("Cannot connect to destination")


def test_a_failing_table_query_goes_to_the_error_path(project: Project) -> None:
    pg = postgres()
    pg.require()
    dataset = unique("co_fault")
    scenario.setup(project, pg, dataset, sinks=("logging",))
    try:
        scenario.make_history_and_drift(project, pg, dataset)
        # `readings` is windowed on loaded_at; as text the reconciler falls back to
        # `_dlt_load_id`, which as an integer no longer compares with a load-id string
        readings = pg.q(dataset, "readings")
        pg.execute(dataset, [
            f"ALTER TABLE {readings} ALTER COLUMN loaded_at TYPE text",
            f"ALTER TABLE {readings} ALTER COLUMN _dlt_load_id TYPE bigint USING 0",
        ])
        code, doc, stderr = scenario.reconcile_json(
            project, "-s", "telemetry", "--include-removal", "--no-dedup"
        )
    finally:
        pg.drop_dataset(dataset)
    # a table that could not be checked is an error of that source's removal result: exit 1
    assert code == 1, stderr
    [removal] = [r for r in doc["results"] if r["detector"] == "removal"]
    assert all(r["error"] is None for r in doc["results"] if r is not removal)
    assert "coverage query for table `readings` failed" in removal["error"]
    assert "invalid input syntax for type bigint" in removal["error"]
    # the sweep went on: the other table's removal drift is still found
    assert scenario.by_kind(doc, "telemetry")[("removal", "events")]["columns"] == ["actor_login"]
    # and the logging sink got the error event
    errors = [line for line in stderr.splitlines() if "[ERROR]" in line]
    assert any("coverage query for table `readings`" in line for line in errors), stderr
