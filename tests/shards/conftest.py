"""The sharding tests' warehouse (`tests/shards/warehouse.py`), loaded once per session and
copied by each test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.duckdb_baselines import copy_project, load_once
from tests.projects import Project
from tests.shards import warehouse


@pytest.fixture(scope="session")
def loaded_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return load_once(tmp_path_factory, "shards", warehouse.build)


@pytest.fixture
def wh(loaded_warehouse: Path, tmp_path: Path) -> Project:
    """A private copy of the loaded warehouse."""
    return copy_project(loaded_warehouse, tmp_path / "wh")
