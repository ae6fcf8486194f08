"""A small dlt project for the plugin tests: a source and a standalone resource, each loaded
into DuckDB by a pipeline named otherwise (`shop_pipeline`, `events_pipeline`), then drifted.

Loaded by real dlt pipelines in a subprocess, in the project folder, with the data dir the
caller sets; the tests copy the project and the data dir (pipelines' local state) together.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.projects import Project

SHOP_PIPELINE = "shop_pipeline"
SHOP_DATASET = "shop_data"
EVENTS_PIPELINE = "events_pipeline"
EVENTS_DATASET = "events_data"
#: the column added out of band to `orders`: additive drift
DRIFTED = "coupon_code"
#: written by `pipelines/run_on_import.py` when it is imported (it runs a pipeline then)
MARKER = "imported.marker"

SHOP = '''
"""The shop: a source with two modelled resources, a standalone resource, and sources that
`init` must skip or report."""

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    amount: float


class Customer(BaseModel):
    id: int
    name: str


class Event(BaseModel):
    id: int
    kind: str


class Ghost(BaseModel):
    id: int


@dlt.resource(columns=Order)
def orders():
    yield [{"id": i, "amount": 1.5 * i} for i in range(5)]


@dlt.resource(columns=Customer)
def customers():
    yield [{"id": i, "name": f"c{i}"} for i in range(3)]


@dlt.resource(columns=Event, table_name="events")
def events():
    yield [{"id": i, "kind": "click"} for i in range(3)]


@dlt.resource
def untyped():
    yield {"id": 1}


@dlt.resource(columns=Ghost)
def ghosts():
    yield {"id": 1}


@dlt.source
def shop():
    return orders, customers


@dlt.source
def needs_token(token):
    return orders


@dlt.source
def no_models():
    return untyped


@dlt.source
def ghost():
    return ghosts
'''

#: a module that defines a resource and runs its pipeline at import time: `init` must not
#: import it
RUN_ON_IMPORT = f'''
from pathlib import Path

import dlt
from pydantic import BaseModel


class Row(BaseModel):
    id: int


@dlt.resource(columns=Row, table_name="t")
def rows():
    yield {{"id": 1}}


Path(__file__).resolve().parent.parent.joinpath("{MARKER}").write_text("imported")
dlt.pipeline("never_pipeline", destination="duckdb").run(rows())
'''

LOAD = f"""
import dlt
from pipelines.shop import events, shop

dlt.pipeline("{SHOP_PIPELINE}", destination="duckdb", dataset_name="{SHOP_DATASET}").run(shop())
dlt.pipeline("{EVENTS_PIPELINE}", destination="duckdb", dataset_name="{EVENTS_DATASET}").run(
    events()
)
"""


def build(project: Project) -> None:
    project.module("pipelines.shop", SHOP)
    project.config("[runtime]\ndlthub_telemetry = false\n")


def load(project: Project) -> None:
    """Run the real pipelines (in a subprocess, which leaves no DuckDB file open here)."""
    project.python(LOAD)
    project.module("pipelines.run_on_import", RUN_ON_IMPORT)


def drift(root: Path) -> None:
    """Add `coupon_code` to `orders` out of band, as an engineer patching the warehouse."""
    with duckdb.connect(str(root / f"{SHOP_PIPELINE}.duckdb")) as con:
        con.execute(f"ALTER TABLE {SHOP_DATASET}.orders ADD COLUMN {DRIFTED} VARCHAR")
        con.execute(f"UPDATE {SHOP_DATASET}.orders SET {DRIFTED} = 'C' || id")
