"""A shop source whose batches are built to shape: steady noise, or one drifted load."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from tests.duckdb_baselines import load_duckdb, shared_loads
from tests.projects import Project

SOURCE = """
from typing import Literal, Optional

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    status: Literal["new", "paid", "shipped", "other"]
    region: Optional[str] = None
    code: Optional[str] = None
    note: Optional[str] = None
    amount: Optional[float] = None


def rows(batch, n, drift=(), start=0):
    for i in range(n):
        k = start + batch * 1000 + i
        wobble = (batch * 7 + i) % 10  # steady noise: shares move a little per batch
        status = "new" if wobble < 5 else "paid" if wobble < 8 else "shipped"
        if "other" in drift and i % 25 == 0:
            status = "other"  # 4% of rows fall into the default bucket
        region = "eu" if (i + batch) % 3 else "us"
        if "region" in drift and i % 2 == 0:
            region = "apac"
        yield {
            "id": k,
            "status": status,
            "region": region,
            "code": "same" if "code" in drift else f"c{k}",
            "note": None if ("note" in drift and i % 5) or (i + batch) % 10 == 0 else "n",
            "amount": float(i % 17) + batch / 10,
        }


@dlt.source(name="shop")
def shop(batch=0, n=100, drift=(), disposition="append", start=0):
    hints = {"primary_key": "id"} if disposition == "merge" else {}
    return dlt.resource(
        rows(batch, n, drift, start), name="orders", columns=Order,
        write_disposition=disposition, **hints,
    )
"""

DATASET = "shop_data"
PIPELINE = "shop_pipe"


def load(
    project: Project, *batches: dict[str, Any], destination: str = "duckdb",
    dataset: str = DATASET,
) -> None:
    """Run the pipeline once per batch (keyword arguments of `shop`); into DuckDB with the
    baseline shared (`load_duckdb`)."""
    def run(some: Sequence[dict[str, Any]]) -> None:
        _run_loads(project, some, destination, dataset)

    if destination == "duckdb":
        load_duckdb(project, batches, pipeline=PIPELINE, module="shop_mod.py", dataset=dataset,
                    run=run)
    else:
        run(batches)


def load_baseline(project: Project, *batches: dict[str, Any]) -> None:
    """The first loads into DuckDB of a test that is about what follows them (its sweeps,
    its own later loads, its config): all of them shared (`shared_loads`)."""
    shared_loads(project, batches, pipeline=PIPELINE, module="shop_mod.py", dataset=DATASET,
                 run=lambda some: _run_loads(project, some, "duckdb", DATASET))


def _run_loads(project: Project, batches: Sequence[dict[str, Any]], destination: str,
               dataset: str) -> None:
    """The batches through dlt, in one interpreter."""
    project.python(
        f"""
        import json, dlt
        from shop_mod import shop
        p = dlt.pipeline({PIPELINE!r}, destination={destination!r}, dataset_name={dataset!r})
        for kw in json.loads({json.dumps(json.dumps(list(batches)))}):
            p.run(shop(**kw))
        """
    )


@pytest.fixture
def shop(project: Project) -> Project:
    project.module("shop_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("shop", "shop_mod:shop", pipeline_name="shop_pipe", dataset_name=DATASET)
    return project
