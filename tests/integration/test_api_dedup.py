"""The Python API takes `dedup=` like the CLI's `--no-dedup`."""

from __future__ import annotations

import logging

import pytest

from dlt_contract_ops import detect_removal, reconcile_all, reconcile_source
from tests.projects import Project

ALERTS_LOGGER = "dlt_contract_ops.alerts"


def _alerts(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == ALERTS_LOGGER and r.levelno == logging.WARNING]


def test_dedup_on_by_default_and_off_per_call(
    shop_project: Project, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    first = reconcile_source("shop", project_dir=shop_project.root)
    assert len(_alerts(caplog)) == len(first.findings) == 2

    caplog.clear()
    reconcile_source("shop", project_dir=shop_project.root)
    assert _alerts(caplog) == []  # the same drift within realert_after: not sent again

    caplog.clear()
    reconcile_source("shop", project_dir=shop_project.root, dedup=False)
    assert len(_alerts(caplog)) == 2

    caplog.clear()
    results = reconcile_all(project_dir=shop_project.root, dedup=False)
    assert len(_alerts(caplog)) == sum(len(r.findings) for r in results) >= 2

    # detect_removal accepts it too (the shop has no dark column: nothing to send)
    caplog.clear()
    assert detect_removal("shop", project_dir=shop_project.root, dedup=False).error is None
