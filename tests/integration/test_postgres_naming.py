"""Names dlt shortens for PostgreSQL (63 characters): expected names must match them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from dlt_contract_ops import reconcile_source
from dlt_contract_ops.settings import project_context
from dlt_contract_ops.sources.discovery import build_source
from tests.conftest import require_server
from tests.destinations import scenario
from tests.projects import Project

pytestmark = pytest.mark.postgres

DSN = "postgresql://postgres:x@127.0.0.1:5432/test"
LONG = "a_really_long_field_name_that_goes_on_and_on_beyond_sixty_three_characters"

SOURCE = scenario.wide_source(LONG)


@pytest.fixture
def dataset() -> Iterator[str]:
    require_server("127.0.0.1", 5432, "PostgreSQL")
    name = f"co_naming_{uuid.uuid4().hex[:8]}"
    yield name
    import psycopg2

    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        cur.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _load(project: Project, dataset: str) -> set[str]:
    project.module("pipes.wide", SOURCE)
    project.secrets(f'[destination.postgres]\ncredentials = "{DSN}"\n')
    project.source("wide_src", "pipes.wide:wide_src", pipeline_name="wide_pipe",
                   destination="postgres", dataset_name=dataset)
    project.python(
        f"""
        import dlt
        from pipes.wide import wide_src
        dlt.pipeline("wide_pipe", destination="postgres", dataset_name="{dataset}").run(
            wide_src()
        )
        """
    )
    import psycopg2

    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        cur.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = %s AND table_name = 'wide'",
            [dataset],
        )
        return {r[0] for r in cur.fetchall()}


def test_expected_names_for_postgres_match_the_landed_ones(project: Project, dataset: str) -> None:
    from dlt.common.destination import Destination

    live = _load(project, dataset)
    landed = {c for c in live if not c.startswith("_dlt_")}
    assert LONG not in landed  # dlt really shortened it
    with project_context(project.root):
        built = build_source("wide_src", "pipes.wide:wide_src", str(project.root))
    postgres = Destination.from_reference("postgres")
    assert postgres is not None
    caps = postgres.capabilities()
    (table,) = built.for_destination(caps).tables
    assert table.names == landed
    # DuckDB allows long names: nothing is shortened
    duckdb = Destination.from_reference("duckdb")
    assert duckdb is not None
    assert built.for_destination(duckdb.capabilities()).tables == built.tables
    assert LONG in built.tables[0].names


def test_a_long_field_is_not_drift_on_postgres(project: Project, dataset: str) -> None:
    _load(project, dataset)
    result = reconcile_source("wide_src", dry_run=True, project_dir=project.root)
    assert result.error is None, result.error
    assert result.findings == []
