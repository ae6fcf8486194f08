"""A small real project for end-to-end sink tests: one source, one resource, loaded into
DuckDB by a real dlt pipeline, then drifted out of band (a column added behind the model)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.projects import Project

PIPELINE = "app_pipeline"
DATASET = "app_raw"
DB_FILE = f"{PIPELINE}.duckdb"

APP = '''
import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    kind: str


@dlt.resource(name="events", columns=Event)
def events():
    yield [{"id": i, "kind": "click"} for i in range(5)]


@dlt.source(name="app")
def app():
    return events
'''

CONFIG = f"""
[runtime]
dlthub_telemetry = false

[sources.app.contract_ops]
ref = "pipelines.app:app"
pipeline_name = "{PIPELINE}"
destination = "duckdb"
dataset_name = "{DATASET}"
"""

LOAD = f"""
import dlt
from pipelines.app import app

dlt.pipeline("{PIPELINE}", destination="duckdb", dataset_name="{DATASET}").run(app())
"""


def build_and_load(project: Project) -> None:
    """Write the project, run the pipeline in a subprocess, add `payload size` out of band."""
    project.module("pipelines.app", APP)
    project.config(CONFIG)
    project.python(LOAD)
    with duckdb.connect(str(project.root / DB_FILE)) as con:
        con.execute(f'ALTER TABLE {DATASET}.events ADD COLUMN "payload size" BIGINT')
        con.execute(f'UPDATE {DATASET}.events SET "payload size" = 500 + id')


def add_column(root: Path, name: str) -> None:
    """More drift: another column on the same table (a different finding key)."""
    quoted = '"' + name.replace('"', '""') + '"'
    with duckdb.connect(str(root / DB_FILE)) as con:
        con.execute(f"ALTER TABLE {DATASET}.events ADD COLUMN {quoted} VARCHAR")
