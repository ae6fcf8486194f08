"""The plugin tests' project, loaded once per session; each test gets a private copy of the
project and of dlt's data dir (the pipelines' local state), runs the real `dlt` executable,
and dlt's CLI and the `dlt-contract-ops` command group in this process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.inprocess import run_dlt
from tests.projects import Project

BIN = Path(sys.executable).parent


@dataclass
class Loaded:
    """A copy of the loaded project; `dlt(...)`, `dlt_in_process(...)` and `ops(...)` run in
    its folder."""

    project: Project
    data_dir: Path

    @property
    def root(self) -> Path:
        return self.project.root

    def run(self, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*argv], cwd=self.root, capture_output=True, text=True,
            env={**os.environ, "DLT_DATA_DIR": str(self.data_dir), **env},
        )

    def dlt(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """`dlt ARGS` through the `dlt` executable of this environment."""
        return self.run(str(BIN / "dlt"), *args, **env)

    def dlt_in_process(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """`dlt ARGS` in this process, as the `dlt` executable would run it (its plugins
        discovered anew under `env`; see `tests.inprocess.run_dlt`): for what dlt's CLI and
        the plugin do, not how the executable starts."""
        return run_dlt(args, self.root, {"DLT_DATA_DIR": str(self.data_dir), **env})

    def console(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """`dlt-contract-ops ARGS` through its console script (the installed entry point)."""
        return self.run(str(BIN / "dlt-contract-ops"), *args, **env)

    def ops(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """`dlt-contract-ops ARGS` in its folder, in this process, with `env` set for the
        call only (the console script as a process: `console`)."""
        saved = dict(os.environ)
        os.environ.update({"DLT_DATA_DIR": str(self.data_dir), **env})
        try:
            return self.project.cli(*args)
        finally:
            os.environ.clear()
            os.environ.update(saved)


@pytest.fixture
def loaded(loaded_plugin_project: tuple[Path, Path], tmp_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> Loaded:
    """A private copy of the loaded project and its data dir (`loaded_plugin_project`,
    `tests/warehouses.py`)."""
    root, data = loaded_plugin_project
    shutil.copytree(root, tmp_path / "shop")
    shutil.copytree(data, tmp_path / "data")
    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / "data"))
    return Loaded(Project(tmp_path / "shop"), tmp_path / "data")
