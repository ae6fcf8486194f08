"""The warehouses the suite loads once, in one place: each a real dlt load into DuckDB (and
drift made out of band), built by `duckdb_baselines.load_once` once per session, that is once
per xdist worker whichever folders its modules come from. Read-only: a test copies the one it
uses (the copying fixtures here, or its folder's own).

`tests/conftest.py` imports these fixtures, so each has ONE definition for the whole suite: a
module or conftest that imported one again would get a second definition and load it twice.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.duckdb_baselines import copy_project, load_once
from tests.projects import Project


@pytest.fixture(scope="session")
def loaded_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`tests.integration.shop`: `shop` and `shop_extra` after one real load, then the drift
    dlt never made (`shop.drift`). The integration, orchestrator, fault and format tests'."""
    from tests.integration import shop

    def build(project: Project) -> None:
        shop.build(project)
        shop.load(project)
        shop.drift(project.root)

    return load_once(tmp_path_factory, "shop", build)


@pytest.fixture
def shop_project(loaded_shop: Path, tmp_path: Path) -> Project:
    """A private copy of the loaded shop project (its own files, fresh imports)."""
    from tests.integration import shop

    project = copy_project(loaded_shop, tmp_path / "shop")
    shop.reset_calls(project.root)
    return project


@pytest.fixture(scope="session")
def loaded_formats(tmp_path_factory: pytest.TempPathFactory, loaded_shop: Path) -> Path:
    """The format tests' warehouse: the loaded shop (copied), plus the events source with a
    column gone dark and a column named to break HTML, XML and workflow commands."""
    from tests.formats import warehouse

    def build(project: Project) -> None:
        shutil.copytree(loaded_shop / "project", project.root, dirs_exist_ok=True)
        warehouse.add_events(project)

    return load_once(tmp_path_factory, "formats", build)


@pytest.fixture(scope="session")
def loaded_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`tests.sinks.app_project` after one real load and the drift: the sink, ack and
    alert-loss tests'."""
    from tests.sinks.app_project import build_and_load

    return load_once(tmp_path_factory, "app", build_and_load)


@pytest.fixture
def app_project(loaded_app: Path, tmp_path: Path) -> Project:
    """A private copy of the loaded app project."""
    return copy_project(loaded_app, tmp_path / "app")


@pytest.fixture(scope="session")
def loaded_plugin_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """`tests.plugin.project` after the real loads and the drift: (project, dlt data dir),
    the plugin tests' (they copy both: `tests/plugin/conftest.py`)."""
    from tests.plugin import project as plugin

    def build(project: Project) -> None:
        plugin.build(project)
        plugin.load(project)
        plugin.drift(project.root)

    base = load_once(tmp_path_factory, "plugin", build)
    return base / "project", base / "_dlt_data"


@contextmanager
def held_by_a_writer(db: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holds the DuckDB file `db` open for writing (DuckDB's lock) until the
    block ends; yields that process."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         f"import duckdb, time; c = duckdb.connect({str(db)!r}); "
         "print('held', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait(30)
