"""The shop project, loaded and drifted once per session; tests copy it when they need to."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.duckdb_baselines import copy_project, load_once
from tests.integration import shop
from tests.projects import Project


@pytest.fixture(scope="session")
def loaded_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop project after one real load and the out-of-band drift. Read-only: copy it."""
    return load_once(tmp_path_factory, "shop_session", load_and_drift)


def load_and_drift(project: Project) -> None:
    """The shop's real load, then the drift dlt never made (`shop.drift`)."""
    shop.build(project)
    shop.load(project)
    shop.drift(project.root)


@pytest.fixture
def shop_project(loaded_shop: Path, tmp_path: Path) -> Project:
    """A private copy of the loaded shop project (its own files, fresh imports)."""
    project = copy_project(loaded_shop, tmp_path / "shop")
    shop.reset_calls(project.root)
    return project
