"""The project every format test renders: the shop (additive drift, odd names) plus an
events source whose `actor_login` went dark (removal drift) and whose table gained a column
named to break HTML, XML and workflow commands.

Loaded by real dlt pipelines into DuckDB, drifted out of band with SQL.
"""

from __future__ import annotations

import time

import duckdb

from tests.integration import shop
from tests.projects import Project

EVENTS = '''
from datetime import datetime, timezone
from typing import Optional

import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    kind: str
    actor_login: Optional[str] = None


@dlt.resource(columns=Event, write_disposition="append", schema_contract={"columns": "evolve"})
def events(start=0, n=20, dark=False):
    for i in range(start, start + n):
        yield {"id": i, "kind": "push", "actor_login": None if dark else f"user{i}",
               "loaded_at": datetime.now(timezone.utc)}


@dlt.source(name="events_src")
def events_src(start=0, n=20, dark=False):
    return events(start, n, dark)
'''

EVENTS_CONFIG = """
[sources.events_src.contract_ops]
ref = "events_mod:events_src"
pipeline_name = "events_pipe"
destination = "duckdb"
dataset_name = "events_data"
"""

#: an additive column on `events` whose name is markup, quotes and command syntax at once
NASTY = "<img src=x onerror=alert(1)> \"q\" 'a' & ü,b:c%25 </td>"


def _load_events(project: Project, **kwargs: object) -> None:
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    project.python(
        f"""
        import dlt
        from events_mod import events_src
        p = dlt.pipeline("events_pipe", destination="duckdb", dataset_name="events_data")
        p.run(events_src({args}))
        """
    )


def add_events(project: Project) -> None:
    """Into the loaded, drifted shop (`tests.warehouses.loaded_formats`): declare, load and
    drift the events source (the caller isolates DLT_DATA_DIR)."""
    project.module("events_mod", EVENTS)
    config = project.root / ".dlt" / "config.toml"  # the shop's, declared before the copy
    config.write_text(config.read_text() + "\n" + EVENTS_CONFIG)
    _load_events(project, n=20)
    # the healthy batch moves into the baseline window (3 days ago); the dark batch is recent
    with duckdb.connect(str(project.root / "events_pipe.duckdb")) as con:
        con.execute("UPDATE events_data.events SET loaded_at = loaded_at - INTERVAL 3 DAY")
        con.execute(
            'UPDATE events_data.events SET "_dlt_load_id" = ?', [f"{time.time() - 3 * 86400:.7f}"]
        )
    _load_events(project, start=20, n=20, dark=True)
    with duckdb.connect(str(project.root / "events_pipe.duckdb")) as con:
        con.execute(f"ALTER TABLE events_data.events ADD COLUMN {shop.quote(NASTY)} VARCHAR")
        con.execute(f"UPDATE events_data.events SET {shop.quote(NASTY)} = '<b>v</b>' WHERE id = 3")


def load_healthy_events(project: Project) -> None:
    """A recent load with `actor_login` filled again: the removal drift is gone."""
    _load_events(project, start=40, n=20)
