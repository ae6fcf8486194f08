"""The query budget of a sweep, counted (not timed) on a small real workload.

One metadata query per (destination, dataset), and one read of dlt's stored schema per
(dataset, schema) with a modelled table absent that no local pipeline state knows; for
removal, one profile query per table that has declared columns (counts only: its windows are
summed from the profiles), or one coverage aggregate per table with `from_profiles` off; the
distribution detector's profiles add one category query per table with categorical columns;
one sample query per drifted table; each source built once per run. A child table
(`orders__lines`, no `_dlt_load_id` of its own, windowed through its root rows) is not profiled:
removal reads it with one coverage aggregate. Three sources: `shop` and `crm` land in the same
DuckDB dataset, `billing` in its own file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import pytest

from dlt_contract_ops.detectors.registry import selected
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.engine.sweep_stats import SweepStats, observe_sweeps
from tests.duckdb_baselines import load_once
from tests.projects import Project

#: what every reconcile runs
DETECTORS = selected()

#: what `--include-removal` runs
WITH_REMOVAL = selected({"removal"})

SOURCES = """
from datetime import datetime, timedelta, timezone
from typing import ClassVar, List, Optional

import dlt
from pydantic import BaseModel

EVOLVE = {"columns": "evolve"}  # planted columns land although the models do not know them


class Line(BaseModel):
    sku: str
    qty: Optional[int] = None


class Order(BaseModel):
    dlt_config: ClassVar[dict] = {"skip_nested_types": True}  # lines: child table

    id: int
    amount: Optional[float] = None
    loaded_at: datetime
    lines: List[Line] = []


class Customer(BaseModel):
    id: int
    email: Optional[str] = None
    loaded_at: datetime


class Refund(BaseModel):  # declared, never loaded: no table, no query
    id: int


class Contact(BaseModel):
    id: int
    phone: Optional[str] = None
    loaded_at: datetime


class Invoice(BaseModel):
    id: int
    total: Optional[float] = None
    loaded_at: datetime


def _stamp(recent):
    now = datetime.now(timezone.utc)
    return now - timedelta(minutes=30) if recent else now - timedelta(days=2)


@dlt.source(name="shop")
def shop(recent=False, first=0):
    at = _stamp(recent)

    @dlt.resource(columns=Order, schema_contract=EVOLVE)
    def orders():
        for i in range(first, first + 20):
            line = {"sku": f"s{i}", "qty": 1}
            row = {"id": i, "amount": i * 1.5, "loaded_at": at, "lines": [line]}
            if recent:
                row["coupon_code"] = f"C{i}"  # additive drift
                line["gift_wrap"] = True  # additive drift in the child table orders__lines
            yield row

    @dlt.resource(columns=Customer, schema_contract=EVOLVE)
    def customers():
        for i in range(first, first + 20):
            # removal drift: email goes dark in the recent load
            yield {"id": i, "email": None if recent else f"u{i}@x.io", "loaded_at": at}

    @dlt.resource(columns=Refund)
    def refunds():
        yield from ()

    @dlt.resource  # no model: nothing to diff, no query
    def raw_log():
        yield {"line": f"loaded {first}", "loaded_at": at}

    return orders, customers, refunds, raw_log


@dlt.source(name="crm")
def crm(recent=False, first=0):
    at = _stamp(recent)

    @dlt.resource(columns=Contact, schema_contract=EVOLVE)
    def contacts():
        for i in range(first, first + 20):
            yield {"id": i, "phone": f"+49{i}", "loaded_at": at}

    return contacts


@dlt.source(name="billing")
def billing(recent=False, first=0):
    at = _stamp(recent)

    @dlt.resource(columns=Invoice, schema_contract=EVOLVE)
    def invoices():
        for i in range(first, first + 20):
            row = {"id": i, "total": float(i), "loaded_at": at}
            if recent:
                row["tax_id"] = f"T{i}"  # additive drift
                row["tax_rate"] = 0.19
            yield row

    return invoices
"""

LOAD = """
import dlt
from budget_sources import billing, crm, shop


shop_pipe = dlt.pipeline("shop_pipe", destination="duckdb", dataset_name="shop_data")
billing_pipe = dlt.pipeline("billing_pipe", destination="duckdb", dataset_name="billing_data")
for recent, first in ((False, 0), (True, 100)):
    shop_pipe.run(shop(recent=recent, first=first))
    shop_pipe.run(crm(recent=recent, first=first))
    billing_pipe.run(billing(recent=recent, first=first))
"""


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """Three sources, two DuckDB datasets, one baseline and one recent load each."""

    def build(project: Project) -> None:
        project.module("budget_sources", SOURCES)
        project.config('[contract_ops]\nalert_sinks = []\nload_timestamp_column = "loaded_at"\n')
        project.source("shop", "budget_sources:shop", pipeline_name="shop_pipe",
                       dataset_name="shop_data")
        project.source("crm", "budget_sources:crm", pipeline_name="shop_pipe",
                       dataset_name="shop_data")
        project.source("billing", "budget_sources:billing", pipeline_name="billing_pipe",
                       dataset_name="billing_data")
        project.python(LOAD)

    return Project(load_once(tmp_path_factory, "budget", build) / "project")


@dataclass
class Counted:
    """The sweeps of the test, each counted as it closed (`observe_sweeps`)."""

    seen: list[SweepStats] = field(default_factory=list)

    @property
    def sweeps(self) -> int:
        return len(self.seen)

    @property
    def sources_built(self) -> int:
        return sum(s.sources_built for s in self.seen)

    @property
    def queries(self) -> Counter[str]:
        return sum((s.queries for s in self.seen), Counter())

    def clear(self) -> None:
        self.seen.clear()


@pytest.fixture
def counted() -> Iterator[Counted]:
    """Read every sweep's counters just before its adapters close."""
    with observe_sweeps() as seen:
        yield Counted(seen)


# detectors -> queries per kind: 2 datasets; 4 loaded modelled root tables (orders,
# customers, contacts, invoices), one with a categorical text column in a load
# (customers.email: 20 values), and 1 child table (orders__lines: one coverage aggregate);
# 3 drifted tables (orders, orders__lines, invoices). A first sweep: the store is empty.
# `refunds` is modelled but never loaded, and the test has no local pipeline state (a cron
# container): one read of the stored schema in `_dlt_version` tells it from a dropped table.
BUDGET: list[tuple[tuple[str, ...], dict[str, int]]] = [
    (("additive",), {"metadata": 2, "schema": 1, "sample": 3}),
    # counts only: no category query
    (("removal",), {"metadata": 2, "schema": 1, "profile": 4, "coverage": 1}),
    (("additive", "removal"),
     {"metadata": 2, "schema": 1, "profile": 4, "coverage": 1, "sample": 3}),
    (DETECTORS, {"metadata": 2, "schema": 1, "sample": 3}),
    (WITH_REMOVAL, {"metadata": 2, "schema": 1, "profile": 4, "coverage": 1, "sample": 3}),
    # in detail: + 1 category query
    (("distribution",), {"metadata": 2, "schema": 1, "profile": 5}),
    # one profile sweep, shared
    (("removal", "distribution"), {"metadata": 2, "schema": 1, "profile": 5, "coverage": 1}),
]


@pytest.mark.parametrize(("detectors", "budget"), BUDGET, ids=["-".join(d) for d, _ in BUDGET])
def test_query_budget_of_a_sweep(
    loaded: Project, counted: Counted, detectors: tuple[str, ...], budget: dict[str, int]
) -> None:
    results = run(None, detectors=detectors, dry_run=True, project_dir=loaded.root)

    assert [r.error for r in results if r.error] == []
    assert counted.sweeps == 1
    assert counted.sources_built == 3  # shop, crm, billing: each built once
    assert {k: v for k, v in counted.queries.items() if v} == budget


def test_without_profiles_removal_runs_one_coverage_aggregate_per_table(
    loaded: Project, counted: Counted
) -> None:
    results = run(None, detectors=("removal",), dry_run=True, project_dir=loaded.root,
                  removal={"from_profiles": False})

    assert [(f.table, f.columns) for r in results for f in r.findings] == [
        ("customers", ["email"])]
    assert {k: v for k, v in counted.queries.items() if v} == {
        "metadata": 2, "schema": 1, "coverage": 5}


def test_a_repeat_sweep_without_new_loads_reads_no_load_again(
    loaded: Project, counted: Counted
) -> None:
    first = run(None, detectors=("removal",), dry_run=True, project_dir=loaded.root)
    counted.clear()
    repeat = run(None, detectors=("removal",), dry_run=True, project_dir=loaded.root)

    # the completed load ids once per source (3), one profile query per root table naming
    # the loads it reads again (the recent window's; no new load: no category query), and the
    # child table's coverage aggregate
    assert {k: v for k, v in counted.queries.items() if v} == {
        "metadata": 2, "schema": 1, "loads": 3, "profile": 4, "coverage": 1}
    assert [(f.table, f.columns, f.coverage) for r in repeat for f in r.findings] == [
        (f.table, f.columns, f.coverage) for r in first for f in r.findings]


def test_a_repeat_distribution_sweep_reads_each_newest_load_in_its_one_query(
    loaded: Project, counted: Counted
) -> None:
    """A day on, every load is older than the recent window: the newest one of each root
    table (the distribution rule's current load) is read again, listed in the table's one
    profile query; nothing per column, and no category query (no newest load holds a
    categorical column: `customers.email` is NULL there). `crm`'s later loads in the same
    dataset are of another schema: no newer load of `shop`'s, whose tables list their newest
    load at once (no second query). Before, only `shop`'s tables were queried (for `crm`'s
    load ids, which hold none of their rows)."""
    later = {"now": datetime.now(timezone.utc) + timedelta(days=1)}
    def sweep() -> None:
        results = run(None, detectors=("distribution",), dry_run=True,
                      project_dir=loaded.root, removal=later)
        assert [r.error for r in results if r.error] == []

    sweep()  # the first sweep profiles every load
    counted.clear()
    sweep()

    assert {k: v for k, v in counted.queries.items() if v} == {
        "metadata": 2, "schema": 1, "loads": 3, "profile": 4}


def test_the_budget_workload_really_drifts(loaded: Project, counted: Counted) -> None:
    """The counts above mean something only if the planted drift is found."""
    results = run(None, detectors=("additive", "removal"), dry_run=True, project_dir=loaded.root)

    found: dict[str, list[tuple[str, list[str]]]] = {}
    for r in results:
        found.setdefault(r.detector, []).extend((f.table, f.columns) for f in r.findings)
    assert sorted(found["additive"]) == [
        ("invoices", ["tax_id", "tax_rate"]),
        ("orders", ["coupon_code"]),
        ("orders__lines", ["gift_wrap"]),
    ]
    assert found["removal"] == [("customers", ["email"])]


def test_one_source_alone_costs_one_metadata_query(loaded: Project, counted: Counted) -> None:
    run(["billing"], detectors=WITH_REMOVAL, dry_run=True, project_dir=loaded.root)

    assert counted.sources_built == 1
    assert {k: v for k, v in counted.queries.items() if v} == {
        "metadata": 1,
        "profile": 1,
        "sample": 1,
    }
