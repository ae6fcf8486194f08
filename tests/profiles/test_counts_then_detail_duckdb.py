"""A removal sweep stores counts only; the distribution detector details what it compares.

Real dlt loads into DuckDB. Removal needs rows and non-NULL counts per load, so a sweep
without `--include-distribution` reads no distinct counts, ranges or categories. When the
distribution detector later compares those loads, it profiles them in detail first: its
findings equal those of a distribution sweep over a fresh store.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from dlt_contract_ops.engine.reconcile import run
from tests.profiles.conftest import load
from tests.profiles.test_distribution_duckdb import STEADY, _sweep
from tests.profiles.test_incremental_equals_fresh_duckdb import _seen
from tests.projects import Project


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_counts_only_loads_are_detailed_before_the_rule_compares_them(
    shop: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = tmp_path / "shared.duckdb"
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(store))
    load(shop, *STEADY, {"batch": 6, "drift": ["other", "note", "code", "region"]})

    [removal] = run(["shop"], detectors=("removal",), dry_run=True, project_dir=shop.root)
    assert removal.error is None
    assert _rows(store, "SELECT count(*), count(*) FILTER (WHERE detailed) FROM loads") == [
        (7, 0)]
    assert _rows(store, "SELECT count(*) FROM categories") == [(0,)]
    assert _rows(store, "SELECT count(distinct_count) FROM columns") == [(0,)]

    detailed = _sweep(shop).findings
    assert _rows(store, "SELECT count(*) FILTER (WHERE detailed) FROM loads") == [(7,)]
    assert _rows(store, "SELECT count(*) FROM categories")[0][0] > 0

    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "fresh.duckdb"))
    fresh = _sweep(shop).findings
    assert _seen(detailed) == _seen(fresh)
    [finding] = fresh
    assert finding.columns == ["code", "note", "region", "status"]


def test_a_sweep_with_both_detectors_profiles_in_detail_once(
    shop: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = tmp_path / "both.duckdb"
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(store))
    load(shop, *STEADY, {"batch": 6, "drift": ["other"]})

    results = run(["shop"], detectors=("removal", "distribution"), dry_run=True,
                  project_dir=shop.root)
    assert [r.error for r in results] == [None, None]
    assert _rows(store, "SELECT count(*) FILTER (WHERE detailed) FROM loads") == [(7,)]
    [finding] = results[1].findings
    assert [(m["column"], m["category"]) for m in finding.metrics or []] == [("status", "other")]
