"""One event, one finding: a column that goes dark is a removal finding AND a NULL-rate shift of
the distribution detector; with both detectors in the sweep the shift is folded into the
removal finding (its `metrics`, a `components` entry naming the distribution finding), so the
event is reported and alerted once. Another metric, or another column, stays a distribution
finding of its own; a NULL-rate shift with no removal too.

Real dlt loads into DuckDB and PostgreSQL (`daily`: moved back in time, 20 h apart); the newest
load is changed in place and removal's recent window (`1d`) holds it alone.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.sinks.memory import MemorySink
from tests.profiles.test_distribution_duckdb import STEADY
from tests.profiles.test_distribution_postgres import pg_shop  # noqa: F401 (fixture)
from tests.profiles.test_newest_load_reread import Shop, daily  # noqa: F401 (fixture)

#: removal's recent window: the newest load (20 h back) and no other
RECENT = "1d"
BOTH = ("removal", "distribution")


@pytest.fixture
def daily_shop(daily: Shop) -> Shop:  # noqa: F811 (the fixture)
    """The shop on DuckDB and on PostgreSQL (`test_newest_load_reread.daily`)."""
    return daily


def _sweep(shop: Shop, detectors: tuple[str, ...], *,
           sink: MemorySink | None = None) -> dict[str, list[DriftFinding]]:
    results: list[ReconcileResult] = run(
        ["shop"], detectors=detectors, dry_run=sink is None, project_dir=shop.project.root,
        alert_sinks=[sink] if sink is not None else None,
        removal={"now": datetime.now(timezone.utc), "recent_window": RECENT})
    assert [r.error for r in results] == [None] * len(detectors)
    return {r.detector: r.findings for r in results}


def _dark_newest(shop: Shop, *, half: bool = False) -> None:
    """The newest load changed in place: `note` NULL in every row (dark; `half`: in half of
    them, a NULL-rate shift and no removal), and 4 of its 100 `status` values `other`."""
    shop.load_baseline(*STEADY, {"batch": 6})
    *_, newest = shop.warehouse.backdate()
    gone = " AND mod(id, 2) = 0" if half else ""
    shop.warehouse.sql(f"UPDATE orders SET note = NULL WHERE _dlt_load_id = %s{gone}", (newest,))
    shop.warehouse.sql(
        "UPDATE orders SET status = 'other' WHERE _dlt_load_id = %s AND mod(id, 25) = 0",
        (newest,))


def _metrics(f: DriftFinding) -> list[tuple[str, str, str | None]]:
    return [(m["column"], m["metric"], m["category"]) for m in f.metrics or []]


def test_a_dark_column_is_one_finding_with_its_null_rate_in_it(daily_shop: Shop) -> None:
    _dark_newest(daily_shop)
    sink = MemorySink()
    found = _sweep(daily_shop, BOTH, sink=sink)

    [dark] = found["removal"]
    assert dark.columns == ["note"]
    assert dark.severity == "error"
    [null] = dark.metrics or []
    assert (null["column"], null["metric"]) == ("note", "null_rate")
    assert (null["baseline"], null["current"]) == (0.1, 1.0)
    # the other metric stays its own distribution finding, no longer naming `note`
    [shifted] = found["distribution"]
    assert shifted.columns == ["status"]
    assert ("note", "null_rate", None) not in _metrics(shifted)
    assert ("status", "category_share", "other") in _metrics(shifted)
    [component] = dark.components or []
    assert component["drift_type"] == "distribution"
    assert (component["columns"], component["metrics"]) == (["note"], ["null_rate"])
    # alerted once each: the dark column once, the share shift once
    assert sorted((f.drift_type, tuple(f.columns)) for f in sink.drift) == [
        ("distribution", ("status",)), ("removal", ("note",))]


def test_only_the_distribution_detector_keeps_the_null_rate_shift(daily_shop: Shop) -> None:
    _dark_newest(daily_shop)
    found = _sweep(daily_shop, ("distribution",))
    [shifted] = found["distribution"]
    assert shifted.columns == ["note", "status"]
    assert ("note", "null_rate", None) in _metrics(shifted)


def test_removal_alone_carries_no_metrics(daily_shop: Shop) -> None:
    _dark_newest(daily_shop)
    [dark] = _sweep(daily_shop, ("removal",))["removal"]
    assert dark.columns == ["note"]
    assert (dark.metrics, dark.components) == (None, None)


def test_a_null_rate_shift_with_no_removal_is_its_own_finding(daily_shop: Shop) -> None:
    _dark_newest(daily_shop, half=True)
    found = _sweep(daily_shop, BOTH)
    assert found["removal"] == []
    [shifted] = found["distribution"]
    assert shifted.columns == ["note", "status"]
    assert ("note", "null_rate", None) in _metrics(shifted)


def test_the_merged_finding_takes_the_higher_severity(daily_shop: Shop) -> None:
    daily_shop.project.config('[contract_ops.severity]\nremoval = "info"\n')
    _dark_newest(daily_shop)
    found = _sweep(daily_shop, BOTH)
    [dark] = found["removal"]
    assert dark.severity == "warning"  # distribution's, over the removal's configured info


def test_the_document_and_the_text_show_the_folded_shift(daily_shop: Shop) -> None:
    _dark_newest(daily_shop)
    args = ("reconcile", "-s", "shop", "--include-removal", "--include-distribution",
            "--dry-run", "--recent-window", RECENT)
    proc = daily_shop.project.cli(*args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    findings = [f for r in doc["results"] for f in r["findings"]]
    assert sorted((f["drift_type"], f["columns"]) for f in findings) == [
        ("distribution", ["status"]), ("removal", ["note"])]
    [dark] = [f for f in findings if f["drift_type"] == "removal"]
    assert [(m["column"], m["metric"]) for m in dark["metrics"]] == [("note", "null_rate")]
    text = daily_shop.project.cli(*args)
    assert text.returncode == 0, text.stderr
    # under the removal finding, right after its coverage; the distribution block has none
    assert ("Coverage: note 90% → 0%\n      Metric: note null_rate 10.0% → 100.0% (+90.0 points)"
            in text.stdout)
    assert text.stdout.count("Metric: note null_rate") == 1


@pytest.mark.parametrize("detectors", [BOTH, ("distribution",)])
def test_an_idle_repeat_sweep_finds_the_same(daily_shop: Shop, detectors: tuple[str, ...]) -> None:
    _dark_newest(daily_shop)
    first = _sweep(daily_shop, detectors)
    again = _sweep(daily_shop, detectors)
    assert {k: [(f.id, f.metrics) for f in v] for k, v in first.items()} == {
        k: [(f.id, f.metrics) for f in v] for k, v in again.items()}
