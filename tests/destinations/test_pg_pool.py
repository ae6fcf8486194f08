"""PostgreSQL runs the per-table coverage aggregates on a small bounded pool of read-only
sessions; the findings are the same as one by one."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp

from dlt_contract_ops.destinations.postgres import PostgresAdapter
from dlt_contract_ops.engine.reconcile import run
from tests.destinations import scenario
from tests.destinations.servers import Backend, adapter_for, make, unique
from tests.projects import Project


@pytest.fixture
def pg(project: Project, tmp_path: Path) -> Iterator[tuple[Project, Backend, str]]:
    backend = make("postgres", tmp_path)
    with scenario.drifted_dataset(project, backend, "co_pool") as dataset:
        yield project, backend, dataset


@contextmanager
def role_allowed(backend: Backend, dataset: str, connections: int) -> Iterator[str]:
    """Credentials of a new role that reads `dataset` and may hold `connections` connections
    at once: the server refuses one more, and the reconciler says so (a WARNING)."""
    role = unique("co_pool_role")
    grants = [f'USAGE ON SCHEMA "{dataset}"', f'SELECT ON ALL TABLES IN SCHEMA "{dataset}"']
    backend.execute("public", [f"CREATE ROLE {role} LOGIN CONNECTION LIMIT {connections}",
                               *[f"GRANT {g} TO {role}" for g in grants]])
    try:
        yield f"postgresql://{role}:x@127.0.0.1:5432/test"
    finally:
        backend.execute("public", [*[f"REVOKE {g} FROM {role}" for g in grants],
                                   f"DROP ROLE IF EXISTS {role}"])


def _removal(project: Project, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
             credentials: str) -> tuple[Any, list[str]]:
    """The removal sweep as `credentials`, and the pool sessions it could not open."""
    monkeypatch.setenv(f"{scenario.PIPELINE.upper()}__DESTINATION__POSTGRES__CREDENTIALS",
                       credentials)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        [result] = run(["telemetry"], detectors=("removal",), project_dir=project.root,
                       dry_run=True)
    return result, [r.getMessage() for r in caplog.records
                    if r.getMessage().startswith("PostgreSQL pool session")]


def test_pooled_coverage_finds_what_one_by_one_finds(
    pg: tuple[Project, Backend, str], monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One by one: a role the server allows one connection (every pool session is refused,
    their queries run on the adapter's own). Pooled: a role allowed the adapter's own and one
    per table with declared columns (two): no session is refused, so no more were opened."""
    project, backend, dataset = pg
    with role_allowed(backend, dataset, 1) as one:
        serial, refused_serial = _removal(project, monkeypatch, caplog, one)
    with role_allowed(backend, dataset, 1 + 2) as three:
        pooled, refused_pooled = _removal(project, monkeypatch, caplog, three)
    assert serial.error is None
    assert pooled.error is None
    assert serial.findings, "the scenario makes columns go dark"
    strip = [f.model_dump(exclude={"first_seen", "reproduce"}) for f in serial.findings]
    assert [f.model_dump(exclude={"first_seen", "reproduce"}) for f in pooled.findings] == strip
    assert len(refused_serial) == 2  # two tables: two pool sessions tried, both refused
    assert refused_pooled == []  # two sessions, not four


def test_pool_sessions_are_read_only_and_failures_stay_per_query(
    pg: tuple[Project, Backend, str],
) -> None:
    from dlt.common.schema import Schema

    from dlt_contract_ops.destinations.connect import open_adapter, resolve_target
    from dlt_contract_ops.settings import project_context

    project, _, dataset = pg
    with project_context(project.root):
        target = resolve_target("telemetry", scenario.PIPELINE, "postgres", dataset,
                                str(project.root))
        adapter = open_adapter(target, Schema("telemetry"))
    assert isinstance(adapter, PostgresAdapter)
    setting = exp.select(
        exp.func("current_setting", exp.Literal.string("default_transaction_read_only"))
    )
    broken = exp.select(exp.column("no_such_column")).from_(adapter.table("events"))
    try:
        outcomes = adapter.run_all([(setting, []), (broken, []), (setting.copy(), [])],
                                   "coverage")
    finally:
        adapter.close()
    assert adapter.pool_sessions == 3
    assert outcomes[0] == [("on",)]
    assert outcomes[2] == [("on",)]
    assert isinstance(outcomes[1], Exception)
    assert "no_such_column" in str(outcomes[1])


def test_a_pool_session_that_cannot_open_is_reported_and_its_queries_run_on_the_main_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A role allowed one connection: the adapter's own session opens, every pool session is
    refused by the server. Each refusal is logged and kept; all queries still answer."""
    backend = make("postgres", tmp_path)
    role = unique("co_one_session")
    backend.execute("public", [f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 1"])
    try:
        limited = Backend("postgres", "postgres", f"postgresql://{role}:x@127.0.0.1:5432/test")
        with adapter_for(limited, "public") as adapter:
            batch = [(exp.select(exp.Literal.number(n)), []) for n in (1, 2, 3)]
            with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
                outcomes = adapter.run_all(batch, "coverage")
    finally:
        backend.execute("public", [f"DROP ROLE IF EXISTS {role}"])
    assert outcomes == [[(1,)], [(2,)], [(3,)]]
    assert adapter.queries["coverage"] == 3
    assert adapter.pool_sessions == 1  # the adapter's own
    assert len(adapter.pool_failures) == 3
    for n, failure in enumerate(adapter.pool_failures, start=1):
        assert failure.startswith(f"PostgreSQL pool session {n} of 3 for dataset `public` "
                                  "could not open:")
        assert f'too many connections for role "{role}"' in failure
        assert failure.endswith("Its queries run on the adapter's own connection.")
    assert [r.getMessage() for r in caplog.records
            if r.getMessage().startswith("PostgreSQL pool session")] == adapter.pool_failures
