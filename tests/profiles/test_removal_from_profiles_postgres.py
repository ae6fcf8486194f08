"""Removal summed from load profiles finds what one full coverage scan finds, on PostgreSQL.

The DuckDB cases (test_removal_from_profiles_duckdb.py) on the other dialect: `_dlt_load_id`
as varchar compared with epoch text, a `timestamp with time zone` axis whose profiled range
comes back from psycopg2 as aware datetimes, the straddling loads' coverage query restricted
by `_dlt_load_id IN (...)` with psycopg2's placeholders. Each case sweeps after its loads with
one profile store (the incremental way), then compares the last sweep with a sweep over a
fresh store and with `from_profiles = false`, all at one pinned `now`: the findings, their
coverage and their `reproduce` must be identical. Each test loads into a dataset of its own
(dropped at teardown, with dlt's merge staging schema). A load through PostgreSQL costs a dlt
process of its own, so loads whose sweeps in between are not needed share one.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding
from tests.conftest import require_server
from tests.postgres_baselines import shared_postgres_loads
from tests.profiles.test_distribution_postgres import _drop
from tests.profiles.test_removal_from_profiles_duckdb import SOURCE, seen
from tests.projects import Project

pytestmark = pytest.mark.postgres

PG_HOST, PG_PORT = "127.0.0.1", 5432
DSN = f"postgresql://postgres:x@{PG_HOST}:{PG_PORT}/test"
PIPELINE = "shop_rm_pipe"


@dataclass
class PgShop:
    """The removal `shop` source declared against a PostgreSQL dataset of its own."""

    project: Project
    dataset: str
    tmp_path: Path
    monkeypatch: pytest.MonkeyPatch

    def declare(self, **settings: Any) -> None:
        self.project.source("shop", "shop_rm_mod:shop", pipeline_name=PIPELINE,
                            destination="postgres", dataset_name=self.dataset, **settings)

    def load(self, *batches: dict[str, Any]) -> None:
        """Run the pipeline once per batch (keyword arguments of `shop`), in one process."""
        self._run(batches)

    def load_baseline(self, *batches: dict[str, Any]) -> None:
        """The first loads of a test that is about what follows them: all of them shared
        (`shared_postgres_loads`)."""
        shared_postgres_loads(self.project, batches, pipeline=PIPELINE, module="shop_rm_mod.py",
                              dataset=self.dataset, dsn=DSN, run=self._run)

    def _run(self, batches: Sequence[dict[str, Any]]) -> None:
        self.project.python(
            f"""
            import json, dlt
            from shop_rm_mod import shop
            p = dlt.pipeline({PIPELINE!r}, destination="postgres", dataset_name={self.dataset!r})
            for kw in json.loads({json.dumps(json.dumps(list(batches)))}):
                p.run(shop(**kw))
            """
        )

    def sql(self, statement: str, params: tuple[Any, ...] | None = None
            ) -> list[tuple[Any, ...]]:
        """Read or change the warehouse by hand, as the test's own writer (never the tool)."""
        import psycopg2

        with psycopg2.connect(DSN) as con, con.cursor() as cur:
            cur.execute(statement, params)
            return list(cur.fetchall()) if cur.description else []

    @property
    def orders(self) -> str:
        return f'"{self.dataset}".orders'

    def backdate_loads(self) -> list[str]:
        """Move every load so far back in time: the n-th of N to (N - n) * 20 hours ago."""
        ids = [r[0] for r in self.sql(f"SELECT DISTINCT _dlt_load_id FROM {self.orders}"
                                      " ORDER BY 1")]
        now = time.time()
        moved = []
        for n, old in enumerate(ids):
            new = f"{now - (len(ids) - n) * 20 * 3600:.6f}"
            self.sql(f"UPDATE {self.orders} SET _dlt_load_id = %s WHERE _dlt_load_id = %s",
                     (new, old))
            moved.append(new)
        return moved

    def sweep(self, **removal: Any) -> list[DriftFinding]:
        [result] = run(["shop"], detectors=("removal",), dry_run=True,
                       project_dir=self.project.root, removal=removal or None)
        assert result.error is None, result.error
        return result.findings

    def full_scan_and_fresh(self, name: str, now: datetime
                            ) -> tuple[list[DriftFinding], list[DriftFinding]]:
        """The same sweep (at `now`) without profiles, and with a fresh store."""
        full = self.sweep(from_profiles=False, now=now)
        store = self.tmp_path / f"fresh-{name}.duckdb"
        self.monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(store))
        fresh = self.sweep(now=now)
        assert store.exists()  # the profiles were really used
        self.monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE",
                                str(self.tmp_path / "incremental.duckdb"))
        return full, fresh

    def windows(self, reproduce: str) -> dict[str, tuple[int, ...]]:
        """The finding's `reproduce`, run as pasted in psql: counts per window."""
        return {str(r[0]): tuple(int(v) for v in r[1:]) for r in self.sql(reproduce)}


@pytest.fixture
def pg_shop(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[PgShop]:
    require_server(PG_HOST, PG_PORT, "PostgreSQL")
    dataset = f"co_removal_{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "incremental.duckdb"))
    project.module("shop_rm_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.secrets(f'[destination.postgres]\ncredentials = "{DSN}"\n')
    try:
        yield PgShop(project, dataset, tmp_path, monkeypatch)
    finally:
        _drop(dataset)


@pytest.mark.parametrize("disposition", ["append", "merge"])
def test_load_id_windows_summed_from_profiles_equal_a_full_scan(
    pg_shop: PgShop, disposition: str
) -> None:
    def batch(b: int, **kw: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"batch": b, "disposition": disposition, **kw}
        if disposition == "merge":
            out["start"] = 30 * b - 1000 * b  # each load rewrites half of the previous one
        return out

    pg_shop.declare()
    pg_shop.load_baseline(*[batch(b) for b in range(5)])
    moved = pg_shop.backdate_loads()
    assert len(moved) == 5
    assert pg_shop.sweep() == []  # no recent rows: nothing flags, the profiles are stored
    pg_shop.load(batch(5, dark=["note"]))
    assert [f.columns for f in pg_shop.sweep()] == [["note"]]
    pg_shop.load(batch(6, dark=["note"]))
    now = datetime.now(timezone.utc)
    incremental = pg_shop.sweep(now=now)

    full, fresh = pg_shop.full_scan_and_fresh(disposition, now)
    assert seen(incremental) == seen(full) == seen(fresh)
    [finding] = full
    assert finding.table == "orders"
    assert finding.columns == ["note"]
    assert finding.coverage is not None
    assert finding.coverage["note"].baseline == 1.0
    assert finding.coverage["note"].recent == 0.0

    # the reproduce runs as pasted in psql and shows the counts the windows were summed from
    assert finding.reproduce is not None
    assert f'"{pg_shop.dataset}"."orders"' in finding.reproduce
    windows = pg_shop.windows(finding.reproduce)
    if disposition == "append":
        # five backdated loads 20 to 100 hours ago; the two new ones, 60 rows each
        assert windows == {"baseline": (300, 300), "recent": (120, 0)}
    else:
        # each merge replaced the newer half of the previous load: 30 rows of each remain
        assert windows == {"baseline": (150, 150), "recent": (90, 0)}


def test_timestamptz_windows_with_a_straddling_load_and_null_times_equal_a_full_scan(
    pg_shop: PgShop,
) -> None:
    pg_shop.declare(load_timestamp_column="loaded_at")
    # baseline loads, each within half an hour, 3 days to 8 hours ago; then a dark load whose
    # rows span the recent window's start (6 h ago), every tenth with no time at all
    pg_shop.load_baseline(*[{"batch": b, "hours_ago": 72 - 16 * b} for b in range(5)])
    pg_shop.load({"batch": 5, "hours_ago": 7, "spread_hours": 2, "null_axis": True,
                  "dark": ["note"]})
    types = dict(pg_shop.sql(
        "SELECT column_name, data_type FROM information_schema.columns"
        f" WHERE table_schema = '{pg_shop.dataset}' AND table_name = 'orders'"))
    assert types["loaded_at"] == "timestamp with time zone"
    assert [f.columns for f in pg_shop.sweep()] == [["note"]]
    pg_shop.load({"batch": 6, "hours_ago": 0.5, "dark": ["note"], "null_axis": True})
    now = datetime.now(timezone.utc)
    incremental = pg_shop.sweep(now=now)

    full, fresh = pg_shop.full_scan_and_fresh("timestamptz", now)
    assert seen(incremental) == seen(full) == seen(fresh)
    [finding] = full
    assert finding.columns == ["note"]
    assert finding.coverage is not None
    # the straddling load's older half is in the baseline, NULL: the split was counted
    baseline = finding.coverage["note"].baseline
    assert baseline is not None
    assert 0.8 < baseline < 1.0
    assert finding.coverage["note"].recent == 0.0
    assert finding.reproduce is not None
    windows = pg_shop.windows(finding.reproduce)
    base_rows, base_notes = windows["baseline"]
    assert base_notes == 300  # the five whole baseline loads
    assert 300 < base_rows < 360  # plus part of the straddling load
    recent_rows, recent_notes = windows["recent"]
    assert recent_notes == 0
    # 54 timed rows of each dark load (6 of 60 have no time): all of them in some window
    assert base_rows - 300 + recent_rows == 2 * 54

    # by hand (row counts kept, so no rewrite shows): the whole baseline loads lose every
    # note, the straddling load's older half gains one. Every load was loaded within the
    # recent window (by load id; their rows' times are older), so the repeat sweep reads
    # them all again (`profiles.refresh`) and finds what the scan finds: the straddling
    # half's notes alone are below the baseline threshold
    [straddling] = pg_shop.sql(f"SELECT MIN(_dlt_load_id) FROM {pg_shop.orders}"
                               " WHERE note IS NULL")[0]
    pg_shop.sql(f"UPDATE {pg_shop.orders} SET note = NULL WHERE _dlt_load_id <> %s",
                (straddling,))
    pg_shop.sql(f"UPDATE {pg_shop.orders} SET note = 'x' WHERE _dlt_load_id = %s"
                " AND loaded_at < %s", (straddling, now - timedelta(hours=6)))
    assert pg_shop.sweep(now=now) == []
    assert pg_shop.sweep(from_profiles=False, now=now) == []


def test_a_repeat_sweep_reads_only_the_new_loads(pg_shop: PgShop) -> None:
    pg_shop.declare()
    pg_shop.load_baseline(*[{"batch": b} for b in range(4)])
    [oldest, *_] = pg_shop.backdate_loads()
    assert pg_shop.sweep() == []
    pg_shop.load({"batch": 4, "dark": ["note", "amount"]})
    [first] = pg_shop.sweep()
    assert first.columns == ["amount", "note"]

    # by hand, every baseline row loses its amount (same rows, so no rewrite shows)
    pg_shop.sql(f"UPDATE {pg_shop.orders} SET amount = NULL WHERE note IS NOT NULL")
    assert pg_shop.sql(f"SELECT COUNT(amount) FROM {pg_shop.orders}") == [(0,)]
    [repeat] = pg_shop.sweep()
    full = pg_shop.sweep(from_profiles=False)
    # the repeat sweep read no old load: its baseline is what the profiles recorded
    assert repeat.columns == ["amount", "note"]
    assert repeat.coverage is not None
    assert repeat.coverage["amount"].baseline == 1.0
    assert [f.columns for f in full] == [["note"]]
    # the old loads are still there, under their backdated ids
    assert pg_shop.sql(f"SELECT COUNT(*) FROM {pg_shop.orders} WHERE _dlt_load_id = %s",
                       (oldest,)) == [(60,)]
