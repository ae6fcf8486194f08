"""Child tables (`users__labels`) compared with the nested models that make them.

A model with `labels: list[Label]` and `dlt_config = {"skip_nested_types": True}` (as in dlt's
own `test_pydantic_columns_with_contracts`) lands its labels in the child table
`users__labels`, which has no `_dlt_load_id`: it is windowed through its link column to the
root row's load. Through real dlt pipelines into DuckDB and PostgreSQL.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import ReconcileResult
from tests.conftest import require_server
from tests.destinations.plain import plain_select
from tests.duckdb_baselines import is_fresh, shared_loads
from tests.projects import Project

SOURCE = """
from typing import ClassVar, List, Optional

import dlt
from dlt.common.libs.pydantic import DltConfig
from pydantic import BaseModel


class Label(BaseModel):
    name: str
    color: Optional[str] = None


class User(BaseModel):
    dlt_config: ClassVar[DltConfig] = {"skip_nested_types": True}

    id: int
    email: Optional[str] = None
    labels: List[Label] = []


@dlt.resource(columns=User, schema_contract={"columns": "evolve"})
def users(start=0, n=10, dark_color=False, priority=False):
    for i in range(start, start + n):
        label = {"name": f"l{i}", "color": None if dark_color else "red"}
        if priority:
            label["priority"] = i  # a column the Label model does not declare
        yield {"id": i, "email": f"u{i}@x.io", "labels": [label, dict(label, name=f"m{i}")]}


@dlt.source(name="people")
def people(disposition="append", **kw):
    res = users(**kw)
    if disposition == "merge":  # dlt gives the child rows `_dlt_root_id`
        res.apply_hints(write_disposition="merge", primary_key="id")
    return res
"""

PG = "postgresql://postgres:x@127.0.0.1:5432/test"


@dataclass
class Loaded:
    """The `people` source declared against a dataset of its own on one destination."""

    project: Project
    destination: str
    dataset: str

    def load(self, *batches: dict[str, Any]) -> None:
        """The batches through dlt, in one interpreter. The first loads into a fresh DuckDB
        project (all batches but the last, or the one) are built once per test run and
        copied (`tests/duckdb_baselines.py`: several tests start from the same load)."""
        if self.destination == "duckdb" and is_fresh(self.project, "people_pipe"):
            shared = batches[:-1] if len(batches) > 1 else batches
            shared_loads(self.project, shared, pipeline="people_pipe", module="people_mod.py",
                         dataset=self.dataset, run=self._run)
            batches = batches[len(shared):]
        if batches:
            self._run(batches)

    def _run(self, batches: Sequence[dict[str, Any]]) -> None:
        self.project.python(
            f"""
            import json, dlt
            from people_mod import people
            p = dlt.pipeline("people_pipe", destination={self.destination!r},
                             dataset_name={self.dataset!r})
            for kw in json.loads({json.dumps(json.dumps(list(batches)))}):
                p.run(people(**kw))
            """
        )

    def sql(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The warehouse changed by hand, as the test's own writer (never the tool)."""
        if self.destination == "duckdb":
            import duckdb

            con = duckdb.connect(str(self.project.root / "people_pipe.duckdb"))
            try:
                return con.execute(statement.replace("%s", "?"), list(params)).fetchall()
            finally:
                con.close()
        import psycopg2

        with psycopg2.connect(PG.replace(":x@", "@")) as con, con.cursor() as cur:
            cur.execute(statement, params)
            return list(cur.fetchall()) if cur.description else []

    def backdate(self, days: float = 3) -> None:
        """Move every load so far into the baseline window (the root table holds the load
        ids; the child rows follow their root rows)."""
        old = f"{time.time() - days * 86400:.7f}"
        self.sql(f'UPDATE "{self.dataset}".users SET _dlt_load_id = %s', (old,))

    def sweep(self, *detectors: str) -> dict[str, ReconcileResult]:
        results = run(["people"], detectors=detectors, dry_run=True,
                      project_dir=self.project.root)
        assert [r.error for r in results if r.error] == []
        return {r.detector: r for r in results}


@pytest.fixture(params=["duckdb", "postgres"])
def loaded(request: pytest.FixtureRequest, project: Project) -> Iterator[Loaded]:
    destination = request.param
    # DuckDB: a file of the test's own, so one name serves all (and a baseline copies)
    dataset = "people_data" if destination == "duckdb" else f"people_{uuid.uuid4().hex[:8]}"
    if destination == "postgres":
        require_server("127.0.0.1", 5432, "PostgreSQL")
        project.secrets(f'[destination.postgres]\ncredentials = "{PG}"\n')
    project.module("people_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("people", "people_mod:people", pipeline_name="people_pipe",
                   destination=destination, dataset_name=dataset)
    out = Loaded(project, destination, dataset)
    try:
        yield out
    finally:
        if destination == "postgres":
            out.sql(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')
            out.sql(f'DROP SCHEMA IF EXISTS "{dataset}_staging" CASCADE')


def _found(result: ReconcileResult) -> list[tuple[str, list[str]]]:
    return [(f.table, f.columns) for f in result.findings]


def test_a_column_added_in_a_child_table_is_additive_drift(loaded: Loaded) -> None:
    loaded.load({"n": 10}, {"start": 100, "n": 5, "priority": True})

    result = loaded.sweep("additive")["additive"]

    assert _found(result) == [("users__labels", ["priority"])]
    [finding] = result.findings
    assert finding.resource == "users"
    assert len(finding.samples["priority"]) == 5
    assert set(finding.samples["priority"]) <= set(range(100, 105))
    assert finding.first_seen is not None  # the root row's load, read through the link
    assert not any("not checked" in n for n in result.notes)
    # pasted, the reproduce returns the sampled rows: each beside its root row's load,
    # newest first, read plainly (no window function, no CASE)
    plain_select(finding.reproduce or "", loaded.destination)
    rows = loaded.sql(finding.reproduce or "")
    assert [r[0] for r in rows] == finding.samples["priority"]
    assert {r[1] for r in rows} == {max(r[0] for r in loaded.sql(
        f'SELECT _dlt_load_id FROM "{loaded.dataset}".users'))}


@pytest.mark.parametrize("disposition", ["append", "merge"])
def test_a_declared_child_field_going_dark_is_removal_drift(
    loaded: Loaded, disposition: str
) -> None:
    """Windowed through `_dlt_parent_id` (append) or `_dlt_root_id` (merge)."""
    loaded.load({"n": 10, "disposition": disposition})
    loaded.backdate()
    loaded.load({"start": 100, "n": 5, "dark_color": True, "disposition": disposition})

    result = loaded.sweep("removal")["removal"]

    assert _found(result) == [("users__labels", ["color"])]
    [finding] = result.findings
    assert finding.coverage is not None
    assert (finding.coverage["color"].baseline, finding.coverage["color"].recent) == (1.0, 0.0)
    # the reproduce query runs as pasted and shows the collapse: 20 labels, then 10 dark
    windows = {r[0]: (int(r[1]), int(r[2])) for r in loaded.sql(finding.reproduce or "")}
    assert windows == {"baseline": (20, 20), "recent": (10, 0)}
    link = "_dlt_root_id" if disposition == "merge" else "_dlt_parent_id"
    assert f'"c"."{link}" = "r"."_dlt_id"' in (finding.reproduce or "")


def test_a_healthy_child_table_has_no_drift(loaded: Loaded) -> None:
    loaded.load({"n": 10})
    loaded.backdate()
    loaded.load({"start": 100, "n": 5})

    results = loaded.sweep("additive", "missing", "type", "removal")

    assert {d: _found(r) for d, r in results.items()} == {
        "additive": [], "missing": [], "type": [], "removal": []}


def test_a_young_pipeline_is_told_it_has_no_baseline_yet(loaded: Loaded) -> None:
    """All loads inside the recent window: removal cannot judge yet, and says until when."""
    from dlt_contract_ops.output.text import to_json, to_text

    loaded.load({"n": 10}, {"start": 100, "n": 5, "dark_color": True})
    [oldest] = loaded.sql(f'SELECT MIN(_dlt_load_id) FROM "{loaded.dataset}".users')[0]
    when = datetime.fromtimestamp(float(oldest), timezone.utc) + timedelta(hours=6)

    result = loaded.sweep("removal")["removal"]

    assert result.findings == []
    expected = [
        f"table `{t}`: no baseline yet (every row is in the recent window of 6h): removal and "
        f"rename cannot judge it before {when:%Y-%m-%d %H:%M} UTC, when its oldest load leaves "
        "the recent window"
        for t in ("users", "users__labels")
    ]
    assert [n for n in result.notes if "no baseline yet" in n] == expected
    assert json.loads(to_json([result]))["results"][0]["notes"] == result.notes
    assert expected[1] in to_text([result])
