"""The shop project, loaded and drifted once per session; tests copy it when they need to."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration import shop
from tests.projects import Project


@pytest.fixture(scope="session")
def loaded_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop project after one real load and the out-of-band drift. Read-only: copy it."""
    base = tmp_path_factory.mktemp("shop_session")
    with pytest.MonkeyPatch.context() as mp:
        # session fixtures run before the per-test isolation: isolate the load here
        mp.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
        mp.setenv("DLT_DATA_DIR", str(base / "_dlt_data"))
        project = Project(base / "project")
        shop.build(project)
        shop.load(project)
    shop.drift(project.root)
    return project.root


@pytest.fixture
def shop_project(loaded_shop: Path, tmp_path: Path) -> Project:
    """A private copy of the loaded shop project (its own files, fresh imports)."""
    root = tmp_path / "shop"
    shutil.copytree(loaded_shop, root)
    shop.reset_calls(root)
    return Project(root)
