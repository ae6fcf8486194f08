"""The format tests' project, loaded once per session; each test gets its own copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_contract_ops.detectors.registry import selected
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import ReconcileResult
from tests.duckdb_baselines import copy_project
from tests.projects import Project


@pytest.fixture
def drifted(loaded_formats: Path, tmp_path: Path) -> Project:
    """A private copy of the loaded project (`tests/warehouses.py`: shop and events, loaded
    and drifted)."""
    return copy_project(loaded_formats, tmp_path / "warehouse")


@pytest.fixture
def results(drifted: Project) -> list[ReconcileResult]:
    """Every source with removal included, plus an unknown one (an error block), never
    alerting: the results every renderer is fed."""
    return run(
        ["events_src", "shop", "shop_extra", "nope"],
        detectors=selected({"removal"}),
        dry_run=True,
        alert_sinks=(),
        project_dir=drifted.root,
    )


def declare_broken(project: Project) -> None:
    """Declare `nope` with a `ref` that cannot be imported: a source that errors (exit 1),
    where an undeclared name is a usage error (exit 2) refused before anything runs."""
    config = project.root / ".dlt" / "config.toml"
    config.write_text(config.read_text() + '\n[sources.nope.contract_ops]\nref = "nope_mod:src"\n')


def finding_count(results: list[ReconcileResult]) -> int:
    return sum(len(r.findings) for r in results)
