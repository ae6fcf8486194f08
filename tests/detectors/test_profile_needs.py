"""A detector declares what it reads of the load profiles (`Detector.profiles`) and gets it.

A third-party detector, installed from a throwaway package like the freshness plugin
(`test_third_party.install`), reads the shared profiles through a real reconcile of a dlt
load in DuckDB: declared `"detailed"`, the run's one profile sweep reads distinct counts,
ranges and categories; declared `"counts"`, only rows and non-NULL values. Nothing of the
detector's name is looked up anywhere: the declaration alone decides.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dlt_contract_ops.detectors.registry import clear_cache
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.engine.sweep_stats import observe_sweeps
from tests.detectors.test_third_party import SOURCE, install
from tests.projects import Project

PLUGIN = """
import time

from dlt_contract_ops import Detector
from dlt_contract_ops.profiles.shared import shared_profiles


def run_profiled(run):
    started = time.perf_counter()
    ctx = run.ctx
    findings = []
    for t in shared_profiles(ctx, run.source):
        if t.error is not None:
            raise t.error
        newest = t.history[-1]
        findings.append(ctx.finding("profiled", t.expected, sorted(newest.columns), details={
            "detailed": all(p.detailed for p in t.history),
            "distinct": {c: p.distinct for c, p in sorted(newest.columns.items())},
        }))
    return ctx.result("profiled", started, findings, [])


PROFILED = Detector("profiled", run_profiled, "what the load profiles say",
                    flag="--include-profiled", profiles="NEED")
"""

LOAD = """
import dlt
import shop_src

dlt.pipeline("shop_pipe", destination="duckdb", dataset_name="shop_data").run(shop_src.shop())
"""


@pytest.fixture
def shop(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         request: pytest.FixtureRequest) -> Iterator[Project]:
    """One load of the shop, and the plugin declaring `request.param` installed (a module
    of its own per declaration: this process keeps a module it imported)."""
    module = f"profiled_{request.param}"
    plugins = install(tmp_path / "site", "contract-ops-profiled",
                      {module: PLUGIN.replace("NEED", request.param)},
                      f"profiled = {module}:PROFILED\n")
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "profiles.duckdb"))
    clear_cache()
    project.module("shop_src", SOURCE)
    project.source("shop", "shop_src:shop", pipeline_name="shop_pipe", dataset_name="shop_data")
    project.python(LOAD)
    yield project
    clear_cache()


@pytest.mark.parametrize(("shop", "detailed"), [("detailed", True), ("counts", False)],
                         indirect=["shop"])
def test_a_third_party_detector_gets_the_profiles_it_declared(
    shop: Project, detailed: bool
) -> None:
    with observe_sweeps() as sweeps:
        [result] = run(["shop"], detectors=("profiled",), dry_run=True, alert_sinks=(),
                       project_dir=shop.root)
    assert result.error is None, result.error
    found = {f.table: f.details for f in result.findings}
    assert set(found) == {"orders", "customers"}
    assert {d["detailed"] for d in found.values()} == {detailed}  # type: ignore[index]
    distinct = found["orders"]["distinct"]  # type: ignore[index]
    assert (distinct == {"id": 2, "total": 2}) is detailed
    assert (distinct == {"id": None, "total": None}) is not detailed
    # one profile sweep, as detailed as declared: a profile query per table, and the
    # category query of `customers.name`
    assert sweeps[0].queries["profile"] == (3 if detailed else 2)


@pytest.mark.parametrize("shop", ["detailed"], indirect=True)
def test_removal_and_a_detailed_reader_share_one_detailed_sweep(shop: Project) -> None:
    """Removal asks for counts; the run's other detector declared detailed profiles, so
    removal's sweep (the first) is detailed already and the plugin reads it as it is."""
    with observe_sweeps() as sweeps:
        results = run(["shop"], detectors=("removal", "profiled"), dry_run=True,
                      alert_sinks=(), project_dir=shop.root)
    assert [r.error for r in results] == [None, None]
    [profiled] = [r for r in results if r.detector == "profiled"]
    assert {f.details["detailed"] for f in profiled.findings} == {True}  # type: ignore[index]
    assert sweeps[0].queries["profile"] == 3  # one per table and a category query, shared
