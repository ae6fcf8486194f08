"""The sample query's bounds: a configured timestamp column carries the producer's times,
which may be old, so it is bounded by rows only; `_dlt_load_id` also by time."""

from __future__ import annotations

from datetime import timedelta

from dlt_contract_ops.engine.reconcile import run
from tests.integration import shop
from tests.projects import Project


def test_rows_older_than_the_sample_window_still_sample_on_a_timestamp_axis(
    shop_project: Project,
) -> None:
    # the shop's rows were stamped at T0 + id hours: ninety days later they are all older
    # than the 30-day sample window
    later = shop.T0 + timedelta(days=90)
    [result] = run(["shop"], detectors=("additive",), dry_run=True,
                   project_dir=shop_project.root, removal={"now": later})
    assert result.error is None, result.error
    [finding] = [f for f in result.findings if f.resource == "OrderItems"]
    assert finding.samples["userId"] == ["U5"]
    assert finding.first_seen is not None
