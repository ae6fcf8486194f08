"""A realistic shop project for integration tests: two sources sharing one DuckDB dataset.

Loaded by real dlt pipelines in a subprocess (so this process never holds the DuckDB file),
then drifted out of band with DuckDB SQL, the way an engineer hand-patches a warehouse.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import duckdb

from tests.projects import Project

PIPELINE = "shop_pipeline"
DATASET = "shop_raw"
DB_FILE = f"{PIPELINE}.duckdb"  # dlt's default file name for the pipeline; not the dataset's
CALLS_LOG = "calls.log"  # the source modules append "import <module>" / "call <source>"

SHOP = '''
"""Orders and friends. Resource names and aliases are the odd ones on purpose."""

from pathlib import Path
from typing import Optional

import dlt
from pydantic import BaseModel, Field

_LOG = Path(__file__).resolve().parent.parent / "calls.log"
with _LOG.open("a") as _f:
    _f.write("import pipelines.shop\\n")


class OrderItem(BaseModel):
    id: int
    sku: str
    unitPrice: float  # lands as unit_price
    note: Optional[str] = Field(default=None, alias="customerNote")  # lands as customer_note


class Plain(BaseModel):
    id: int
    name: str


class Clean(BaseModel):
    id: int
    label: str


class Pending(BaseModel):
    id: int


@dlt.resource(name="OrderItems", columns=OrderItem)
def order_items():
    for i in range(8):
        yield {"id": i, "sku": f"sku-{i}", "unitPrice": 1.5 * i,
               "customerNote": None if i % 2 else f"note {i}"}


@dlt.resource(columns=Plain, table_name="plain_tbl")
def plain():
    yield [{"id": i, "name": f"n{i}"} for i in range(6)]


@dlt.resource(columns=Clean)
def clean():
    yield [{"id": i, "label": f"l{i}"} for i in range(3)]


@dlt.resource
def no_model():
    yield {"id": 1, "anything": "goes"}


@dlt.resource(columns=Pending)
def pending():
    yield {"id": 1}


@dlt.source(name="shop")
def shop():
    with _LOG.open("a") as f:
        f.write("call shop\\n")
    return order_items, plain, clean, no_model, pending


@dlt.source(name="shop_clean")
def shop_clean():
    with _LOG.open("a") as f:
        f.write("call shop_clean\\n")
    return clean
'''

SHOP_EXTRA = '''
"""A second source landing in the same dataset."""

from pathlib import Path

import dlt
from pydantic import BaseModel

_LOG = Path(__file__).resolve().parent.parent / "calls.log"
with _LOG.open("a") as _f:
    _f.write("import pipelines.shop_extra\\n")


class Refund(BaseModel):
    id: int
    amount: float


@dlt.resource(columns=Refund)
def refunds():
    yield [{"id": i, "amount": 2.0 * i} for i in range(4)]


@dlt.source(name="shop_extra")
def shop_extra():
    with _LOG.open("a") as f:
        f.write("call shop_extra\\n")
    return refunds
'''

CONFIG = f"""
[runtime]
dlthub_telemetry = false

[contract_ops]
injected_columns = ["ingested_by"]
load_timestamp_column = "loaded_at"

[sources.shop.contract_ops]
ref = "pipelines.shop:shop"
pipeline_name = "{PIPELINE}"
destination = "duckdb"
dataset_name = "{DATASET}"
injected_columns = ["tenantId"]

[sources.shop_extra.contract_ops]
ref = "pipelines.shop_extra:shop_extra"
pipeline_name = "{PIPELINE}"
destination = "duckdb"
dataset_name = "{DATASET}"

[sources.shop_clean.contract_ops]
ref = "pipelines.shop:shop_clean"
pipeline_name = "{PIPELINE}"
destination = "duckdb"
dataset_name = "{DATASET}"
"""

LOAD = f"""
import dlt
from pipelines.shop import shop
from pipelines.shop_extra import shop_extra

pipeline = dlt.pipeline("{PIPELINE}", destination="duckdb", dataset_name="{DATASET}")
pipeline.run(shop().with_resources("OrderItems", "plain", "clean", "no_model"))
pipeline.run(shop_extra())
"""

#: the time axis of `order_items`: row `id` was loaded at T0 + id hours
T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)

#: drifted columns of order_items, created quoted, and which rows hold a value
ORDER_DRIFT: dict[str, tuple[str, str, str]] = {
    # name: (type, value expression, rows holding a value)
    "ip-address": ("VARCHAR", "'10.0.0.' || id", "id % 2 = 0 AND id > 0"),
    'Weird "Name"': ("VARCHAR", "'w' || id", "id >= 1"),
    "größe": ("INTEGER", "id * 10", "id % 3 = 0 AND id > 0"),
    "userId": ("VARCHAR", "'U' || id", "id = 5"),
}


def order_value(column: str, row_id: int) -> object | None:
    """The value `drift()` gives `column` in row `row_id` (None where it holds none)."""
    holds = {
        "ip-address": row_id % 2 == 0 and row_id > 0,
        'Weird "Name"': row_id >= 1,
        "größe": row_id % 3 == 0 and row_id > 0,
        "userId": row_id == 5,
    }[column]
    if not holds:
        return None
    return {
        "ip-address": f"10.0.0.{row_id}",
        'Weird "Name"': f"w{row_id}",
        "größe": row_id * 10,
        "userId": f"U{row_id}",
    }[column]


def quote(name: str) -> str:
    """A DuckDB identifier for the out-of-band drift statements (test data, not product SQL)."""
    return '"' + name.replace('"', '""') + '"'


def build(project: Project) -> None:
    """Write the shop project's modules and config."""
    project.module("pipelines.shop", SHOP)
    project.module("pipelines.shop_extra", SHOP_EXTRA)
    project.config(CONFIG)


def load(project: Project) -> None:
    """Run the real pipeline in a subprocess (the test process never holds the file)."""
    proc = project.python(LOAD, check=False)
    assert proc.returncode == 0, proc.stderr


def drift(root: Path) -> None:
    """Hand-patch the warehouse: drifted, injected, system and load-timestamp columns."""
    orders = f"{DATASET}.order_items"
    with duckdb.connect(str(root / DB_FILE)) as con:
        for name, (sql_type, value, where) in ORDER_DRIFT.items():
            con.execute(f"ALTER TABLE {orders} ADD COLUMN {quote(name)} {sql_type}")
            con.execute(f"UPDATE {orders} SET {quote(name)} = {value} WHERE {where}")
        # never drift: the project's and the source's injected columns, dlt's prefix, the
        # load timestamp column (which is also the table's time axis)
        for name, sql_type in (
            ("ingested_by", "VARCHAR"),
            ("tenant_id", "VARCHAR"),
            ("_dlt_extra", "VARCHAR"),
            ("loaded_at", "TIMESTAMPTZ"),
        ):
            con.execute(f"ALTER TABLE {orders} ADD COLUMN {name} {sql_type}")
        con.execute(f"UPDATE {orders} SET ingested_by = 'etl', tenant_id = 't1', _dlt_extra = 'x'")
        con.execute(
            f"UPDATE {orders} SET loaded_at = ?::TIMESTAMPTZ + id * INTERVAL 1 HOUR", [T0]
        )
        # plain_tbl has no load timestamp: its time axis is dlt's _dlt_load_id
        con.execute(f"ALTER TABLE {DATASET}.plain_tbl ADD COLUMN extra_col BIGINT")
        con.execute(f"UPDATE {DATASET}.plain_tbl SET extra_col = id * 100 WHERE id >= 2")
        con.execute(f"ALTER TABLE {DATASET}.refunds ADD COLUMN reason_code VARCHAR")
        con.execute(f"UPDATE {DATASET}.refunds SET reason_code = 'R' || id")


def hours(n: int) -> datetime:
    return T0 + timedelta(hours=n)


def calls(root: Path) -> list[str]:
    """Lines the source modules wrote since the last `reset_calls`."""
    path = root / CALLS_LOG
    return path.read_text().splitlines() if path.exists() else []


def reset_calls(root: Path) -> None:
    (root / CALLS_LOG).unlink(missing_ok=True)
