"""The newest load is read again on every sweep that compares distributions, whatever its age.

A daily pipeline's newest load is older than removal's recent window (6 h) most of the day.
A repeat sweep read again only the loads of that window and the new ones, so the newest load
came from the profile store: an `UPDATE` of it by hand (a share of `status` set to `other`,
`note` set to NULL; dlt never does that, a fix-up job does) went unseen, "No drift", while a
sweep over a fresh store found both. The distribution rule's current load is the newest one,
so a detailed sweep now lists it in the table's one profile query where no newer load of the
source came, and reads it after where the newer loads brought the table no rows.

Real dlt loads into DuckDB and PostgreSQL, moved back in time in the table and in
`_dlt_loads` (as dlt would have written them then); both detectors in one sweep, as
`reconcile --include-removal --include-distribution`; each changed sweep compared with a
sweep over a fresh store and with removal's full scan, at one `now`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from tests.profiles.conftest import DATASET, PIPELINE, load_baseline
from tests.profiles.test_distribution_duckdb import STEADY
from tests.profiles.test_distribution_postgres import DSN, PgShop, pg_shop  # noqa: F401 (fixture)
from tests.projects import Project

#: every load moved back by this many hours times its place from the end: the newest one
#: too, so it lies before removal's recent window (6 h)
HOURS_APART = 20


#: another resource of the `shop` source (its schema): a load with no `orders` row
AUDIT = """
import dlt


@dlt.source(name="shop")
def shop():
    return dlt.resource([{"event": "fix-up"}], name="audit")
"""


@dataclass
class Warehouse:
    """The shop's dataset, read and changed by hand as the test's own writer (never the
    tool): `%s` placeholders, unqualified table names."""

    project: Project
    destination: str
    dataset: str = DATASET

    def sql(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self.destination == "duckdb":
            import duckdb

            con = duckdb.connect(str(self.project.root / f"{PIPELINE}.duckdb"))
            try:
                con.execute(f'USE {PIPELINE}."{self.dataset}"')
                cur = con.execute(statement.replace("%s", "?"), list(params))
                return cur.fetchall() if cur.description else []
            finally:
                con.close()
        import psycopg2

        with psycopg2.connect(DSN) as pg, pg.cursor() as cur:
            cur.execute(f'SET search_path TO "{self.dataset}"')
            cur.execute(statement, params)
            return list(cur.fetchall()) if cur.description else []

    def backdate(self, loads: bool = True) -> list[str]:
        """Every load so far moved back, the n-th of N to (N - n) * HOURS_APART hours ago,
        in the table and (`loads`) in `_dlt_loads`; the new ids, oldest first."""
        ids = [r[0] for r in self.sql("SELECT DISTINCT _dlt_load_id FROM orders ORDER BY 1")]
        now, moved = time.time(), []
        for n, old in enumerate(ids):
            new = f"{now - (len(ids) - n) * HOURS_APART * 3600:.6f}"
            self.sql("UPDATE orders SET _dlt_load_id = %s WHERE _dlt_load_id = %s", (new, old))
            if loads:
                self.sql("UPDATE _dlt_loads SET load_id = %s WHERE load_id = %s", (new, old))
            moved.append(new)
        return moved


@dataclass
class Shop:
    project: Project
    warehouse: Warehouse
    pg: PgShop | None = None

    def load_baseline(self, *batches: dict[str, Any]) -> None:
        if self.pg is None:
            load_baseline(self.project, *batches)
        else:
            self.pg.load_baseline(*batches)

    def load_audit(self) -> None:
        """One load of the `shop` schema with rows of another table (`audit`) alone."""
        self.project.module("shop_audit_mod", AUDIT)
        self.project.python(f"""
            import dlt
            from shop_audit_mod import shop
            dlt.pipeline({PIPELINE!r}, destination={self.warehouse.destination!r},
                         dataset_name={self.warehouse.dataset!r}).run(shop())
            """)


@pytest.fixture(params=["duckdb", pytest.param("postgres", marks=pytest.mark.postgres)])
def daily(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Shop]:
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "warm.duckdb"))
    if request.param == "duckdb":
        project = request.getfixturevalue("shop")
        yield Shop(project, Warehouse(project, "duckdb"))
        return
    pg: PgShop = request.getfixturevalue("pg_shop")
    yield Shop(pg.project, Warehouse(pg.project, "postgres", pg.dataset), pg)


def sweep(shop: Shop, now: datetime, **removal: Any) -> list[ReconcileResult]:
    """`reconcile --include-removal --include-distribution`, at `now`."""
    results = run(["shop"], detectors=("removal", "distribution"), dry_run=True,
                  project_dir=shop.project.root, removal={"now": now, **removal})
    assert [r.error for r in results] == [None, None]
    return results


def seen(results: list[ReconcileResult]) -> list[tuple[Any, ...]]:
    return [(r.detector, f.table, f.drift_type, f.columns, f.coverage, f.metrics, f.reproduce)
            for r in results for f in r.findings]


def fresh_sweep(shop: Shop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, now: datetime
                ) -> list[ReconcileResult]:
    """The same sweep over a fresh store (its first sweep reads every load)."""
    store = tmp_path / "fresh.duckdb"
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(store))
    try:
        return sweep(shop, now)
    finally:
        assert store.exists()  # the profiles were really used
        monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "warm.duckdb"))


def metrics(findings: list[DriftFinding]) -> set[tuple[str, str, str | None]]:
    return {(m["column"], m["metric"], m["category"]) for f in findings for m in f.metrics or []}


def drift_newest_in_place(shop: Shop, newest: str) -> None:
    """A fix-up job's `UPDATE` of the newest load: 4 of its 100 rows' `status` to `other`,
    every `note` to NULL. The row count stays."""
    w = shop.warehouse
    w.sql("UPDATE orders SET status = 'other' WHERE _dlt_load_id = %s AND mod(id, 25) = 0",
          (newest,))
    w.sql("UPDATE orders SET note = NULL WHERE _dlt_load_id = %s", (newest,))


def test_an_update_of_the_newest_load_before_the_recent_window_is_found(
    daily: Shop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    daily.load_baseline(*STEADY, {"batch": 6})
    *_, newest = daily.warehouse.backdate()
    assert seen(sweep(daily, datetime.now(timezone.utc))) == []  # steady: the store is warm

    drift_newest_in_place(daily, newest)
    now = datetime.now(timezone.utc)
    warm = sweep(daily, now)
    fresh = fresh_sweep(daily, tmp_path, monkeypatch, now)

    assert seen(warm) == seen(fresh)
    removal, distribution = warm
    [finding] = distribution.findings
    assert finding.columns == ["note", "status"]
    assert {("status", "category_share", "other"), ("note", "null_rate", None)} <= metrics(
        distribution.findings)
    # removal: nothing in its recent window, as its full scan says
    full = sweep(daily, now, from_profiles=False)
    assert seen([removal]) == seen(full[:1])
    # and the sweep after it still reads the newest load: the same finding
    assert seen(sweep(daily, now)) == seen(fresh)


def test_the_newest_load_is_read_again_after_a_load_without_rows_of_the_table(
    daily: Shop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A newer load of the source's own schema that brought `orders` no rows (only another
    resource of the source loaded): the newest `orders` load is still the one the rule
    compares, and is read again after the table's profile query found nothing newer."""
    daily.load_baseline(*STEADY, {"batch": 6})
    *_, newest = daily.warehouse.backdate()
    assert seen(sweep(daily, datetime.now(timezone.utc))) == []

    drift_newest_in_place(daily, newest)
    daily.load_audit()
    [(schema, audits)] = daily.warehouse.sql(
        "SELECT schema_name, count(*) FROM _dlt_loads WHERE load_id > %s GROUP BY 1", (newest,))
    assert (schema, audits) == ("shop", 1)
    now = datetime.now(timezone.utc)
    warm = sweep(daily, now)
    fresh = fresh_sweep(daily, tmp_path, monkeypatch, now)

    assert seen(warm) == seen(fresh)
    assert {("status", "category_share", "other"), ("note", "null_rate", None)} <= metrics(
        warm[1].findings)


def test_the_newest_load_is_read_again_though_dlt_loads_lacks_it(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows re-stamped onto load ids `_dlt_loads` does not hold (moved back in the table
    alone): the profile query lists the loads it reads by id, the stored newest one too."""
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "warm.duckdb"))
    daily = Shop(shop, Warehouse(shop, "duckdb"))
    daily.load_baseline(*STEADY, {"batch": 6})
    *_, newest = daily.warehouse.backdate(loads=False)
    assert seen(sweep(daily, datetime.now(timezone.utc))) == []

    drift_newest_in_place(daily, newest)
    now = datetime.now(timezone.utc)
    warm = sweep(daily, now)
    assert seen(warm) == seen(fresh_sweep(daily, tmp_path, monkeypatch, now))
    assert metrics(warm[1].findings) >= {("status", "category_share", "other")}


def test_detail_added_after_a_counts_only_sweep_reads_the_current_load_again(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A removal sweep reads counts only, and not the newest load before its recent window;
    a caller in the same run that wants the detail (the report's `inspect`, say) gets the
    current load as the warehouse holds it, not the stored categories."""
    from dlt_contract_ops.profiles.shared import shared_profiles

    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "warm.duckdb"))
    daily = Shop(shop, Warehouse(shop, "duckdb"))
    daily.load_baseline(*STEADY, {"batch": 6})
    *_, newest = daily.warehouse.backdate()
    assert seen(sweep(daily, datetime.now(timezone.utc))) == []  # stored in detail
    drift_newest_in_place(daily, newest)
    shares: dict[str, float] = {}

    def inspect(ctx: Any, results: Any) -> None:
        [t] = shared_profiles(ctx, ctx.settings, detailed=True)  # after removal's counts
        assert t.history[-1].load_id == newest
        shares.update(t.history[-1].shares("status") or {})

    [removal] = run(["shop"], detectors=("removal",), dry_run=True, project_dir=shop.root,
                    inspect=inspect)
    assert removal.error is None
    assert shares["other"] == 0.04
