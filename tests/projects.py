"""Build real dlt projects on disk for tests: source modules, config, pipeline runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.inprocess import run_cli, run_python

#: the folder mypy keeps its cache in for this test process (`checker_env`), set by
#: `tests/conftest.py` under the run's temporary folder: the modules every check imports
#: (this package, pydantic, dlt) are analysed once a worker, not once a check (5-10 s each)
MYPY_CACHE = "MYPY_CACHE_DIR"


def checker_env() -> dict[str, str]:
    """The environment to run mypy in on a project's code (generated models, patched files):
    mypy cannot follow an editable install's import hook (`make install` makes one), so it is
    shown where this package's source is, as a wheel install would place it; its cache is
    the worker's (`MYPY_CACHE`: mypy checks each cached file's hash, so projects of the same
    module names do not share results)."""
    import dlt_contract_ops

    return {**os.environ, "MYPYPATH": str(Path(dlt_contract_ops.__file__).parents[1])}


class Project:
    """A dlt project folder: `.dlt/config.toml`, `.dlt/secrets.toml`, and source modules."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / ".dlt").mkdir(parents=True, exist_ok=True)
        self._config: list[str] = []
        self._secrets: list[str] = []

    def module(self, dotted: str, code: str) -> Path:
        """Write `code` as module `dotted` (packages get an empty __init__.py)."""
        parts = dotted.split(".")
        folder = self.root
        for pkg in parts[:-1]:
            folder = folder / pkg
            folder.mkdir(exist_ok=True)
            (folder / "__init__.py").touch()
        path = folder / f"{parts[-1]}.py"
        path.write_text(textwrap.dedent(code))
        return path

    def config(self, toml: str) -> None:
        self._config.append(textwrap.dedent(toml))
        (self.root / ".dlt" / "config.toml").write_text("\n".join(self._config))

    def secrets(self, toml: str) -> None:
        self._secrets.append(textwrap.dedent(toml))
        (self.root / ".dlt" / "secrets.toml").write_text("\n".join(self._secrets))

    def source(
        self,
        name: str,
        ref: str,
        *,
        pipeline_name: str | None = None,
        destination: str | None = "duckdb",
        dataset_name: str | None = None,
        **extra: Any,
    ) -> None:
        """Declare `[sources.<name>.contract_ops]`."""
        lines = [f"[sources.{name}.contract_ops]", f"ref = {json.dumps(ref)}"]
        for key, value in (
            ("pipeline_name", pipeline_name),
            ("destination", destination),
            ("dataset_name", dataset_name),
            *extra.items(),
        ):
            if value is not None:
                lines.append(f"{key} = {json.dumps(value)}")
        self.config("\n".join(lines) + "\n")

    def python(self, code: str, *, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run `code` with the project as cwd, in this process as a fresh interpreter would
        (a pipeline run, SQL); see `tests/inprocess.py` for what is restored afterwards."""
        return self._checked(run_python(textwrap.dedent(code), self.root), check)

    def python_process(
        self, code: str, *, check: bool = True, python: str = sys.executable
    ) -> subprocess.CompletedProcess[str]:
        """Run `code` in a fresh interpreter (`python`: another environment's, a venv's) with
        the project as cwd: for what only a process shows (`os._exit`, a module hidden from
        `sys.modules`, signals)."""
        proc = subprocess.run(
            [python, "-c", textwrap.dedent(code)],
            cwd=self.root,
            capture_output=True,
            text=True,
        )
        return self._checked(proc, check)

    @staticmethod
    def _checked(
        proc: subprocess.CompletedProcess[str], check: bool
    ) -> subprocess.CompletedProcess[str]:
        if check and proc.returncode != 0:
            raise AssertionError(
                f"project script failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`dlt-contract-ops ARGS` in the project folder, in this process (the real click
        group; exit code, stdout and stderr as the console script gives them)."""
        return run_cli(args, self.root)

    def cli_process(
        self, *args: str, python: str = sys.executable, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run `dlt-contract-ops ARGS` as a user would, a real process in the project folder:
        for what only a process shows (signals, the interpreter's exit, the entry point).
        `python`: the interpreter (another environment's, a venv's); `env`: variables set on
        top of this process's."""
        return subprocess.run(
            [python, "-m", "dlt_contract_ops.cli", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            env={**os.environ, **env} if env else None,
        )
