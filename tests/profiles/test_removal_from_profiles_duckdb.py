"""Removal summed from load profiles finds what one full coverage scan finds.

Real dlt loads into DuckDB. Each case sweeps after every load with one profile store (the
incremental way), then compares the last sweep with a sweep over a fresh store and with
`from_profiles = false` (one coverage aggregate over both windows, as before profiles):
the findings, their coverage and their `reproduce` must be identical. The windows are the
defaults (recent 6 h, baseline 7 d before it); old loads are moved back in time by rewriting
their `_dlt_load_id` (or by the rows' own `loaded_at`) before the first sweep reads them.

Whether a repeat sweep read only its new loads is seen from the outside: the test changes the
values of an old load in place (dlt never does; the row count stays), and a sweep that read
only new loads still reports what the profiles recorded, while a full scan sees the change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding
from tests.duckdb_baselines import load_duckdb, shared_loads
from tests.projects import Project

SOURCE = """
from datetime import datetime, timedelta, timezone
from typing import Optional

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    status: str
    note: Optional[str] = None
    amount: Optional[float] = None
    loaded_at: Optional[datetime] = None


def rows(batch, n, dark, start, hours_ago, spread_hours, null_axis):
    now = datetime.now(timezone.utc)
    for i in range(n):
        k = start + batch * 1000 + i
        at = None
        if hours_ago is not None:
            at = now - timedelta(hours=hours_ago) + timedelta(hours=spread_hours * i / max(n, 1))
            if null_axis and i % 10 == 0:
                at = None
        yield {
            "id": k,
            "status": "new" if i % 3 else "paid",
            "note": None if "note" in dark else f"n{i}",
            "amount": None if "amount" in dark else float(i),
            "loaded_at": at,
        }


@dlt.source(name="shop")
def shop(batch=0, n=60, dark=(), disposition="append", start=0, hours_ago=None,
         spread_hours=0.5, null_axis=False):
    hints = {"primary_key": "id"} if disposition == "merge" else {}
    return dlt.resource(
        rows(batch, n, dark, start, hours_ago, spread_hours, null_axis), name="orders",
        columns=Order, write_disposition=disposition, **hints,
    )
"""

DATASET = "shop_rm"
DB = "shop_rm_pipe.duckdb"  # dlt's default file for the pipeline


def declare(project: Project, **settings: Any) -> Project:
    project.module("shop_rm_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("shop", "shop_rm_mod:shop", pipeline_name="shop_rm_pipe",
                   dataset_name=DATASET, **settings)
    return project


@pytest.fixture
def shop(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "incremental.duckdb"))
    return project


def load(project: Project, *batches: dict[str, Any]) -> None:
    """The batches through dlt into DuckDB, the baseline shared (`load_duckdb`)."""
    load_duckdb(project, batches, pipeline="shop_rm_pipe", module="shop_rm_mod.py",
                dataset=DATASET, run=lambda some: _run_loads(project, some))


def move_loads(project: Project, hours_ago: Callable[[int, int], float]) -> list[str]:
    """Every load so far moved back, the n-th of N (oldest first) to `hours_ago(n, N)` hours
    ago, in `orders` and in `_dlt_loads`; the new ids, oldest first."""
    import duckdb

    con = duckdb.connect(str(project.root / DB))
    try:
        con.execute(f'USE shop_rm_pipe."{DATASET}"')
        ids = [r[0] for r in con.execute(
            "SELECT load_id FROM _dlt_loads ORDER BY load_id").fetchall()]
        now, moved = time.time(), []
        for n, old in enumerate(ids):
            new = f"{now - hours_ago(n, len(ids)) * 3600:.6f}"
            for table, column in (("orders", "_dlt_load_id"), ("_dlt_loads", "load_id")):
                con.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", [new, old])
            moved.append(new)
        return moved
    finally:
        con.close()


def load_baseline(project: Project, *batches: dict[str, Any]) -> None:
    """The first loads of a test that is about what follows them (its sweeps, its own later
    loads, its config): all of them shared (`shared_loads`)."""
    shared_loads(project, batches, pipeline="shop_rm_pipe", module="shop_rm_mod.py",
                 dataset=DATASET, run=lambda some: _run_loads(project, some))


def _run_loads(project: Project, batches: Sequence[dict[str, Any]]) -> None:
    import json

    project.python(
        f"""
        import json, dlt
        from shop_rm_mod import shop
        p = dlt.pipeline("shop_rm_pipe", destination="duckdb", dataset_name={DATASET!r})
        for kw in json.loads({json.dumps(json.dumps(list(batches)))}):
            p.run(shop(**kw))
        """
    )


def sql(project: Project, statement: str) -> None:
    """Change the warehouse by hand, as the test's own writer (never the tool)."""
    import duckdb

    con = duckdb.connect(str(project.root / DB))
    try:
        con.execute(f"USE shop_rm_pipe.{DATASET}")
        con.execute(statement)
    finally:
        con.close()


def backdate_loads(project: Project) -> list[str]:
    """Move every load so far back in time: the n-th of N to (N - n) * 20 hours ago."""
    import duckdb

    con = duckdb.connect(str(project.root / DB))
    try:
        ids = [r[0] for r in con.execute(
            f'SELECT DISTINCT _dlt_load_id FROM "{DATASET}".orders ORDER BY 1').fetchall()]
        now = time.time()
        moved = []
        for n, old in enumerate(ids):
            new = f"{now - (len(ids) - n) * 20 * 3600:.6f}"
            con.execute(f'UPDATE "{DATASET}".orders SET _dlt_load_id = ? WHERE _dlt_load_id = ?',
                        [new, old])
            moved.append(new)
        return moved
    finally:
        con.close()


def sweep(project: Project, **removal: Any) -> list[DriftFinding]:
    [result] = run(["shop"], detectors=("removal",), dry_run=True, project_dir=project.root,
                   removal=removal or None)
    assert result.error is None, result.error
    return result.findings


def seen(findings: list[DriftFinding]) -> list[tuple[Any, ...]]:
    return [(f.table, f.columns, f.coverage, f.reproduce) for f in findings]


def full_scan_and_fresh(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                        name: str, now: datetime) -> tuple[list[DriftFinding], list[DriftFinding]]:
    """The same sweep (at `now`) without profiles, and with a fresh store."""
    full = sweep(project, from_profiles=False, now=now)
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / f"fresh-{name}.duckdb"))
    fresh = sweep(project, now=now)
    assert (tmp_path / f"fresh-{name}.duckdb").exists()  # the profiles were really used
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "incremental.duckdb"))
    return full, fresh


@pytest.mark.parametrize("disposition", ["append", "merge"])
def test_load_id_windows_summed_from_profiles_equal_a_full_scan(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, disposition: str
) -> None:
    def batch(b: int, **kw: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"batch": b, "disposition": disposition, **kw}
        if disposition == "merge":
            out["start"] = 30 * b - 1000 * b  # each load rewrites half of the previous one
        return out

    declare(shop)
    load_baseline(shop, *[batch(b) for b in range(5)])
    backdate_loads(shop)
    assert sweep(shop) == []  # no recent rows: nothing flags, the profiles are stored
    load(shop, batch(5, dark=["note"]))
    assert [f.columns for f in sweep(shop)] == [["note"]]
    load(shop, batch(6, dark=["note"]))
    now = datetime.now(timezone.utc)
    incremental = sweep(shop, now=now)

    full, fresh = full_scan_and_fresh(shop, tmp_path, monkeypatch, disposition, now)
    assert seen(incremental) == seen(full) == seen(fresh)
    [finding] = full
    assert finding.columns == ["note"]
    assert finding.coverage is not None
    assert finding.coverage["note"].baseline == 1.0
    assert finding.coverage["note"].recent == 0.0


def test_a_repeat_sweep_reads_only_the_new_loads(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declare(shop)
    load_baseline(shop, *[{"batch": b} for b in range(4)])
    [oldest, *_] = backdate_loads(shop)
    assert sweep(shop) == []
    load(shop, {"batch": 4, "dark": ["note", "amount"]})
    [first] = sweep(shop)
    assert first.columns == ["amount", "note"]

    # by hand, every baseline row loses its amount (same rows, so no rewrite shows)
    sql(shop, "UPDATE orders SET amount = NULL WHERE note IS NOT NULL")
    [repeat] = sweep(shop)
    full = sweep(shop, from_profiles=False)
    # the repeat sweep read no old load: its baseline is what the profiles recorded
    assert repeat.columns == ["amount", "note"]
    assert [f.columns for f in full] == [["note"]]
    assert oldest  # the backdated loads exist


def test_a_replace_table_profiled_afresh_equals_a_full_scan(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declare(shop)
    load_baseline(shop, {"batch": 0, "disposition": "replace", "n": 40})
    sweep(shop)
    for b in (1, 2):
        load(shop, {"batch": b, "disposition": "replace", "n": 40 + b})
        sweep(shop)
    load(shop, {"batch": 3, "disposition": "replace", "dark": ["note"]})
    now = datetime.now(timezone.utc)
    incremental = sweep(shop, now=now)
    full, fresh = full_scan_and_fresh(shop, tmp_path, monkeypatch, "replace", now)
    assert seen(incremental) == seen(full) == seen(fresh)
    assert full == []  # replace keeps one load: the baseline window is empty


@pytest.mark.parametrize("null_axis", [False, True])
def test_timestamp_axis_windows_summed_from_load_ranges_equal_a_full_scan(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, null_axis: bool
) -> None:
    declare(shop, load_timestamp_column="loaded_at")
    # baseline loads, each within half an hour, 3 days to 8 hours ago
    load_baseline(shop, *[{"batch": b, "hours_ago": 72 - 16 * b} for b in range(5)])
    assert sweep(shop) == []
    # a dark load whose rows span the recent window's start (6 h ago), some with no time
    load(shop, {"batch": 5, "hours_ago": 7, "spread_hours": 2, "null_axis": null_axis,
                "dark": ["note"]})
    assert [f.columns for f in sweep(shop)] == [["note"]]
    load(shop, {"batch": 6, "hours_ago": 0.5, "dark": ["note"], "null_axis": null_axis})
    now = datetime.now(timezone.utc)
    incremental = sweep(shop, now=now)

    full, fresh = full_scan_and_fresh(shop, tmp_path, monkeypatch, f"ts-{null_axis}", now)
    assert seen(incremental) == seen(full) == seen(fresh)
    [finding] = full
    assert finding.columns == ["note"]
    assert finding.coverage is not None
    # the straddling load's older half is in the baseline, NULL: the split was counted
    assert 0.8 < finding.coverage["note"].baseline < 1.0
    assert finding.coverage["note"].recent == 0.0


def test_a_column_the_model_gained_later_is_counted_by_a_full_scan_until_profiled(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declare(shop)
    load_baseline(shop, *[{"batch": b} for b in range(3)])
    backdate_loads(shop)
    source = shop.root / "shop_rm_mod.py"
    # the model does not declare `amount` yet: the first profiles lack it
    source.write_text(source.read_text().replace(
        "    amount: Optional[float] = None\n", ""))
    assert sweep(shop) == []
    source.write_text(source.read_text().replace(
        "    note: Optional[str] = None\n",
        "    note: Optional[str] = None\n    amount: Optional[float] = None\n"))
    load(shop, {"batch": 3, "dark": ["amount"]})
    now = datetime.now(timezone.utc)
    incremental = sweep(shop, now=now)
    full, fresh = full_scan_and_fresh(shop, tmp_path, monkeypatch, "added", now)
    assert seen(incremental) == seen(full) == seen(fresh)
    assert [f.columns for f in full] == [["amount"]]


def test_from_profiles_must_be_a_boolean(shop: Project) -> None:
    declare(shop)
    load_baseline(shop, {"batch": 0})
    shop.config("[contract_ops.removal]\nfrom_profiles = \"maybe\"\n")
    out = shop.cli("reconcile", "-s", "shop", "--include-removal", "--dry-run")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "from_profiles" in out.stderr
