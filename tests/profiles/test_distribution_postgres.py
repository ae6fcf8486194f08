"""Load profiles and the distribution detector through real dlt loads into PostgreSQL.

The DuckDB cases (test_distribution_duckdb.py, test_incremental_equals_fresh_duckdb.py) on
the other dialect: text load ids, an exact `COUNT(DISTINCT ...)`, `CAST(... AS TEXT)` for
categories, the `UNION ALL` of the bounded profile query, psycopg2's placeholders. Each test
loads into a dataset of its own (dropped at teardown, with dlt's merge staging schema), so
parallel runs never share one.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.engine.profile_history import profile_history
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from tests.conftest import require_server
from tests.postgres_baselines import shared_postgres_loads
from tests.profiles.conftest import PIPELINE, SOURCE, load
from tests.profiles.test_incremental_equals_fresh_duckdb import DRIFT, _batches, _seen
from tests.projects import Project

pytestmark = pytest.mark.postgres

PG_HOST, PG_PORT = "127.0.0.1", 5432
DSN = f"postgresql://postgres:x@{PG_HOST}:{PG_PORT}/test"
STEADY = [{"batch": b} for b in range(6)]


@dataclass
class PgShop:
    """The `shop` source declared against a PostgreSQL dataset of its own."""

    project: Project
    dataset: str

    def load(self, *batches: dict[str, Any]) -> None:
        load(self.project, *batches, destination="postgres", dataset=self.dataset)

    def load_baseline(self, *batches: dict[str, Any]) -> None:
        """The first loads of a test that is about the next ones: all of them shared
        (`shared_postgres_loads`)."""
        shared_postgres_loads(self.project, batches, pipeline=PIPELINE, module="shop_mod.py",
                              dataset=self.dataset, dsn=DSN, run=lambda some: self.load(*some))

    def cli_json(self, *args: str) -> dict[str, Any]:
        proc = self.project.cli(*args, "--format", "json")
        assert proc.returncode == 0, proc.stderr
        doc: dict[str, Any] = json.loads(proc.stdout)
        return doc

    def reconcile(self) -> list[dict[str, Any]]:
        """The distribution findings of one CLI sweep (`--dry-run`, JSON)."""
        doc = self.cli_json("reconcile", "-s", "shop", "--include-distribution", "--dry-run")
        [result] = [r for r in doc["results"] if r["detector"] == "distribution"]
        assert result["error"] is None, result["error"]
        findings: list[dict[str, Any]] = result["findings"]
        return findings

    def sweep(self) -> ReconcileResult:
        """One in-process distribution sweep."""
        [result] = run(["shop"], detectors=("distribution",), dry_run=True,
                       project_dir=self.project.root)
        assert result.error is None, result.error
        return result

    def sql(self, query: str) -> list[tuple[Any, ...]]:
        import psycopg2

        with psycopg2.connect(DSN) as con, con.cursor() as cur:
            cur.execute(query)
            return list(cur.fetchall())


def _drop(dataset: str) -> None:
    import psycopg2

    con = psycopg2.connect(DSN)
    try:
        con.autocommit = True
        with con.cursor() as cur:
            for schema in (dataset, f"{dataset}_staging"):
                cur.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        con.close()


@pytest.fixture
def pg_shop(project: Project) -> Iterator[PgShop]:
    require_server(PG_HOST, PG_PORT, "PostgreSQL")
    dataset = f"co_profiles_{uuid.uuid4().hex[:10]}"
    project.module("shop_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.secrets(f'[destination.postgres]\ncredentials = "{DSN}"\n')
    project.source("shop", "shop_mod:shop", pipeline_name="shop_pipe", destination="postgres",
                   dataset_name=dataset)
    try:
        yield PgShop(project, dataset)
    finally:
        _drop(dataset)


def _metrics(finding: dict[str, Any]) -> dict[tuple[str, str, str | None], dict[str, Any]]:
    return {(m["column"], m["metric"], m["category"]): m for m in finding["metrics"]}


def test_a_drifted_newest_load_is_found(pg_shop: PgShop) -> None:
    pg_shop.load_baseline(*STEADY)
    pg_shop.load({"batch": 6, "drift": DRIFT})

    [finding] = pg_shop.reconcile()
    assert finding["drift_type"] == "distribution"
    assert finding["table"] == "orders"
    assert finding["columns"] == ["code", "note", "region", "status"]
    metrics = _metrics(finding)
    other = metrics["status", "category_share", "other"]
    assert (other["baseline"], other["current"], other["change"]) == (0.0, 0.04, 0.04)
    null = metrics["note", "null_rate", None]
    assert null["baseline"] == 0.1
    assert null["current"] == 0.8  # 80 rows by `i % 5`, the 10 by `(i + batch) % 10` among them
    collapse = metrics["code", "distinct_count", None]
    # exact on PostgreSQL: every steady load holds 100 distinct codes, the drifted one 1
    assert (collapse["baseline"], collapse["current"]) == (100.0, 1.0)
    apac = metrics["region", "new_category", "apac"]
    assert (apac["baseline"], apac["current"]) == (0.0, 0.5)
    # nothing else moved: `id` and `amount` are as steady as ever
    assert {c for c, _, _ in metrics} == {"code", "note", "region", "status"}

    # the reproduce query runs as pasted in psql: one row per load from the baseline's first
    reproduce = finding["reproduce"]
    assert f'"{pg_shop.dataset}"."orders"' in reproduce
    rows = pg_shop.sql(reproduce)
    assert len(rows) == 7
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert rows[-1][1] == 100  # the drifted load's rows

    # idle since: the same newest load, the same finding, nothing new
    [again] = pg_shop.reconcile()
    assert (again["columns"], again["metrics"]) == (finding["columns"], finding["metrics"])


def test_other_share_from_nothing_to_four_percent_and_the_profile_history(
    pg_shop: PgShop,
) -> None:
    pg_shop.load_baseline(*STEADY)
    pg_shop.load({"batch": 6, "drift": ["other"]})

    [finding] = pg_shop.reconcile()
    assert finding["columns"] == ["status"]
    [metric] = finding["metrics"]
    assert metric["column"] == "status"
    assert metric["category"] == "other"
    assert metric["metric"] in ("new_category", "category_share")
    assert (metric["baseline"], metric["current"]) == (0.0, 0.04)

    doc = pg_shop.cli_json("profile", "-s", "shop")
    rows = doc["tables"]["orders"]
    loads = sorted({r["load_id"] for r in rows})
    assert len(loads) == 7
    assert loads == sorted(r[0] for r in pg_shop.sql(
        f'SELECT DISTINCT _dlt_load_id FROM "{pg_shop.dataset}".orders'))
    by = {(r["load_id"], r["column"]): r for r in rows}
    assert {c for _, c in by} == {"amount", "code", "id", "note", "region", "status"}
    for b, load_id in enumerate(loads):
        assert {r["rows"] for r in rows if r["load_id"] == load_id} == {100}
        # COUNT(DISTINCT ...) on PostgreSQL: exact counts, not approximations
        assert by[load_id, "id"]["distinct_count"] == 100
        assert by[load_id, "code"]["distinct_count"] == 100
        assert by[load_id, "status"]["distinct_count"] == (4 if b == 6 else 3)
        assert by[load_id, "amount"]["distinct_count"] == 17
        # min and max of a double precision column, as text
        assert by[load_id, "amount"]["min"] == str(b / 10)
        assert by[load_id, "amount"]["max"] == str(16 + b / 10)
        assert by[load_id, "id"]["min"] == str(b * 1000)
        assert by[load_id, "id"]["max"] == str(b * 1000 + 99)
        assert by[load_id, "code"]["min"] is None  # text: no range
        assert by[load_id, "note"]["null_rate"] == 0.1
        assert by[load_id, "note"]["categories"] == {"n": 1.0}
        assert by[load_id, "code"]["categories"] is None  # 100 values: not categorical
    last = by[loads[-1], "status"]["categories"]
    assert last["other"] == 0.04
    assert sum(last.values()) == pytest.approx(1.0)
    assert "other" not in by[loads[0], "status"]["categories"]

    text = pg_shop.project.cli("profile", "-s", "shop", "--table", "orders")
    assert text.returncode == 0, text.stderr
    assert "Table: orders  |  loads: 7" in text.stdout


def test_steady_noisy_loads_and_an_idle_table_raise_nothing(pg_shop: PgShop) -> None:
    pg_shop.load_baseline(*STEADY)
    pg_shop.load({"batch": 6})
    assert pg_shop.reconcile() == []
    root = pg_shop.project.root
    before = profile_history("shop", project_dir=root)["orders"]
    assert len({r["load_id"] for r in before}) == 7
    # nothing loaded since: the same profiles, nothing new, nothing raised
    assert pg_shop.reconcile() == []
    assert profile_history("shop", project_dir=root)["orders"] == before
    # one more steady load is profiled, the earlier ones are kept as they were
    pg_shop.load({"batch": 7})
    result = pg_shop.sweep()
    assert result.findings == []
    assert result.notes == []  # neither rewritten nor short of a baseline
    grown = profile_history("shop", project_dir=root)["orders"]
    assert len({r["load_id"] for r in grown}) == 8
    assert grown[:len(before)] == before


@pytest.mark.parametrize(("disposition", "drifted"), [
    ("append", True), ("merge", True), ("replace", False),
])
def test_incremental_sweeps_find_what_one_fresh_sweep_finds(
    pg_shop: PgShop, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, disposition: str,
    drifted: bool,
) -> None:
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "incremental.duckdb"))
    incremental: list[DriftFinding] = []
    rewritten = False
    batches = _batches(disposition)
    # four sweeps over seven loads (two loads, two, two, then the last one): a load through
    # PostgreSQL costs a dlt process of its own, so they go two to one
    for group in (batches[0:2], batches[2:4], batches[4:6], batches[6:]):
        pg_shop.load(*group)
        result = pg_shop.sweep()
        incremental = result.findings
        rewritten = rewritten or any("were rewritten" in n for n in result.notes)
    root = pg_shop.project.root
    history = profile_history("shop", project_dir=root)

    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "fresh.duckdb"))
    fresh = pg_shop.sweep().findings
    assert (tmp_path / "fresh.duckdb").exists()

    assert _seen(incremental) == _seen(fresh)
    assert profile_history("shop", project_dir=root) == history
    assert bool(fresh) is drifted
    # every load lies in the recent window, read again on every sweep (`profiles.refresh`):
    # a merge or replace is seen there, with no rewrite
    assert not rewritten
    if drifted:
        [finding] = fresh
        assert finding.columns == ["code", "note", "region", "status"]
    loads = {r["load_id"] for r in history["orders"]}
    assert len(loads) == (1 if disposition == "replace" else 7)
    live = pg_shop.sql(f'SELECT _dlt_load_id, COUNT(*) FROM "{pg_shop.dataset}".orders'
                       " GROUP BY 1 ORDER BY 1")
    assert {lid for lid, _ in live} == loads
    # the stored row counts are the live ones (merge rewrote the earlier loads' rows)
    assert {(r["load_id"], r["rows"]) for r in history["orders"]} == set(live)


EVENTS = """
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Literal

import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    at: datetime
    day: date
    price: Decimal
    flag: bool
    level: Literal[1, 2, 3]


def rows(batch):
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for i in range(40):
        yield {"id": batch * 100 + i, "at": start + timedelta(hours=i + batch),
               "day": date(2024, 1, 1) + timedelta(days=i % 3), "price": Decimal("1.50") + i,
               "flag": i % 4 == 0, "level": 1 + i % 3}


@dlt.source(name="events_src")
def events_src(batch=0):
    return dlt.resource(rows(batch), name="events", columns=Event)
"""


def test_times_decimals_booleans_and_declared_codes_profile_as_text(pg_shop: PgShop) -> None:
    project, dataset = pg_shop.project, pg_shop.dataset
    project.module("events_mod", EVENTS)
    project.source("events_src", "events_mod:events_src", pipeline_name="events_pipe",
                   destination="postgres", dataset_name=dataset)
    project.python(
        f"""
        import dlt
        from events_mod import events_src
        p = dlt.pipeline("events_pipe", destination="postgres", dataset_name={dataset!r})
        for b in (0, 1):
            p.run(events_src(batch=b))
        """
    )
    types = dict(pg_shop.sql(
        "SELECT column_name, data_type FROM information_schema.columns"
        f" WHERE table_schema = '{dataset}' AND table_name = 'events'"))
    assert types["at"] == "timestamp with time zone"
    assert types["price"] == "numeric"
    assert types["flag"] == "boolean"

    rows = pg_shop.cli_json("profile", "-s", "events_src")["tables"]["events"]
    loads = sorted({r["load_id"] for r in rows})
    assert len(loads) == 2
    by = {(r["load_id"], r["column"]): r for r in rows}
    for b, load_id in enumerate(loads):
        at = by[load_id, "at"]
        assert (at["min"], at["max"]) == (f"2024-01-01T0{b}:00:00+00:00",
                                          f"2024-01-02T{15 + b}:00:00+00:00")
        assert at["distinct_count"] == 40
        assert at["categories"] is None
        day = by[load_id, "day"]
        assert (day["min"], day["max"], day["distinct_count"]) == ("2024-01-01", "2024-01-03", 3)
        price = by[load_id, "price"]
        assert (Decimal(price["min"]), Decimal(price["max"])) == (Decimal("1.5"), Decimal("40.5"))
        assert "E" not in price["min"]  # numeric as plain text, never in exponent form
        # a boolean's categories are PostgreSQL's text for it; no range
        flag = by[load_id, "flag"]
        assert flag["categories"] == {"false": 0.75, "true": 0.25}
        assert (flag["min"], flag["max"], flag["distinct_count"]) == (None, None, 2)
        # an integer column with a declared code set: categorical, values cast to text
        level = by[load_id, "level"]
        assert level["categories"] == {"1": 0.35, "2": 0.325, "3": 0.325}
        assert (level["min"], level["max"]) == ("1", "3")
        assert by[load_id, "id"]["min"] == str(b * 100)
