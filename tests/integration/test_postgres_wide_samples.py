"""A wide drifted table on PostgreSQL: every drifted column gets the newest values that carry
one (a column filled only in old loads too), from ONE sample query whose plan sorts the rows
once for all columns (it sorted them once per column: 300 columns x 3,000 rows took 40 s).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.destinations.postgres import PostgresAdapter
from dlt_contract_ops.detectors.queries import axis_bound, sample_query
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.settings.tables import DEFAULT_SAMPLE_ROWS
from tests.conftest import require_server
from tests.projects import Project

pytestmark = pytest.mark.postgres

DSN = "postgresql://postgres:x@127.0.0.1:5432/test"
COLUMNS = 40

SOURCE = """
import dlt
from pydantic import BaseModel


class Wide(BaseModel):
    id: int


@dlt.resource(columns=Wide, schema_contract={"columns": "evolve"})
def wide(start, n, dense):
    for i in range(start, start + n):
        row = {"id": i}
        for c in range(COLUMNS):
            # even columns: a value in every load; odd ones only in the first (oldest) load
            if c % 2 == 0 or not dense:
                row[f"c{c:02d}"] = f"v{c}_{i}"
        yield row


@dlt.source(name="wide_src")
def wide_src(start=0, n=30, dense=False):
    return wide(start, n, dense)
""".replace("COLUMNS", str(COLUMNS))


@pytest.fixture
def dataset() -> Iterator[str]:
    require_server("127.0.0.1", 5432, "PostgreSQL")
    name = f"co_wide_{uuid.uuid4().hex[:8]}"
    yield name
    import psycopg2

    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        cur.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _plan_nodes(plan: dict[str, Any]) -> list[str]:
    nodes, stack = [], [plan]
    while stack:
        node = stack.pop()
        nodes.append(node["Node Type"])
        stack += node.get("Plans", [])
    return nodes


def test_every_wide_column_is_sampled_from_one_sort(project: Project, dataset: str) -> None:
    project.module("wide_mod", SOURCE)
    project.secrets(f'[destination.postgres]\ncredentials = "{DSN}"\n')
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("wide_src", "wide_mod:wide_src", pipeline_name="wide_pipe",
                   destination="postgres", dataset_name=dataset)
    project.python(
        f"""
        import dlt
        from wide_mod import wide_src
        p = dlt.pipeline("wide_pipe", destination="postgres", dataset_name="{dataset}")
        p.run(wide_src(0, 30))             # the oldest load: every column holds a value
        p.run(wide_src(30, 30, dense=True))  # newer loads: only the even columns
        p.run(wide_src(60, 30, dense=True))
        """
    )

    [result] = run(["wide_src"], detectors=("additive",), dry_run=True, dedup=False,
                   project_dir=project.root)

    assert result.error is None, result.error
    [finding] = result.findings
    assert len(finding.columns) == COLUMNS
    import psycopg2

    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        for c in finding.columns:
            # the newest five values of the column, by load then `_dlt_id`, as SQL says
            cur.execute(
                f'SELECT "{c}" FROM "{dataset}".wide WHERE "{c}" IS NOT NULL '
                "ORDER BY _dlt_load_id DESC, _dlt_id NULLS FIRST LIMIT 5"
            )
            assert finding.samples[c] == [r[0] for r in cur.fetchall()], c
        odd = finding.samples["c01"]
        assert len(odd) == 5
        assert all(int(v.rpartition("_")[2]) < 30 for v in odd)  # from the oldest load only
        # one window order for every column: the rows are sorted at most twice (the slice's
        # newest-first LIMIT, and the pick, which PostgreSQL may take from the slice). The
        # sample query as the additive runner builds it (the finding's `reproduce` is a
        # plain SELECT of the sampled rows, not this query)
        axis = TimeAxis("_dlt_load_id", "load_id")
        adapter = PostgresAdapter.offline(dataset)
        query = sample_query(adapter.table("wide"), finding.columns, axis, tiebreak="_dlt_id",
                             since=True, max_rows=DEFAULT_SAMPLE_ROWS)
        since = axis_bound(datetime(2000, 1, 1, tzinfo=timezone.utc), axis)
        cur.execute("EXPLAIN (FORMAT JSON) " + adapter.reproduce(query, [since]))
        nodes = _plan_nodes(cur.fetchone()[0][0]["Plan"])
    assert nodes.count("WindowAgg") <= 2, nodes  # the pick, and `MIN(axis) OVER ()`
    assert nodes.count("Sort") + nodes.count("Incremental Sort") <= 2, nodes
    assert "Limit" in nodes  # the bounded slice
