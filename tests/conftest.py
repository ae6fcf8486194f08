"""Shared fixtures: an isolated dlt environment per test, and real-server guards."""

from __future__ import annotations

import gc
import importlib.abc
import importlib.util
import os
import signal
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.duckdb_baselines import BASELINES, FOLDER
from tests.postgres_baselines import drop_kept
from tests.projects import MYPY_CACHE, Project
from tests.warehouses import (
    app_project,
    loaded_app,
    loaded_formats,
    loaded_plugin_project,
    loaded_shop,
    shop_project,
)

#: the warehouses loaded once (`tests/warehouses.py`): defined here once for every folder
__all__ = ["app_project", "loaded_app", "loaded_formats", "loaded_plugin_project",
           "loaded_shop", "shop_project"]

os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")

#: where the suite keeps its temporary folders unless TMPDIR says otherwise: in memory, since
#: every DuckDB commit and dlt state write syncs to disk (about 7 ms a sync on a VM's disk,
#: a quarter of a small `pipeline.run`); the databases and files are as real there
RAM_DIR = Path("/dev/shm")
#: `[contract_ops.removal] profiles_min_rows` for every test (see `_isolated_dlt`)
PROFILES_MIN_ROWS = "CONTRACT_OPS__REMOVAL__PROFILES_MIN_ROWS"
#: the young generation's threshold of the cycle collector in the suite's processes (Python's
#: default: 700 allocations)
GC_YOUNG_THRESHOLD = 50_000


#: optional modules that libraries try to import again and again while this suite runs, each
#: a failed search of every `sys.path` entry and of pytest's import hooks: DuckDB's Python
#: client tries `pandas` twice for every bound parameter (5% of the suite's CPU), dlt looks
#: for Colab, Streamlit and the ADBC driver whenever it builds its config providers or
#: PostgreSQL capabilities. Not `airflow`: a test asks `importlib.util.find_spec` about it,
#: which returns None for a module not found, but raises what a finder raises
_ABSENT = ("pandas", "polars", "google.colab", "streamlit", "adbc_driver_postgresql",
           "adbc_driver_manager")


class _KnownAbsent(importlib.abc.MetaPathFinder):
    """Answers at once for the `_ABSENT` modules that are not installed, as a full search
    would: ModuleNotFoundError. Nothing is put in `sys.modules` (pyarrow reads
    `sys.modules["pandas"]` directly), and a module that is installed is searched as usual."""

    def __init__(self) -> None:
        self.names = frozenset(name for name in _ABSENT if not _installed(name))

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name in self.names or name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


sys.meta_path.insert(0, _KnownAbsent())


def pytest_configure(config: pytest.Config) -> None:
    # the cycle collector's young generation collected every 50,000 allocations instead of
    # 700, from start-up on: with Python's defaults the collector took 8% of a loading
    # module's CPU (its large heap walked again and again); what tests drop is still collected
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    if "TMPDIR" not in os.environ and RAM_DIR.is_dir() and os.access(RAM_DIR, os.W_OK):
        os.environ["TMPDIR"] = str(RAM_DIR)  # subprocesses and xdist workers inherit it
        tempfile.tempdir = None  # re-read on next use


def pytest_collection_finish(session: pytest.Session) -> None:
    """What start-up and collection made (dlt, sqlglot, pydantic, the test modules) lives for
    the whole run: frozen, so no collection walks it again (the product's console script does
    the same after its start-up, `commands.common.started`); see `pytest_configure` too."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _sigint_as_a_shell_gives_it() -> None:
    """Ctrl-C as an interactive shell gives it, before every test. A suite started in the
    background by a non-interactive shell inherits SIGINT ignored, and a library a test runs
    may leave it ignored or handled otherwise (seen once: a worker whose Ctrl-C tests then
    hung until their time limit); `_thread.interrupt_main` does nothing while SIGINT is
    ignored, and every process a test starts would inherit the ignore."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def _duckdb_baselines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One folder of loaded baselines for the whole run (`tests/duckdb_baselines.py`; the
    gate's and the lakehouse sweeps' too, under their own prefixes), shared by the xdist
    workers (their base temp folders sit side by side in the session's own)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder = base / FOLDER
    folder.mkdir(exist_ok=True)
    BASELINES.append(folder)
    yield
    BASELINES.remove(folder)


@pytest.fixture(scope="session", autouse=True)
def _mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One mypy cache per worker for the checks of generated and patched models
    (`tests.projects.checker_env`), removed with the run's temporary folders."""
    os.environ[MYPY_CACHE] = str(tmp_path_factory.mktemp("mypy_cache"))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run's PostgreSQL baselines' kept schemas dropped (`tests/postgres_baselines.py`),
    once every worker is done: by the xdist controller, or the one process."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    factory: pytest.TempPathFactory = session.config._tmp_path_factory  # type: ignore[attr-defined]
    drop_kept(factory.getbasetemp() / FOLDER)


@pytest.fixture(autouse=True)
def _isolated_dlt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own dlt data dir (as root dlt would use /var/dlt) and cwd."""
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / "_dlt_data"))
    for key in list(os.environ):
        if key.startswith(("SOURCES__", "CONTRACT_OPS__", "DESTINATION__")):
            monkeypatch.delenv(key)
    # the suite's tables are a few rows, so removal would scan them all, not profile them
    # (`core.profile_choice`); the tests of that choice delete this or set their own
    monkeypatch.setenv(PROFILES_MIN_ROWS, "0")
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """An empty dlt project folder (with `.dlt/`) to write sources and config into."""
    return Project(tmp_path / "project")


def in_ci() -> bool:
    """`CI=true` and `CI=1` (and `yes`) both mean CI: skipped server tests then fail."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_server(host: str, port: int, what: str) -> None:
    """Skip when a local server is unreachable on a laptop; fail under CI=true."""
    try:
        with socket.create_connection((host, port), timeout=2):
            return
    except OSError as exc:
        message = f"{what} is not reachable on {host}:{port} ({exc})"
        if in_ci():
            pytest.fail(f"{message}; CI must run these tests, start the server.")
        pytest.skip(f"{message}; start it to run these tests.")
