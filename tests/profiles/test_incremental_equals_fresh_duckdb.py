"""Sweeping after every load gives the findings one sweep over a fresh store gives.

Append (new loads only), merge (each load rewrites half of the previous one's rows, read
again as loads of the recent window) and replace (one load at a time), through real dlt
loads into DuckDB; the last load drifted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.engine.profile_history import profile_history
from dlt_contract_ops.model.findings import DriftFinding
from tests.profiles.conftest import load, load_baseline
from tests.profiles.test_distribution_duckdb import _sweep
from tests.projects import Project

DRIFT = ["other", "note", "code", "region"]


def _batches(disposition: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for b in range(7):
        kw: dict[str, Any] = {"batch": b, "disposition": disposition}
        if disposition == "merge":
            kw["start"] = 50 * b - 1000 * b  # ids 50*b .. 50*b+99: half the previous batch's
        if b == 6:
            kw["drift"] = DRIFT
        out.append(kw)
    return out


def _seen(findings: list[DriftFinding]) -> list[tuple[Any, ...]]:
    return [(f.table, f.drift_type, f.columns, f.metrics, f.reproduce) for f in findings]


@pytest.mark.parametrize(("disposition", "drifted"), [
    ("append", True), ("merge", True), ("replace", False),
])
def test_incremental_sweeps_find_what_one_fresh_sweep_finds(
    shop: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, disposition: str,
    drifted: bool,
) -> None:
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "incremental.duckdb"))
    incremental: list[DriftFinding] = []
    rewritten = False
    batches = _batches(disposition)
    # four sweeps over seven loads (after three, five, six and seven): each but the first
    # reads new loads into a store that holds the earlier ones; the first three are shared
    for group in (batches[0:3], batches[3:5], batches[5:6], batches[6:]):
        (load if group[0]["batch"] else load_baseline)(shop, *group)
        result = _sweep(shop)
        incremental = result.findings
        rewritten = rewritten or any("were rewritten" in n for n in result.notes)
    history = profile_history("shop", project_dir=shop.root)

    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "fresh.duckdb"))
    fresh = _sweep(shop).findings
    assert (tmp_path / "fresh.duckdb").exists()

    assert _seen(incremental) == _seen(fresh)
    assert profile_history("shop", project_dir=shop.root) == history
    # not trivially empty where the last load drifted. Every load lies in the recent window,
    # read again on every sweep (`profiles.refresh`): a merge or replace is seen there, with
    # no rewrite (test_row_total_duckdb.py has one before the window)
    assert bool(fresh) is drifted
    assert not rewritten
    if drifted:
        [finding] = fresh
        assert finding.columns == ["code", "note", "region", "status"]
    loads = {r["load_id"] for r in history["orders"]}
    assert len(loads) == (1 if disposition == "replace" else 7)
