"""The drift recipe every destination goes through end to end.

A real dlt pipeline loads a healthy batch; out of band, the batch is backdated into the
baseline window (`_dlt_load_id` for `events`, the `loaded_at` timestamp for `readings`);
a second, "dark" batch loads; then SQL adds a column behind the model's back, drops a
declared one and retypes another. `reconcile --include-removal` must report all four kinds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.destinations.servers import Backend, unique
from tests.projects import Project

SOURCE = """
from datetime import datetime, timezone
from typing import Optional

import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    kind: str
    actor_login: Optional[str] = None
    score: Optional[int] = None
    rank: Optional[int] = None


class Reading(BaseModel):
    id: int
    sensor: Optional[str] = None
    value: Optional[float] = None


@dlt.resource(columns=Event, write_disposition="append", schema_contract={"columns": "evolve"})
def events(start=0, n=20, dark=False):
    for i in range(start, start + n):
        yield {"id": i, "kind": "push", "score": i, "rank": i % 3,
               "actor_login": None if dark or i % 5 == 0 else f"user{i}"}


@dlt.resource(columns=Reading, write_disposition="append", schema_contract={"columns": "evolve"})
def readings(start=0, n=20, dark=False):
    for i in range(start, start + n):
        yield {"id": i, "sensor": None if dark else f"s{i % 4}", "value": i / 2,
               "loaded_at": datetime.now(timezone.utc)}


@dlt.source(name="telemetry")
def telemetry(start=0, n=20, dark=False):
    return events(start, n, dark), readings(start, n, dark)
"""

PIPELINE = "telemetry_pipe"


def wide_source(field: str) -> str:
    """A source module `wide_src` whose one resource `wide` declares `id` and the long
    `field` (a name dlt may shorten to the destination's limit), three rows."""
    return f"""
import dlt
from pydantic import BaseModel


class Wide(BaseModel):
    id: int
    {field}: str


@dlt.resource(columns=Wide)
def wide():
    yield [{{"id": i, "{field}": "x"}} for i in range(3)]


@dlt.source(name="wide_src")
def wide_src():
    return wide
"""


def setup(
    project: Project,
    backend: Backend,
    dataset: str,
    source: str = "telemetry",
    pipeline: str = PIPELINE,
    sinks: tuple[str, ...] = (),
    scoped: bool = False,
) -> None:
    """Write the source module, config and secrets (pipeline-scoped when `scoped`)."""
    project.module("telemetry_src", SOURCE)
    if not (project.root / ".dlt" / "config.toml").exists():
        project.config(f"[contract_ops]\nalert_sinks = {json.dumps(list(sinks))}\n")
    project.secrets(backend.secrets(pipeline if scoped else None))
    project.source(
        source,
        "telemetry_src:telemetry",
        pipeline_name=pipeline,
        destination=backend.destination,
        dataset_name=dataset,
        load_timestamp_column="loaded_at",
    )


def load(
    project: Project, dataset: str, backend: Backend, pipeline: str = PIPELINE, **kwargs: Any
) -> None:
    """Run the real pipeline in a fresh interpreter (credentials from secrets.toml)."""
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    project.python(
        f"""
        import dlt
        from telemetry_src import telemetry
        p = dlt.pipeline({pipeline!r}, destination={backend.destination!r},
                         dataset_name={dataset!r})
        p.run(telemetry({args}))
        """
    )


def retype_rank(backend: Backend, table: str) -> list[str]:
    """SQL that turns the declared integer `rank` into text, the backend's way."""
    if backend.kind == "postgres":
        return [f"ALTER TABLE {table} ALTER COLUMN rank TYPE text USING rank::text"]
    if backend.kind == "mariadb":
        return [f"ALTER TABLE {table} MODIFY `rank` VARCHAR(20)"]
    if backend.kind == "duckdb":
        return [f"ALTER TABLE {table} ALTER rank TYPE VARCHAR"]
    # SQLite cannot change a column's type: drop and re-add it
    return [f"ALTER TABLE {table} DROP COLUMN rank", f"ALTER TABLE {table} ADD COLUMN rank TEXT"]


def make_history_and_drift(project: Project, backend: Backend, dataset: str) -> None:
    """The whole recipe: healthy load, backdate, dark load, out-of-band schema surgery."""
    load(project, dataset, backend, n=20)
    events, readings = backend.q(dataset, "events"), backend.q(dataset, "readings")
    old_load_id = f"{time.time() - 3 * 86400:.7f}"
    p = backend.param
    backend.execute(dataset, [
        (f"UPDATE {events} SET _dlt_load_id = {p}", [old_load_id]),
        (f"UPDATE {readings} SET loaded_at = {p}", [backend.days_ago(3)]),
    ])
    load(project, dataset, backend, start=100, n=10, dark=True)
    backend.execute(dataset, [
        f"ALTER TABLE {events} ADD COLUMN payload_size BIGINT",
        f"UPDATE {events} SET payload_size = id * 7",
        f"ALTER TABLE {events} DROP COLUMN score",
        *retype_rank(backend, events),
    ])


@contextmanager
def drifted_dataset(project: Project, backend: Backend, prefix: str) -> Iterator[str]:
    """A fresh dataset after the whole recipe (`make_history_and_drift`), dropped after."""
    dataset = unique(prefix)
    setup(project, backend, dataset)
    try:
        make_history_and_drift(project, backend, dataset)
        yield dataset
    finally:
        backend.drop_dataset(dataset)


def reconcile_json(project: Project, *args: str) -> tuple[int, dict[str, Any], str]:
    """`dlt-contract-ops reconcile ARGS --format json`: (exit code, document, stderr)."""
    proc = project.cli("reconcile", *args, "--format", "json")
    try:
        doc = json.loads(proc.stdout)
    except ValueError as exc:
        raise AssertionError(f"not JSON: {proc.stdout!r}\nstderr: {proc.stderr}") from exc
    return proc.returncode, doc, proc.stderr


def by_kind(doc: dict[str, Any], source: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Findings of `source` keyed by (drift type, resource)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for result in doc["results"]:
        if result["source"] != source:
            continue
        for finding in result["findings"]:
            out[(finding["drift_type"], finding["resource"])] = finding
    return out
