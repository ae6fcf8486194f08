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
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.duckdb_baselines import BASELINES, FOLDER
from tests.postgres_baselines import drop_kept
from tests.projects import Project

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


#: how often the tests' in-process dlt loads look at their jobs (dlt: every second at most)
LOADER_POLL_S = 0.02


@pytest.fixture(autouse=True, scope="session")
def _loader_polls_often() -> Iterator[None]:
    """dlt's loader sleeps up to a second between looks at its jobs unless a finished job
    wakes it, and the file job of a Delta or Iceberg table is created finished, so it never
    does: every such load idled a second (dlt 1.31, `Load.load_single_package`). The loads
    of this suite look every 20 ms instead; what they load is the same."""
    from dlt.load.load import Load

    original = Load.__init__

    def init(self: Load, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._run_loop_sleep_duration = min(self._run_loop_sleep_duration, LOADER_POLL_S)

    Load.__init__ = init  # type: ignore[method-assign]
    yield
    Load.__init__ = original  # type: ignore[method-assign]


@pytest.fixture(autouse=True, scope="session")
def _one_set_up_a_load() -> Iterator[None]:
    """Two things dlt does again and again within one `pipeline.run` / `.extract` /
    `.normalize` / `.load` (the ingest gate calls the steps one by one), done once a call
    in this suite (what is loaded is the same):
    - A load into a DuckDB file opens the database four or more times (state sync, package
      start, each job, package end), and each open builds DuckDB's whole catalog of
      functions again (15-20 ms of CPU) and each last close checkpoints. The first
      connection dlt opens to a file is kept open until the call returns, so dlt's later
      opens reuse the open database; the call's last close checkpoints as before.
    - `Destination.capabilities()` resolves the destination's whole configuration on every
      call (5-8 times a run). Within one call, where nothing changes the configuration,
      the first answer for a destination and naming convention is reused (a copy of it
      each time)."""
    import copy

    from dlt.common.destination.reference import Destination
    from dlt.destinations.impl.duckdb.configuration import DuckDbConnectionPool
    from dlt.pipeline.pipeline import Pipeline

    lock = threading.RLock()
    kept: dict[tuple[str, bool], Any] = {}
    depth = [0]
    caps_of: dict[tuple[int, Any], tuple[Any, Any]] = {}
    borrow = DuckDbConnectionPool.borrow_conn
    steps = {name: getattr(Pipeline, name) for name in ("run", "extract", "normalize", "load")}
    capabilities = Destination.capabilities

    def once_capabilities(self: Destination, config: Any = None, naming: Any = None) -> Any:
        if config is not None or not depth[0]:
            return capabilities(self, config, naming)
        # dlt makes a new naming object with each schema it reloads: what the answer
        # depends on is the convention and its length bound
        convention = None if naming is None else (type(naming), naming.max_length)
        key = (id(self), convention)
        with lock:
            found = caps_of.get(key)
        if found is None:
            found = (self, capabilities(self, config, naming))  # the id stays taken
            with lock:
                caps_of[key] = found
        return copy.copy(found[1])

    def kept_borrow(self: DuckDbConnectionPool, *args: Any, **kwargs: Any) -> Any:
        key = (self.credentials._conn_str(), self.credentials.read_only)
        with lock:
            held_here = depth[0] and key[0] != ":memory:" and not self.always_open_connection
            if held_here and self._conn is None and self._conn_owner and key in kept:
                self._conn = kept[key].cursor()  # the pool closes it as its own
        conn = borrow(self, *args, **kwargs)
        with lock:
            if held_here and key not in kept and self._conn is not None and self._conn_owner:
                kept[key] = self._conn  # this call closes it at its end, not the pool
                self._conn_owner = False
        return conn

    def held(method: Any) -> Any:
        def call(self: Pipeline, *args: Any, **kwargs: Any) -> Any:
            with lock:
                depth[0] += 1
            try:
                return method(self, *args, **kwargs)
            finally:
                with lock:
                    depth[0] -= 1
                    if not depth[0]:
                        for conn in kept.values():
                            conn.close()
                        kept.clear()
                        caps_of.clear()

        return call

    DuckDbConnectionPool.borrow_conn = kept_borrow  # type: ignore[method-assign]
    Destination.capabilities = once_capabilities  # type: ignore[method-assign]
    for name, step in steps.items():
        setattr(Pipeline, name, held(step))
    yield
    DuckDbConnectionPool.borrow_conn = borrow  # type: ignore[method-assign]
    Destination.capabilities = capabilities  # type: ignore[method-assign]
    for name, step in steps.items():
        setattr(Pipeline, name, step)


#: the modules that call dlt's `is_secret_hint` by a name of their own (`from ... import`)
_SECRET_HINT_USERS = (
    "dlt.common.configuration.specs.base_configuration",
    "dlt.common.configuration",
    "dlt.common.configuration.resolve",
    "dlt.common.configuration.providers.environ",
    "dlt.common.configuration.providers.vault",
    "dlt.pipeline.trace",
)


@pytest.fixture(autouse=True, scope="session")
def _secret_hints_remembered() -> Iterator[None]:
    """dlt asks whether a config field's type is a secret for every field, provider and
    section it looks in (`is_secret_hint`: 10-40 µs of `typing` introspection a call, some
    ten thousand calls a test that loads and sweeps); that was a quarter of the CPU of the
    suite's loading tests. The answer depends on the type alone, so the suite's workers
    remember it per type; what dlt resolves is the same. At the end of the run every
    remembered answer is asked of dlt again and must agree."""
    import importlib

    from dlt.common.configuration.specs import base_configuration

    original = base_configuration.is_secret_hint
    answers: dict[Any, bool] = {}

    def is_secret_hint(hint: Any) -> bool:
        try:
            return answers[hint]
        except KeyError:
            answer = answers[hint] = original(hint)
            return answer
        except TypeError:  # a type that cannot be a key (an unhashable `Annotated` extra)
            return original(hint)

    users = [importlib.import_module(name) for name in _SECRET_HINT_USERS]
    for module in users:
        assert module.is_secret_hint is original, module.__name__
        module.is_secret_hint = is_secret_hint  # type: ignore[attr-defined]
    yield
    for module in users:
        module.is_secret_hint = original  # type: ignore[attr-defined]
    differing = [hint for hint, answer in answers.items() if original(hint) != answer]
    assert not differing, f"dlt's is_secret_hint answers differently now for {differing}"


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
