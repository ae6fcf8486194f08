"""Mixed-case and odd identifiers on PostgreSQL: a resource named `OrderItems`, a dataset
named with capitals, a camelCase model field, and columns added out of band named
`ip-address`, `Weird "Name"`, `größe` and `userId`. Odd names are data: each is found,
sampled and quoted so the reproduce query runs as pasted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.destinations import scenario
from tests.destinations.servers import Backend, postgres, unique
from tests.projects import Project

SHOP = """
from datetime import datetime, timedelta, timezone
from typing import Optional

import dlt
from pydantic import BaseModel


class OrderItem(BaseModel):
    order_id: int
    startTime: datetime  # lands as start_time: no drift
    sku: Optional[str] = None


@dlt.resource(columns=OrderItem, write_disposition="append")
def OrderItems():
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    for i in range(8):
        yield {"order_id": i, "startTime": start + timedelta(hours=i), "sku": f"SKU-{i}"}


@dlt.source(name="shop")
def shop():
    return OrderItems()
"""

ODD = {
    "ip-address": ("text", "'10.0.0.' || order_id"),
    'Weird "Name"': ("text", "'w' || order_id"),
    "größe": ("integer", "order_id * 10"),
    "userId": ("text", "'U' || order_id"),
}


@pytest.fixture
def odd_shop(project: Project) -> Iterator[tuple[Project, Backend, str]]:
    pg = postgres()
    pg.require()
    requested = unique("Shop_RAW")  # dlt normalizes it to lower case at the destination
    dataset = requested.lower()
    project.module("shop_src", SHOP)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.secrets(pg.secrets())
    project.source("shop", "shop_src:shop", pipeline_name="shop_pipe", destination="postgres",
                   dataset_name=requested)
    try:
        project.python(
            f"""
            import dlt
            from shop_src import shop
            dlt.pipeline("shop_pipe", destination="postgres", dataset_name={requested!r}).run(
                shop()
            )
            """
        )
        table = pg.q(dataset, "order_items")
        statements: list[str] = []
        for name, (sql_type, value) in ODD.items():
            statements += [f"ALTER TABLE {table} ADD COLUMN {pg.q(name)} {sql_type}",
                           f"UPDATE {table} SET {pg.q(name)} = {value}"]
        pg.execute(dataset, statements)
        yield project, pg, dataset
    finally:
        pg.drop_dataset(dataset)


def test_odd_identifiers_are_found_sampled_and_quoted(
    odd_shop: tuple[Project, Backend, str],
) -> None:
    project, pg, dataset = odd_shop
    code, doc, stderr = scenario.reconcile_json(
        project, "-s", "shop", "--include-removal", "--dry-run"
    )
    assert code == 0, stderr
    assert all(r["error"] is None for r in doc["results"])
    assert {r["dataset"] for r in doc["results"]} == {dataset}
    found = scenario.by_kind(doc, "shop")
    assert sorted(found) == [("additive", "OrderItems")]  # start_time is not drift
    finding = found[("additive", "OrderItems")]
    assert finding["table"] == "order_items"
    assert sorted(finding["columns"]) == sorted(ODD)
    assert finding["column_types"] == {
        "ip-address": "TEXT", 'Weird "Name"': "TEXT", "größe": "INTEGER", "userId": "TEXT"
    }
    assert set(finding["samples"]["größe"]) <= {i * 10 for i in range(8)}
    assert len(finding["samples"]["größe"]) == 5
    assert len(finding["samples"]["Weird \"Name\""]) == 5
    assert all(v.startswith("10.0.0.") for v in finding["samples"]["ip-address"])

    sql = finding["reproduce"]
    for quoted in ('"ip-address"', '"Weird ""Name"""', '"größe"', '"userId"'):
        assert quoted in sql
    [rows] = pg.execute(dataset, [sql])
    assert len(rows) == 5
    width = len(finding["columns"])
    assert all(all(v is not None for v in row[:width]) for row in rows)
