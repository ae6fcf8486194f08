"""The sharding tests' warehouse: two sources in two real DuckDB files, loaded by dlt twice
(the first load moved three days back), with drift of every shape a shard must keep whole:

- `shop` (`shop_pipe.duckdb`, dataset `shop_data`): `orders` renames `order_date` to
  `sale_date` between the loads (a `rename` folding a removal and an addition); `customers`,
  `refunds` and `stores` gain a column; `products` stays clean.
- `app` (`app_pipe.duckdb`, dataset `app_data`): `users` lands its labels in the child table
  `users__labels`, whose items gain `priority` (drift of the child table, which goes with
  `users`); `events` and `devices` gain a column; `sessions` stays clean.
- `broken`: declared with a ref that does not exist: it cannot be built (one source error).
"""

from __future__ import annotations

import time

import duckdb

from tests.projects import Project

SOURCES = '''
from datetime import date, timedelta
from typing import ClassVar, List, Optional

import dlt
from dlt.common.libs.pydantic import DltConfig
from pydantic import BaseModel

EVOLVE = {"columns": "evolve"}


class Order(BaseModel):
    id: int
    amount: int
    order_date: Optional[date] = None


class Label(BaseModel):
    name: str


class User(BaseModel):
    dlt_config: ClassVar[DltConfig] = {"skip_nested_types": True}

    id: int
    email: Optional[str] = None
    labels: List[Label] = []


class Item(BaseModel):
    id: int
    name: str


@dlt.resource(columns=Order, schema_contract=EVOLVE)
def orders(phase=1):
    for i in range(phase * 100, phase * 100 + 20):
        day = date(2026, 3, 1) + timedelta(days=i % 20)
        yield {"id": i, "amount": 100 + i, ("order_date" if phase == 1 else "sale_date"): day}


@dlt.resource(columns=User, schema_contract=EVOLVE)
def users(phase=1):
    for i in range(phase * 100, phase * 100 + 10):
        label = {"name": f"l{i}"}
        if phase == 2:
            label["priority"] = i
        yield {"id": i, "email": f"u{i}@x.io", "labels": [label]}


def items(name, drifted):
    @dlt.resource(name=name, columns=Item, schema_contract=EVOLVE)
    def rows(phase=1):
        for i in range(phase * 100, phase * 100 + 10):
            row = {"id": i, "name": f"n{i}"}
            if phase == 2 and drifted:
                row[f"{name}_note"] = f"x{i}"
            yield row
    return rows


@dlt.source(name="shop")
def shop(phase=1):
    return (orders(phase), items("customers", True)(phase), items("products", False)(phase),
            items("refunds", True)(phase), items("stores", True)(phase))


@dlt.source(name="app")
def app(phase=1):
    return (users(phase), items("events", True)(phase), items("sessions", False)(phase),
            items("devices", True)(phase))
'''

CONFIG = """
[runtime]
dlthub_telemetry = false

[contract_ops]
alert_sinks = []

[sources.shop.contract_ops]
ref = "wh_sources:shop"
pipeline_name = "shop_pipe"
destination = "duckdb"
dataset_name = "shop_data"

[sources.app.contract_ops]
ref = "wh_sources:app"
pipeline_name = "app_pipe"
destination = "duckdb"
dataset_name = "app_data"

[sources.broken.contract_ops]
ref = "wh_sources:no_such_source"
pipeline_name = "shop_pipe"
destination = "duckdb"
dataset_name = "shop_data"
"""

#: (source, pipeline, dataset) of the loaded sources
LOADED = (("shop", "shop_pipe", "shop_data"), ("app", "app_pipe", "app_data"))

#: the root tables of each loaded source, and the child table
TABLES = {"shop": ("orders", "customers", "products", "refunds", "stores"),
          "app": ("users", "events", "sessions", "devices")}
CHILD = ("app", "users__labels", "users")

#: what every sharding test runs: the default detectors and removal (the rename needs it)
DETECTORS = ("additive", "missing", "type", "removal", "rename")


def _load(project: Project, phase: int) -> None:
    runs = "\n".join(
        f"dlt.pipeline({pipe!r}, destination='duckdb', dataset_name={dataset!r})"
        f".run(wh_sources.{source}(phase={phase}))"
        for source, pipe, dataset in LOADED)
    project.python(f"import dlt\nimport wh_sources\n{runs}\n")


def _age(project: Project, days: float) -> None:
    """Move every load so far `days` into the past: its rows and dlt's record of it."""
    stamp = f"{time.time() - days * 86400:.7f}"
    for _, pipe, dataset in LOADED:
        with duckdb.connect(str(project.root / f"{pipe}.duckdb")) as con:
            tables = [r[0] for r in con.execute(
                "SELECT table_name FROM information_schema.columns WHERE table_schema = ? "
                "AND column_name = '_dlt_load_id'", [dataset]).fetchall()]
            for table in tables:
                con.execute(f'UPDATE {dataset}."{table}" SET _dlt_load_id = ?', [stamp])
            con.execute(f"UPDATE {dataset}._dlt_loads SET load_id = ?", [stamp])


def build(project: Project) -> None:
    """Write the modules and config, load twice for real (the first load aged)."""
    project.module("wh_sources", SOURCES)
    project.config(CONFIG)
    _load(project, 1)
    _age(project, 3)
    _load(project, 2)
