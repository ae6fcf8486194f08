"""Severity on PostgreSQL: a real dlt load, then a declared column dropped (missing: an
error) and one added behind the model (additive: a warning); `--fail-on-drift=error` fails on
the first alone, and a source's severity table can make it a warning."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.destinations.servers import Backend, postgres, unique
from tests.projects import Project

APP = '''
import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    kind: str


@dlt.resource(name="events", columns=Event)
def events():
    yield [{"id": i, "kind": "click"} for i in range(5)]


@dlt.source(name="pg")
def pg():
    return events
'''


@pytest.fixture
def pg(project: Project) -> Iterator[tuple[Project, Backend, str]]:
    """The project, loaded into its own PostgreSQL schema and drifted; dropped afterwards."""
    backend = postgres()
    backend.require()
    dataset = unique("severity")
    project.module("pipelines.pg", APP)
    project.config(f"""
        [runtime]
        dlthub_telemetry = false

        [sources.pg.contract_ops]
        ref = "pipelines.pg:pg"
        pipeline_name = "pg_severity"
        destination = "postgres"
        dataset_name = "{dataset}"
        """)
    project.secrets(backend.secrets())
    try:
        project.python(f"""
            import dlt
            from pipelines.pg import pg

            dlt.pipeline("pg_severity", destination="postgres", dataset_name="{dataset}").run(pg())
            """)
        backend.execute(dataset, [
            f"ALTER TABLE {backend.q(dataset, 'events')} DROP COLUMN kind",
            f"ALTER TABLE {backend.q(dataset, 'events')} ADD COLUMN extra BIGINT",
        ])
        yield project, backend, dataset
    finally:
        backend.drop_dataset(dataset)


def test_missing_is_an_error_and_additive_a_warning_on_postgres(
    pg: tuple[Project, Backend, str],
) -> None:
    project, _, _ = pg
    proc = project.cli("reconcile", "-s", "pg", "--dry-run", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    found = {f["drift_type"]: (f["columns"], f["severity"])
             for r in json.loads(proc.stdout)["results"] for f in r["findings"]}
    assert found == {"additive": (["extra"], "warning"), "missing": (["kind"], "error")}

    assert project.cli("reconcile", "-s", "pg", "--dry-run",
                       "--fail-on-drift=error").returncode == 3
    config = project.root / ".dlt" / "config.toml"
    config.write_text(config.read_text() + '\n[sources.pg.contract_ops.severity]\n'
                      'missing = "warning"\n')
    assert project.cli("reconcile", "-s", "pg", "--dry-run",
                       "--fail-on-drift=error").returncode == 0
    assert project.cli("reconcile", "-s", "pg", "--dry-run",
                       "--fail-on-drift=warning").returncode == 3
