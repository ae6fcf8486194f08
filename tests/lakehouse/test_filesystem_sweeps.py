"""The profile sweep (removal, distribution) on dlt's `filesystem` destination: real loads of
Parquet files into a local bucket, `reconcile` through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lakehouse import sweeps
from tests.projects import Project


@pytest.fixture
def shop(project: Project, tmp_path: Path) -> Project:
    sweeps.setup(project, tmp_path / "bucket")
    return project


def test_removal_and_distribution_on_parquet_files(shop: Project) -> None:
    sweeps.load(shop, *sweeps.STEADY, sweeps.DRIFTED)
    code, doc, stderr = sweeps.sweep(shop)
    assert code == 0, stderr
    found = sweeps.findings(doc)
    assert sorted(found) == [("distribution", "orders"), ("removal", "orders")]
    dark = found[("removal", "orders")]
    assert dark["columns"] == ["note"]
    assert dark["coverage"]["note"] == {"baseline": 0.9, "recent": 0.0}
    shifted = {(m["column"], m["metric"], m["category"]): m
               for m in found[("distribution", "orders")]["metrics"]}
    other = shifted["status", "category_share", "other"]
    assert (other["baseline"], other["current"]) == (0.0, 0.25)
    assert shifted["note", "null_rate", None]["current"] == 1.0
