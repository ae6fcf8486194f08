"""A real dlt pipeline loading into a local `file://` bucket, and the drift it leaves.

The project models `events` and `readings` (`SOURCE`). The producer that really loads them
(`LOADER`) has moved on from those models: it never sends `score`, sends `rank` as text, adds
`payload_size` to its second load and `unit` to readings, and stops filling `actor_login`.
The first load is stamped three days back on `loaded_at`, the column removal windows on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.lakehouse import sweeps
from tests.projects import Project

PIPELINE = "telemetry_lake"

SOURCE = """
from datetime import datetime
from typing import Optional

import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    kind: str
    actor_login: Optional[str] = None
    score: Optional[int] = None
    rank: Optional[int] = None
    loaded_at: Optional[datetime] = None


class Reading(BaseModel):
    id: int
    sensor: Optional[str] = None
    value: Optional[float] = None
    loaded_at: Optional[datetime] = None


@dlt.resource(columns=Event, write_disposition="append", table_format=TABLE_FORMAT)
def events():
    yield from ()


@dlt.resource(columns=Reading, write_disposition="append", table_format=TABLE_FORMAT)
def readings():
    yield from ()


@dlt.source(name="telemetry")
def telemetry():
    return events(), readings()
"""

LOADER = """
from datetime import datetime, timedelta, timezone

import dlt


def batch(start, n, when, dark):
    @dlt.resource(name="events", write_disposition="append", table_format=TABLE_FORMAT)
    def events():
        for i in range(start, start + n):
            row = {"id": i, "kind": "push", "rank": f"r{i % 3}", "loaded_at": when,
                   "actor_login": None if dark or i % 5 == 0 else f"user{i}"}
            if dark:
                row["payload_size"] = i * 7
            yield row

    @dlt.resource(name="readings", write_disposition="append", table_format=TABLE_FORMAT)
    def readings():
        for i in range(start, start + n):
            row = {"id": i, "sensor": f"s{i % 4}", "value": i / 2, "loaded_at": when}
            if dark:
                row["unit"] = "C"
            yield row

    @dlt.source(name="telemetry")
    def telemetry():
        return events(), readings()

    return telemetry()


now = datetime.now(timezone.utc)
p = dlt.pipeline(PIPELINE, destination="filesystem", dataset_name=DATASET)
p.run(batch(0, 20, now - timedelta(days=3), False), loader_file_format=FORMAT)
p.run(batch(100, 10, now, True), loader_file_format=FORMAT)
"""


def setup(project: Project, bucket: Path | str, file_format: str, dataset: str = "lake",
          table_format: str | None = None, *, shared_by: str | None = None,
          sinks: Sequence[str] = ()) -> None:
    """The project: source module, `[destination.filesystem]` on `bucket` (a folder, or a
    bucket URL whose credentials the caller configures), the source, both loads; with
    `table_format` (`delta`, `iceberg`) the tables are open tables of that format.

    `shared_by` (a test module's name): the loads into a local folder built once per test
    run for that module's tests and copied (`sweeps.shared`); Iceberg's in a bucket at one
    path (`sweeps.same_path_bucket`), with its catalog. `sinks`: the `alert_sinks` (none:
    nothing is alerted; their own settings are the caller's). Per module: the
    dark load is stamped when it is built, and removal's `first_seen` is that time; a
    module's tests run together, minutes apart at most."""
    project.module("telemetry_src", f"TABLE_FORMAT = {table_format!r}\n" + SOURCE)
    url = bucket.as_uri() if isinstance(bucket, Path) else bucket
    project.config(
        "[runtime]\ndlthub_telemetry = false\n\n"
        f"[contract_ops]\nalert_sinks = {json.dumps(list(sinks))}\n\n"
        f"[destination.filesystem]\nbucket_url = {json.dumps(url)}\n"
    )
    # dlt's pyiceberg path, its catalog in a local SQLite file; on a remote bucket dlt's
    # default in-memory one (it registers each table from its newest metadata file, and
    # hands pyiceberg the credentials' endpoint, which a configured catalog does not get)
    if table_format == "iceberg" and isinstance(bucket, Path):
        catalog = f"sqlite:///{project.root / 'iceberg_catalog.db'}"
        project.config("[iceberg_catalog]\niceberg_catalog_type = \"sql\"\n\n"
                       "[iceberg_catalog.iceberg_catalog_config]\ntype = \"sql\"\n"
                       f"uri = {json.dumps(catalog)}\nwarehouse = {json.dumps(url)}\n")
    project.source("telemetry", "telemetry_src:telemetry", pipeline_name=PIPELINE,
                   destination="filesystem", dataset_name=dataset,
                   load_timestamp_column="loaded_at")
    header = (f"PIPELINE = {PIPELINE!r}\nDATASET = {dataset!r}\n"
              f"FORMAT = {file_format!r}\nTABLE_FORMAT = {table_format!r}\n")

    def load() -> None:
        project.python(header + LOADER)

    if shared_by and isinstance(bucket, Path) and table_format != "iceberg":
        sweeps.shared(project, bucket, PIPELINE, [shared_by, SOURCE, header + LOADER], load)
    elif shared_by and isinstance(bucket, Path):  # Iceberg: at one path, with its catalog
        sweeps.shared(project, bucket, PIPELINE,
                      [shared_by, SOURCE, header + LOADER, str(bucket)], load,
                      files=("iceberg_catalog.db",))
    else:
        load()


def reconcile_json(project: Project, *args: str) -> tuple[int, dict[str, Any], str]:
    """`dlt-contract-ops reconcile ARGS --format json`: (exit code, document, stderr)."""
    proc = project.cli("reconcile", *args, "--format", "json")
    try:
        doc = json.loads(proc.stdout)
    except ValueError as exc:
        raise AssertionError(f"not JSON: {proc.stdout!r}\nstderr: {proc.stderr}") from exc
    return proc.returncode, doc, proc.stderr


def by_kind(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Findings keyed by (drift type, table)."""
    return {(f["drift_type"], f["table"]): f
            for r in doc["results"] for f in r["findings"]}


#: what `telemetry`'s planted batches give: every drift kind the filesystem adapter finds
PLANTED = [
    ("additive", "events"), ("additive", "readings"), ("missing", "events"),
    ("removal", "events"), ("type", "events"),
]


def planted_drift(project: Project) -> tuple[dict[str, Any], dict[tuple[str, str], Any]]:
    """`reconcile -s telemetry --include-removal --dry-run` with no error and exactly the
    `PLANTED` findings: (the document, its findings by kind)."""
    code, doc, stderr = reconcile_json(
        project, "-s", "telemetry", "--include-removal", "--dry-run")
    assert code == 0, stderr
    assert [r["error"] for r in doc["results"]] == [None] * len(doc["results"])
    found = by_kind(doc)
    assert sorted(found) == PLANTED
    return doc, found


def table_files(bucket: Path, table: str, dataset: str = "lake") -> list[Path]:
    """A table's data files, oldest load first."""
    return sorted(p for p in (bucket / dataset / table).iterdir() if p.is_file())
