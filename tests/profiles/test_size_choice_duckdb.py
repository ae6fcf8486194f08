"""Profiles or a scan per table, by its live size (`core.profile_choice`), on DuckDB.

Real dlt loads into DuckDB, windowed on `_dlt_load_id`. The catalog's estimate of a table's
rows (`duckdb_tables().estimated_size`) comes in the one metadata query; a table under
`[contract_ops.removal] profiles_min_rows` (unset: DuckDB's row group, 122,880 rows) is
scanned by its coverage aggregate, with no profile query and no store write. Whichever serves
it, removal's findings are the same, `first_seen` and each column's `dark_since` included.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.engine.sweep_stats import observe_sweeps
from dlt_contract_ops.model.findings import DriftFinding
from tests.conftest import PROFILES_MIN_ROWS
from tests.profiles import test_removal_from_profiles_duckdb as duck
from tests.profiles.test_repeat_by_load_id_duckdb import backdate
from tests.projects import Project


@pytest.fixture
def shop(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv(PROFILES_MIN_ROWS)  # the product's default, unless a test sets one
    return duck.declare(project)


def store_path(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / f"{name}.duckdb"
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(path))
    return path


def sweep(project: Project, **removal: Any) -> tuple[list[DriftFinding], dict[str, int]]:
    """Removal's findings, and the queries of the sweep per kind."""
    with observe_sweeps() as seen:
        [result] = run(["shop"], detectors=("removal",), dry_run=True,
                       project_dir=project.root, removal=removal or None)
    assert result.error is None, result.error
    [stats] = seen
    return result.findings, {k: v for k, v in stats.queries.items() if v}


def exact(findings: list[DriftFinding]) -> list[tuple[Any, ...]]:
    """Everything a removal finding says that could differ between the two paths."""
    return [(f.table, f.columns, f.coverage, f.first_seen, f.column_first_seen, f.reproduce)
            for f in findings]


def stored_loads(store: Path) -> int:
    """The loads of `orders` the profile store holds."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        found = con.execute("SELECT count(*) FROM loads WHERE tbl = 'orders'").fetchone()
        return int(found[0]) if found else 0
    finally:
        con.close()


#: removal's recent threshold in the first test
SHARE = {"recent_threshold": 0.4}


def test_the_same_findings_profiled_or_scanned(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    duck.load_baseline(shop, *[{"batch": b} for b in range(4)])
    backdate(shop)
    # `note` goes dark in the fifth load, `amount` in the sixth: two dark_since values (both
    # loads are in the recent window: amount's share there, 60 of 180 rows, is under 0.4)
    # Each threshold sweeps after every load with a store of its own (0: every table
    # profiled, a repeat sweep reads the new load; 10**9: every table scanned)
    for batch in (None, {"batch": 4, "dark": ["note"]},
                  {"batch": 5, "n": 120, "dark": ["note", "amount"]}):
        if batch is not None:
            duck.load(shop, batch)
        for threshold in (0, 10**9):
            store_path(tmp_path, f"t{threshold}", monkeypatch)
            _, queries = sweep(shop, profiles_min_rows=threshold, **SHARE)
            if threshold == 0:
                assert queries["profile"] == 1
                assert "coverage" not in queries
            else:
                assert queries == {"metadata": 1, "coverage": 1}
    now = datetime.now(timezone.utc)
    store_path(tmp_path, "t0", monkeypatch)
    profiled, _ = sweep(shop, profiles_min_rows=0, now=now, **SHARE)
    store_path(tmp_path, "t1000000000", monkeypatch)
    scanned, _ = sweep(shop, profiles_min_rows=10**9, now=now, **SHARE)
    full, _ = sweep(shop, from_profiles=False, now=now, **SHARE)

    assert exact(profiled) == exact(scanned) == exact(full)
    [finding] = scanned
    assert finding.columns == ["amount", "note"]
    assert finding.column_first_seen is not None
    # each column's own load: note went dark a load before amount
    assert finding.column_first_seen["note"] < finding.column_first_seen["amount"]
    assert finding.first_seen == finding.column_first_seen["note"]
    assert stored_loads(tmp_path / "t0.duckdb") > 0
    assert not (tmp_path / "t1000000000.duckdb").exists()  # the scan wrote no store


def test_a_table_that_grows_past_the_threshold_gets_profiled(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = store_path(tmp_path, "profiles", monkeypatch)
    shop.config("[contract_ops.removal]\nprofiles_min_rows = 200\n")
    duck.load_baseline(shop, *[{"batch": b, "n": 60} for b in range(3)])  # 180 rows: under 200
    backdate(shop)
    findings, queries = sweep(shop)
    assert findings == []
    assert "profile" not in queries
    assert queries["coverage"] == 1
    assert not store.exists()

    duck.load(shop, {"batch": 3, "n": 60, "dark": ["note"]})  # 240 rows: profiled now
    now = datetime.now(timezone.utc)
    grown, queries = sweep(shop, now=now)
    assert queries["profile"] == 1
    assert "coverage" not in queries
    assert stored_loads(store) == 4  # every load, profiled the first time
    full, _ = sweep(shop, from_profiles=False, now=now)
    assert exact(grown) == exact(full)
    assert [f.columns for f in grown] == [["note"]]


def test_a_small_table_project_sends_no_profile_query_and_writes_no_store(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = store_path(tmp_path, "profiles", monkeypatch)
    duck.load_baseline(shop, *[{"batch": b} for b in range(3)])
    backdate(shop)
    duck.load(shop, {"batch": 3, "dark": ["note"]})

    findings, queries = sweep(shop)  # the default: under one DuckDB row group, scanned
    assert queries == {"metadata": 1, "coverage": 1}
    assert [f.columns for f in findings] == [["note"]]
    assert not store.exists()

    # the distribution detector reads the profiles anyway: removal sums from them
    with observe_sweeps() as seen:
        run(["shop"], detectors=("removal", "distribution"), dry_run=True,
            project_dir=shop.root)
    assert seen[0].queries["profile"] >= 1
    assert seen[0].queries["coverage"] == 0
    assert store.exists()


@pytest.mark.parametrize("value", ["-1", '"many"', "1.5"])
def test_profiles_min_rows_must_be_a_whole_number(shop: Project, value: str) -> None:
    duck.load_baseline(shop, {"batch": 0})
    shop.config(f"[contract_ops.removal]\nprofiles_min_rows = {value}\n")
    out = shop.cli("reconcile", "-s", "shop", "--include-removal", "--dry-run")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "profiles_min_rows" in out.stderr


TWO_TABLES = """
from typing import Optional

import dlt
from pydantic import BaseModel


class Row(BaseModel):
    id: int
    note: Optional[str] = None


@dlt.source(name="pair")
def pair():
    big = dlt.resource(({"id": i, "note": "n"} for i in range(300)), name="big", columns=Row)
    small = dlt.resource(({"id": i, "note": "n"} for i in range(30)), name="small", columns=Row)
    return big, small
"""


def test_a_later_caller_gets_the_tables_removal_scanned_profiled(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The HTML report reads every table's profiles after the detectors ran
    (`run(inspect=...)`): a table removal scanned is profiled for it then."""
    from dlt_contract_ops.profiles.shared import shared_profiles

    monkeypatch.setenv(PROFILES_MIN_ROWS, "100")  # `big` is profiled, `small` scanned
    store_path(tmp_path, "profiles", monkeypatch)
    project.module("pair_mod", TWO_TABLES)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("pair", "pair_mod:pair", pipeline_name="pair_pipe", dataset_name="pair")
    project.python("""
        import dlt
        from pair_mod import pair
        dlt.pipeline("pair_pipe", destination="duckdb", dataset_name="pair").run(pair())
        """)
    seen: dict[str, list[str]] = {}

    def inspect(ctx: Any, results: Any) -> None:
        seen["skipped"] = sorted(ctx.profiles.skipped)
        seen["later"] = sorted(t.expected.table for t in shared_profiles(ctx, ctx.settings))

    with observe_sweeps() as sweeps:
        run(["pair"], detectors=("removal",), dry_run=True, project_dir=project.root,
            inspect=inspect)
    assert seen == {"skipped": ["small"], "later": ["big", "small"]}
    assert sweeps[0].queries["coverage"] == 1  # `small`, by removal
    assert sweeps[0].queries["profile"] == 2  # `big` by removal, `small` for the report
