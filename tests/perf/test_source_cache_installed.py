"""The source cache and models shared as an installed package (`pip install acme-models`).

Two releases of a real `acme-models` distribution are built as wheels and pip-installed into a
real virtualenv; `reconcile` runs there as a process, the way a cron runs it, against a DuckDB
dataset dlt loaded. The cache must never answer for code it did not see: an upgraded package,
a removed one, another interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.engine.reconcile import run
from tests.projects import Project

CUSTOMER_V1 = """
from pydantic import BaseModel


class Customer(BaseModel):
    cust_id: int
    name: str
    email: str
"""

#: 2.0 adds a field the warehouse does not have
CUSTOMER_V2 = CUSTOMER_V1 + "    tier: str\n"

SETUP = """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "acme-models"
version = "{version}"
requires-python = ">=3.10"

[tool.setuptools]
packages = ["acme_models"]
"""

MODELS = """
from pathlib import Path

import dlt

from acme_models import Customer

CALLS = Path(__file__).with_name("calls.txt")


@dlt.source(name="crm")
def crm():
    with CALLS.open("a") as fh:  # every call of the source function leaves a line
        fh.write("called\\n")

    @dlt.resource(columns=Customer)
    def customers():
        yield from ()

    return customers
"""

LOAD = """
import dlt

pipe = dlt.pipeline("crm_pipe", destination="duckdb", dataset_name="crm_data")
pipe.run([{"cust_id": i, "name": f"n{i}", "email": f"u{i}@x.io"} for i in range(5)],
         table_name="customers")
"""


def _pip(python: str | Path, *args: str) -> None:
    proc = subprocess.run(
        [str(python), "-m", "pip", *args, "--quiet", "--no-input",
         "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheels of acme-models 1.0 and 2.0."""
    base = tmp_path_factory.mktemp("acme")
    out: dict[str, Path] = {}
    for version, code in (("1.0", CUSTOMER_V1), ("2.0", CUSTOMER_V2)):
        source = base / f"src-{version}"
        (source / "acme_models").mkdir(parents=True)
        (source / "acme_models" / "__init__.py").write_text(code)
        (source / "pyproject.toml").write_text(SETUP.format(version=version))
        _pip(sys.executable, "wheel", "--no-deps", "--no-build-isolation", "--no-index",
             "--wheel-dir", str(base / "wheels"), str(source))
        [out[version]] = (base / "wheels").glob(f"acme_models-{version}-*.whl")
    return out


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A virtualenv's interpreter. Its site-packages reaches this environment's packages (dlt,
    Pydantic, pip) through a `.pth` file, as a venv with them installed would; acme-models is
    installed into the venv's own site-packages."""
    root = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True,
                   timeout=120)
    python = root / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    outer = sysconfig.get_paths()["purelib"]
    Path(purelib, "_outer_environment.pth").write_text(
        f"import site; site.addsitedir({outer!r})\n"
    )
    return python


@pytest.fixture
def crm(project: Project) -> Project:
    project.python(LOAD)
    project.module("crm_models", textwrap.dedent(MODELS))
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("crm", "crm_models:crm", pipeline_name="crm_pipe", dataset_name="crm_data")
    return project


def _reconcile(project: Project, python: str | Path, **env: str) -> tuple[int, list[Any]]:
    """Exit code and what `reconcile --format json` says of source `crm`: its findings as
    (detector, table, columns), or its error."""
    proc = project.cli_process("reconcile", "-s", "crm", "--dry-run", "--fail-on-drift",
                               "--format", "json", python=str(python), env=env)
    assert proc.stdout, proc.stderr
    results = json.loads(proc.stdout)["results"]  # one a detector
    assert {r["source"] for r in results} == {"crm"}
    errors = sorted({r["error"] for r in results if r["error"]})
    if errors:
        return proc.returncode, errors
    return proc.returncode, sorted(
        (r["detector"], f["table"], f["columns"]) for r in results for f in r["findings"]
    )


def _uncached(project: Project, python: str | Path) -> tuple[int, list[Any]]:
    return _reconcile(project, python, CONTRACT_OPS__SOURCE_CACHE="false")


def _calls(project: Project) -> int:
    path = project.root / "calls.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_an_upgraded_models_package_is_read(
    crm: Project, venv: Path, wheels: dict[str, Path]
) -> None:
    _pip(venv, "install", "--no-deps", "--no-index", str(wheels["1.0"]))
    assert _reconcile(crm, venv) == (0, [])  # cached
    assert _reconcile(crm, venv) == (0, [])
    assert _calls(crm) == 1  # a hit: the test below means something

    _pip(venv, "install", "--no-deps", "--no-index", str(wheels["2.0"]))  # the upgrade
    drift = _reconcile(crm, venv)
    assert drift == (3, [("missing", "customers", ["tier"])])
    assert _calls(crm) == 2  # built
    assert drift == _uncached(crm, venv)
    assert _calls(crm) == 3
    assert _reconcile(crm, venv) == drift  # cached again, for 2.0: a hit
    assert _calls(crm) == 3


def test_where_importing_the_models_fails_the_entry_is_not_read(
    crm: Project, venv: Path, wheels: dict[str, Path]
) -> None:
    """The run reports the import error, as a run without the cache does: from another
    interpreter (this one, without acme-models), then in the venv once it is uninstalled."""
    _pip(venv, "install", "--no-deps", "--no-index", str(wheels["1.0"]))
    _reconcile(crm, venv)
    assert _reconcile(crm, venv) == (0, [])
    assert _calls(crm) == 1  # a hit: the runs below mean something

    other = _reconcile(crm, sys.executable)
    assert other == _uncached(crm, sys.executable)
    assert _reconcile(crm, venv) == (0, [])  # the venv's entry still holds
    assert _calls(crm) == 1

    _pip(venv, "uninstall", "--yes", "acme-models")
    removed = _reconcile(crm, venv)
    assert removed == _uncached(crm, venv)
    for code, errors in (other, removed):
        assert code == 1
        [error] = errors
        assert "No module named 'acme_models'" in error


@pytest.fixture
def in_this_process(venv: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The venv's site-packages on this process's path, as a scheduler running reconciles in
    one long-lived process has its environment's; acme-models is forgotten afterwards."""
    purelib = subprocess.run(
        [str(venv), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    monkeypatch.syspath_prepend(purelib)
    yield
    for name in ("acme_models", "crm_models"):
        sys.modules.pop(name, None)


def _found_here(project: Project) -> list[tuple[str, str, tuple[str, ...]]]:
    """What a reconcile in this process finds."""
    results = run(["crm"], dry_run=True, project_dir=project.root)
    assert [r.error for r in results if r.error] == []
    return sorted((r.detector, f.table, tuple(f.columns)) for r in results for f in r.findings)


def test_a_package_upgraded_under_a_running_process_is_not_cached(
    crm: Project, venv: Path, wheels: dict[str, Path], in_this_process: None
) -> None:
    """The process imported acme-models 1.0 in an earlier run; 2.0 is installed since. Its
    build still reads 1.0 from memory (so does a run without the cache): what it found must
    not be cached under 2.0's distribution, or a new process would be told 1.0's columns."""
    _pip(venv, "install", "--no-deps", "--no-index", str(wheels["1.0"]))
    assert _found_here(crm) == []
    _pip(venv, "install", "--no-deps", "--no-index", str(wheels["2.0"]))
    assert _found_here(crm) == []  # acme_models 1.0, imported by the run before
    assert _calls(crm) == 2  # built: the entry was for 1.0

    sys.modules.pop("acme_models")  # as a new process: 2.0 is imported
    assert _found_here(crm) == [("missing", "customers", ("tier",))]
    assert _calls(crm) == 3


def test_a_process_that_imported_the_package_before_its_first_run_is_served(
    crm: Project, venv: Path, wheels: dict[str, Path]
) -> None:
    """A scheduler imports its models package at start, then runs reconciles: the package
    was installed before the process began, so what the first run found is cached."""
    _pip(venv, "install", "--no-deps", "--no-index", str(wheels["1.0"]))
    crm.python_process(
        """
        import acme_models
        from dlt_contract_ops.engine.reconcile import run

        for _ in range(3):
            assert [r.error for r in run(["crm"], dry_run=True) if r.error] == []
        """,
        python=str(venv),
    )
    assert _calls(crm) == 1
