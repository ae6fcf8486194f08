"""Read-only, proven on real databases, in two independent layers:

1. the renderer refuses any non-SELECT before a driver sees it;
2. the session itself is read-only: a write sent straight through the adapter's own dlt
   client, past the renderer, is rejected by the database (DuckDB `read_only`, PostgreSQL
   `default_transaction_read_only`, MariaDB `TRANSACTION READ ONLY`, SQLite `query_only`).

And a full reconcile runs as a PostgreSQL role that holds only USAGE and SELECT grants.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlglot import exp

from tests.destinations import scenario
from tests.destinations.servers import Backend, make, open_adapter_for, postgres, unique
from tests.projects import Project

READ_ONLY = re.compile(r"read.?only", re.IGNORECASE)


@pytest.fixture(params=["duckdb", "postgres", "sqlite", "mariadb", "sqla_postgres"])
def loaded(
    request: pytest.FixtureRequest, project: Project, tmp_path: Path
) -> Iterator[tuple[Project, Backend, str]]:
    backend = make(request.param, tmp_path)
    dataset = unique("co_ro")
    scenario.setup(project, backend, dataset)
    try:
        scenario.load(project, dataset, backend, n=5)
        yield project, backend, dataset
    finally:
        backend.drop_dataset(dataset)


def _count(backend: Backend, dataset: str) -> int:
    [[(n,)]] = backend.execute(dataset, [f"SELECT COUNT(*) FROM {backend.q(dataset, 'events')}"])
    return int(n)


WRITES = {
    "delete": lambda t: exp.delete(t),
    "insert": lambda t: exp.insert(exp.select("1"), t),
    "update": lambda t: exp.update(t, {"kind": exp.Literal.string("x")}),
    "drop": lambda t: exp.Drop(this=t, kind="TABLE"),
}


def test_renderer_refuses_before_the_driver(loaded: tuple[Project, Backend, str]) -> None:
    from dlt_contract_ops.errors import UnsafeQueryError

    project, backend, dataset = loaded
    with open_adapter_for(project.root, backend, dataset) as adapter:
        for kind, build in WRITES.items():
            with pytest.raises(UnsafeQueryError):
                adapter.run(build(adapter.table("events")), [], "sample")
            assert sum(adapter.queries.values()) == 0, kind  # nothing was sent
        count = exp.select(exp.Count(this=exp.Star())).from_(adapter.table("events"))
        assert adapter.run(count, [], "sample") == [(5,)]
    assert _count(backend, dataset) == 5


def test_session_rejects_writes_that_bypass_the_renderer(
    loaded: tuple[Project, Backend, str],
) -> None:
    project, backend, dataset = loaded
    events = backend.q(dataset, "events")
    with open_adapter_for(project.root, backend, dataset) as adapter:
        adapter.list_columns()  # opens the session the way a reconcile does
        for statement in (
            f"DELETE FROM {events}",
            f"UPDATE {events} SET kind = 'x'",
        ):
            with pytest.raises(Exception, match=READ_ONLY):
                adapter.sql_client.execute_sql(statement)
    assert _count(backend, dataset) == 5


def test_postgres_stays_read_only_after_a_failed_query(project: Project) -> None:
    # dlt's psycopg2 client resets the connection after an error (RESET ALL): a `SET` would
    # be undone, the startup option is not
    backend = postgres()
    backend.require()
    dataset = unique("co_ro_reset")
    scenario.setup(project, backend, dataset)
    try:
        scenario.load(project, dataset, backend, n=3)
        with open_adapter_for(project.root, backend, dataset) as adapter:
            setting = exp.select(
                exp.Anonymous(this="current_setting",
                              expressions=[exp.Literal.string("default_transaction_read_only")])
            )
            assert adapter.run(setting, [], "sample") == [("on",)]
            with pytest.raises(Exception, match="no_such_table"):
                adapter.run(exp.select("1").from_(adapter.table("no_such_table")), [], "sample")
            assert adapter.run(setting, [], "sample") == [("on",)]
            with pytest.raises(Exception, match=READ_ONLY):
                adapter.sql_client.execute_sql(f"DELETE FROM {backend.q(dataset, 'events')}")
            # a JIT compile cannot be cancelled: every session of ours has it off
            jit = exp.select(exp.Anonymous(this="current_setting",
                                           expressions=[exp.Literal.string("jit")]))
            assert adapter.run(jit, [], "sample") == [("off",)]
    finally:
        backend.drop_dataset(dataset)


@pytest.fixture
def reader_role() -> Iterator[str]:
    backend = postgres()
    backend.require()
    role = f"co_reader_{uuid.uuid4().hex[:8]}"
    backend.execute("", [f"CREATE ROLE {role} LOGIN", f"GRANT CONNECT ON DATABASE test TO {role}"])
    try:
        yield role
    finally:
        backend.execute("", [f"DROP OWNED BY {role}", f"DROP ROLE IF EXISTS {role}"])


def test_full_reconcile_as_a_select_only_role(project: Project, reader_role: str) -> None:
    backend = postgres()
    dataset = unique("co_role")
    scenario.setup(project, backend, dataset)
    try:
        scenario.make_history_and_drift(project, backend, dataset)
        backend.execute(dataset, [
            f"GRANT USAGE ON SCHEMA {backend.q(dataset)} TO {reader_role}",
            f"GRANT SELECT ON ALL TABLES IN SCHEMA {backend.q(dataset)} TO {reader_role}",
        ])
        # the reconciler resolves the role's credentials; the loader's are gone
        (project.root / ".dlt" / "secrets.toml").write_text(
            "[destination.postgres]\n"
            f'credentials = "postgresql://{reader_role}:x@127.0.0.1:5432/test"\n'
        )
        code, doc, stderr = scenario.reconcile_json(
            project, "-s", "telemetry", "--include-removal", "--dry-run"
        )
        # the role really cannot write: the grants above are all it has
        import psycopg2

        con = psycopg2.connect(f"postgresql://{reader_role}:x@127.0.0.1:5432/test")
        with pytest.raises(psycopg2.errors.InsufficientPrivilege), con.cursor() as cur:
            cur.execute(f"DELETE FROM {backend.q(dataset, 'events')}")
        con.close()
    finally:
        backend.drop_dataset(dataset)
    assert code == 0, stderr
    assert [r["error"] for r in doc["results"]] == [None] * len(doc["results"])
    assert sorted(scenario.by_kind(doc, "telemetry")) == [
        ("additive", "events"),
        ("missing", "events"),
        ("removal", "events"),
        ("removal", "readings"),
        ("type", "events"),
    ]
