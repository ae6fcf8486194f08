"""Probable renames through real dlt loads into DuckDB: a producer renames `order_date` to
`sale_date` between two loads, and the reconciler reports one `rename` finding instead of an
unrelated removal and an addition."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import duckdb
import pytest

from dlt_contract_ops.engine.reconcile import run
from tests.duckdb_baselines import shared_loads
from tests.projects import Project

SOURCE = """
from datetime import date, datetime, timedelta, timezone
from typing import Optional

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    amount: int
    order_date: Optional[date] = None


@dlt.resource(columns=Order, write_disposition="append", schema_contract={"columns": "evolve"})
def orders(start=0, n=20, field="order_date", as_text=False, stamp=False, extra=""):
    for i in range(start, start + n):
        row = {"id": i, "amount": 100 + i}
        if extra:  # another column added for its own reason
            row[extra] = date(2026, 4, 1) + timedelta(days=i % 7) if "date" in extra else i
        if stamp:
            row["loaded_at"] = datetime.now(timezone.utc)
        if field:
            day = date(2026, 3, 1) + timedelta(days=i % 20)
            row[field] = day.isoformat() if as_text else day
        yield row


@dlt.source(name="shop")
def shop(start=0, n=20, field="order_date", as_text=False, stamp=False, extra=""):
    return orders(start, n, field, as_text, stamp, extra)
"""

DB = "shop_pipe.duckdb"
DATASET = "shop_data"


@pytest.fixture
def shop(project: Project) -> Project:
    project.module("shop_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("shop", "shop_mod:shop", pipeline_name="shop_pipe", dataset_name=DATASET)
    return project


def _load(project: Project, days_ago: float, **kwargs: Any) -> None:
    """One real load, then its rows moved `days_ago` into the past (its own load id). The
    first load into a fresh project is built once per test run and copied
    (`tests/duckdb_baselines.py`: most tests start from the same load); the move is not."""
    def load(steps: Sequence[dict[str, Any]]) -> None:
        [kw] = steps
        args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
        project.python(f"""
            import dlt
            from shop_mod import shop
            dlt.pipeline("shop_pipe", destination="duckdb", dataset_name={DATASET!r}).run(
                shop({args}))
            """)

    shared_loads(project, [kwargs], pipeline="shop_pipe", module="shop_mod.py",
                 dataset=DATASET, run=load)
    if days_ago:
        with duckdb.connect(str(project.root / DB)) as con:
            newest = con.execute(f"SELECT MAX(_dlt_load_id) FROM {DATASET}.orders").fetchone()[0]
            stamp = f"{time.time() - days_ago * 86400:.7f}"
            if kwargs.get("stamp"):  # the stamped time axis moves back with its load
                con.execute(
                    f"UPDATE {DATASET}.orders SET loaded_at = loaded_at - INTERVAL "
                    f"{int(days_ago * 24)} HOUR WHERE _dlt_load_id = ?", [newest]
                )
            con.execute(f"UPDATE {DATASET}.orders SET _dlt_load_id = ? WHERE _dlt_load_id = ?",
                        [stamp, newest])


def _findings(project: Project) -> dict[str, list[Any]]:
    results = run(["shop"], detectors=("additive", "removal", "missing", "type", "rename"),
                  dry_run=True, project_dir=project.root)
    assert [r.error for r in results] == [None] * len(results)
    out: dict[str, list[Any]] = {}
    for r in results:
        out.setdefault(r.detector, []).extend(r.findings)
    return out


def test_a_rename_across_one_load_boundary_is_one_finding(shop: Project) -> None:
    _load(shop, 3, start=0)
    _load(shop, 0, start=100, field="sale_date")
    found = _findings(shop)
    [rename] = found["rename"]
    assert (rename.renamed_from, rename.renamed_to) == ("order_date", "sale_date")
    assert rename.columns == ["order_date", "sale_date"]
    assert rename.confidence is not None
    assert rename.confidence >= 0.6
    assert rename.handoff_load is not None
    assert rename.reasons
    assert any("same load boundary" in reason for reason in rename.reasons)
    assert rename.coverage is not None
    assert rename.coverage["order_date"].recent == 0.0
    assert rename.coverage["sale_date"].recent == 1.0
    assert {c["drift_type"] for c in rename.components or []} == {"removal", "additive"}
    # the components are folded: absent from their own blocks
    assert found["additive"] == []
    assert found["removal"] == []
    # and the JSON document carries the rename's own keys
    proc = shop.cli("reconcile", "-s", "shop", "--include-removal", "--dry-run",
                    "--format", "json")
    doc = json.loads(proc.stdout)
    [block] = [r for r in doc["results"] if r["detector"] == "rename"]
    [finding] = block["findings"]
    assert finding["drift_type"] == "rename"
    assert {"renamed_from", "renamed_to", "handoff_load", "confidence", "reasons",
            "components"} <= set(finding)


def test_the_same_changes_in_loads_far_apart_stay_two_findings(shop: Project) -> None:
    _load(shop, 5, start=0)
    _load(shop, 4, start=100, field="")
    _load(shop, 3, start=200, field="")
    _load(shop, 0, start=300, field="sale_date")
    found = _findings(shop)
    assert found["rename"] == []
    assert [f.columns for f in found["removal"]] == [["order_date"]]
    assert [f.columns for f in found["additive"]] == [["sale_date"]]


def test_a_type_incompatible_pair_stays_two_findings(shop: Project) -> None:
    _load(shop, 3, start=0)
    _load(shop, 0, start=100, field="sale_day", as_text=True)
    found = _findings(shop)
    assert found["rename"] == []
    assert [f.columns for f in found["removal"]] == [["order_date"]]
    assert [f.columns for f in found["additive"]] == [["sale_day"]]


def test_min_confidence_is_a_setting(shop: Project) -> None:
    _load(shop, 3, start=0)
    _load(shop, 0, start=100, field="sale_date")
    shop.config("[contract_ops.rename]\nmin_confidence = 0.95\n")  # read by the sweep
    found = _findings(shop)
    assert found["rename"] == []
    assert len(found["removal"]) == 1


def test_the_handoff_is_read_on_load_ids_when_the_axis_is_a_timestamp(shop: Project) -> None:
    """The handoff query bounds `_dlt_load_id`, not the table's timestamp axis (it compared
    a load id with a timestamp: "Cannot compare VARCHAR and TIMESTAMPTZ")."""
    project_config = shop.root / ".dlt" / "config.toml"
    text = project_config.read_text().replace(
        "alert_sinks = []", 'alert_sinks = []\nload_timestamp_column = "loaded_at"'
    )
    project_config.write_text(text)
    _load(shop, 3, start=0, stamp=True)
    _load(shop, 0, start=100, field="sale_date", stamp=True)
    results = run(["shop"], detectors=("additive", "removal", "missing", "type", "rename"),
                  dry_run=True, project_dir=shop.root)
    assert [r.error for r in results] == [None] * len(results)
    [rename] = [f for r in results if r.detector == "rename" for f in r.findings]
    assert (rename.renamed_from, rename.renamed_to) == ("order_date", "sale_date")


def test_a_rename_on_postgres_is_one_finding(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same handoff on PostgreSQL (text `_dlt_load_id` compared as text there too)."""
    import uuid

    import psycopg2

    from tests.conftest import require_server

    require_server("127.0.0.1", 5432, "PostgreSQL")
    dataset = f"co_rename_{uuid.uuid4().hex[:8]}"
    dsn = "postgresql://postgres:x@127.0.0.1:5432/test"
    project.module("shop_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.secrets(f'[destination.postgres]\ncredentials = "{dsn}"\n')
    project.source("shop", "shop_mod:shop", pipeline_name="shop_pg", destination="postgres",
                   dataset_name=dataset)

    def load(days_ago: float, **kwargs: Any) -> None:
        args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        project.python(f"""
            import dlt
            from shop_mod import shop
            dlt.pipeline("shop_pg", destination="postgres", dataset_name={dataset!r}).run(
                shop({args}))
            """)
        if days_ago:
            with psycopg2.connect(dsn) as con, con.cursor() as cur:
                cur.execute(f'SELECT MAX(_dlt_load_id) FROM "{dataset}".orders')
                newest = cur.fetchone()[0]
                cur.execute(
                    f'UPDATE "{dataset}".orders SET _dlt_load_id = %s WHERE _dlt_load_id = %s',
                    [f"{time.time() - days_ago * 86400:.7f}", newest],
                )

    try:
        load(3, start=0)
        load(0, start=100, field="sale_date")
        found = _findings(project)
        [rename] = found["rename"]
        assert (rename.renamed_from, rename.renamed_to) == ("order_date", "sale_date")
        assert rename.confidence is not None
        assert rename.confidence >= 0.6
        assert found["additive"] == []
        assert found["removal"] == []
        # an unrelated column added in between does not take the renamed column's place
        load(2, start=200, extra="promo_date")
        load(0, start=300, field="sale_date", extra="promo_date")
        found = _findings(project)
        [rename] = found["rename"]
        assert (rename.renamed_from, rename.renamed_to) == ("order_date", "sale_date")
        assert [f.columns for f in found["additive"]] == [["promo_date"]]
        # removal alone dates the column by the first load without it (not the recent
        # window's start, 6 h back and moving), the same from profiles and a full scan
        seen = set()
        for from_profiles in ("true", "false", "true"):
            monkeypatch.setenv("CONTRACT_OPS__REMOVAL__FROM_PROFILES", from_profiles)
            results = run(["shop"], detectors=("removal",), dry_run=True,
                          project_dir=project.root)
            [dark] = [f for r in results for f in r.findings]
            seen.add(dark.first_seen)
        [first_seen] = seen
        assert first_seen is not None
        assert time.time() - datetime.fromisoformat(first_seen).timestamp() < 3600
    finally:
        with psycopg2.connect(dsn) as con, con.cursor() as cur:
            cur.execute(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')


def test_an_unrelated_added_column_does_not_take_the_renamed_columns_place(
    shop: Project,
) -> None:
    """A table gains `promo_date`, later `order_date` is renamed `sale_date`: both added
    columns can hold a date, and the one whose handoff is clean is the rename (it paired by
    name order before: `promo_date` took `order_date`, both carried values in one load, and
    no rename was reported at all)."""
    _load(shop, 3, start=0)
    _load(shop, 2, start=100, extra="promo_date")
    _load(shop, 0, start=200, field="sale_date", extra="promo_date")
    found = _findings(shop)
    [rename] = found["rename"]
    assert (rename.renamed_from, rename.renamed_to) == ("order_date", "sale_date")
    assert any("same load boundary" in reason for reason in rename.reasons or [])
    [additive] = found["additive"]
    assert additive.columns == ["promo_date"]
    assert found["removal"] == []


def test_each_added_column_has_its_own_first_seen(shop: Project) -> None:
    """The additive finding dated every column by the earliest value of any of them."""
    _load(shop, 2, start=0, extra="promo_date")
    _load(shop, 0, start=100, field="sale_date", extra="promo_date")
    results = run(["shop"], detectors=("additive",), dry_run=True, project_dir=shop.root)
    [finding] = [f for r in results for f in r.findings]
    assert finding.columns == ["promo_date", "sale_date"]
    assert finding.column_first_seen is not None
    promo, sale = finding.column_first_seen["promo_date"], finding.column_first_seen["sale_date"]
    assert promo < sale
    assert finding.first_seen == promo
    ages = {c: time.time() - datetime.fromisoformat(t).timestamp()
            for c, t in finding.column_first_seen.items()}
    assert 2 * 86400 - 600 < ages["promo_date"] < 2 * 86400 + 600
    assert ages["sale_date"] < 600


def test_a_column_renamed_in_the_warehouse_pairs_with_its_old_name(shop: Project) -> None:
    """`ALTER TABLE ... RENAME COLUMN` keeps the old rows under the new name: the declared
    (required) column is missing and the new one holds values back to the oldest load.
    Another column added meanwhile used to take the pair (a wrong note, `amount → quantity`
    with confidence 0.4). The right pair is noted; it is not a finding on its own (a column
    added and backfilled while another is dropped looks the same), unless the project lowers
    `min_confidence`."""
    _load(shop, 3, start=0)
    _load(shop, 1, start=100, extra="quantity")
    with duckdb.connect(str(shop.root / DB)) as con:
        con.execute(f"ALTER TABLE {DATASET}.orders RENAME COLUMN amount TO total")
    results = run(["shop"], detectors=("additive", "missing", "rename"), dry_run=True,
                  project_dir=shop.root)
    notes = [n for r in results for n in r.notes if "looks like a rename" in n]
    assert notes == ["table `orders`: `amount` → `total` looks like a rename with confidence "
                     "0.5 (below 0.6): reported as separate findings"]
    shop.config("[contract_ops.rename]\nmin_confidence = 0.5\n")
    found = _findings(shop)
    [rename] = found["rename"]
    assert (rename.renamed_from, rename.renamed_to) == ("amount", "total")
    assert any("renamed in place" in reason for reason in rename.reasons or [])
    assert [f.columns for f in found["additive"]] == [["quantity"]]
    assert found["missing"] == []


@pytest.mark.parametrize("from_profiles", [True, False])
def test_removal_first_seen_is_the_load_where_the_column_went_dark(
    shop: Project, from_profiles: bool
) -> None:
    """"First seen" was the start of the recent window: it moved with every run. It is the
    load where the column went dark, from the load profiles and from a full scan alike."""
    _load(shop, 3, start=0)
    _load(shop, 2, start=100, field="")
    _load(shop, 0, start=200, field="")
    shop.config(f"[contract_ops.removal]\nfrom_profiles = {str(from_profiles).lower()}\n")
    seen = []
    for _ in range(2):
        results = run(["shop"], detectors=("removal",), dry_run=True, project_dir=shop.root)
        [finding] = [f for r in results for f in r.findings]
        assert finding.columns == ["order_date"]
        seen.append(finding.first_seen)
    assert seen[0] == seen[1]
    assert seen[0] is not None
    age = time.time() - datetime.fromisoformat(seen[0]).timestamp()
    assert 2 * 86400 - 600 < age < 2 * 86400 + 600


#: distribution judges the rename shop's 20-row loads over a baseline of two loads
SMALL_LOADS = "[contract_ops.distribution]\nmin_baseline_loads = 2\nmin_rows = 20\n"


def test_a_rename_with_distribution_is_one_finding(shop: Project) -> None:
    """The renamed column's NULL rate jumps to 100% in the handoff load: with
    `--include-distribution` that shift was a distribution finding of its own beside the
    rename; it is folded into the rename (its `metrics`, a component), reported once."""
    shop.config(SMALL_LOADS)
    _load(shop, 3, start=0)
    _load(shop, 2, start=100)
    _load(shop, 0, start=200, field="sale_date")
    results = run(["shop"], detectors=("additive", "removal", "missing", "type", "distribution",
                                       "rename"), dry_run=True, project_dir=shop.root)
    assert [r.error for r in results] == [None] * len(results)
    findings = [f for r in results for f in r.findings]
    [rename] = findings
    assert rename.drift_type == "rename"
    assert (rename.renamed_from, rename.renamed_to) == ("order_date", "sale_date")
    [null] = rename.metrics or []
    assert (null["column"], null["metric"], null["baseline"], null["current"]) == (
        "order_date", "null_rate", 0.0, 1.0)
    assert {c["drift_type"] for c in rename.components or []} == {
        "removal", "additive", "distribution"}

    # distribution alone: the shift stands as its own finding
    alone = run(["shop"], detectors=("distribution",), dry_run=True, project_dir=shop.root)
    [shift] = [f for r in alone for f in r.findings]
    assert shift.columns == ["order_date"]
    assert [m["metric"] for m in shift.metrics or []] == ["null_rate"]
