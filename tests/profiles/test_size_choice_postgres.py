"""Profiles or a scan by live size on PostgreSQL: the estimate is `pg_class.reltuples`.

PostgreSQL declares no block of rows it skips by load id, so only a set
`profiles_min_rows` sends a table to the scan; the size is the planner's estimate, which the
test makes known with `ANALYZE` (autovacuum would, later). Real dlt loads into a dataset of
the test's own; the same findings from either path, `first_seen` and `dark_since` included.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.engine.sweep_stats import observe_sweeps
from dlt_contract_ops.model.findings import DriftFinding
from tests.conftest import PROFILES_MIN_ROWS
from tests.profiles.test_removal_from_profiles_postgres import PgShop, pg_shop  # noqa: F401
from tests.profiles.test_size_choice_duckdb import exact

pytestmark = pytest.mark.postgres


def sweep(shop: PgShop, **removal: Any) -> tuple[list[DriftFinding], dict[str, int]]:
    with observe_sweeps() as seen:
        [result] = run(["shop"], detectors=("removal",), dry_run=True,
                       project_dir=shop.project.root, removal=removal or None)
    assert result.error is None, result.error
    return result.findings, {k: v for k, v in seen[0].queries.items() if v}


def test_postgres_scans_a_table_under_the_threshold_by_its_planner_estimate(
    pg_shop: PgShop, monkeypatch: pytest.MonkeyPatch  # noqa: F811 (the fixture)
) -> None:
    monkeypatch.delenv(PROFILES_MIN_ROWS)
    pg_shop.declare()
    pg_shop.load(*[{"batch": b} for b in range(3)])
    pg_shop.backdate_loads()
    pg_shop.load({"batch": 3, "dark": ["note"]})
    pg_shop.sql(f"ANALYZE {pg_shop.orders}")  # reltuples: 240
    now = datetime.now(timezone.utc)

    # unset: PostgreSQL has no block, so every table is profiled whatever its size
    unset, queries = sweep(pg_shop, now=now)
    assert queries["profile"] == 1
    assert "coverage" not in queries

    store = pg_shop.tmp_path / "scanned.duckdb"
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(store))
    scanned, queries = sweep(pg_shop, now=now, profiles_min_rows=241)
    assert queries == {"metadata": 1, "coverage": 1}
    assert not store.exists()
    profiled, queries = sweep(pg_shop, now=now, profiles_min_rows=240)  # 240 is not under
    assert queries["profile"] == 1
    full, _ = sweep(pg_shop, now=now, from_profiles=False)

    assert exact(unset) == exact(scanned) == exact(profiled) == exact(full)
    assert [f.columns for f in full] == [["note"]]
    assert full[0].column_first_seen is not None
