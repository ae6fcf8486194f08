"""Time the reconciler in-process and the raw-SQL floor on the same warehouse.

Ours: `dlt_contract_ops.engine.reconcile.run` as a library caller uses it, with the per-kind query
counters and query time the adapters keep, captured as each sweep closes. The floor: the very
SQL text and parameters the reconciler sent to DuckDB (metadata, one coverage aggregate per
table, one sample query per drifted table), recorded once and replayed on a plain read-only
DuckDB connection: the database's unavoidable work, with no Python around it.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.project import Workload
from bench.spec import PIPELINE_NAME, SOURCE_NAME
from dlt_contract_ops.engine.sweep_stats import SweepStats, observe_sweeps

#: what `make bench` times, and the detectors each runs
MODES: dict[str, tuple[str, ...]] = {
    "additive": ("additive",),
    "removal": ("removal",),
    "both": ("additive", "removal"),
}


@contextmanager
def capture_sweeps() -> Iterator[list[SweepStats]]:
    """Record every sweep's counters (the library's `observe_sweeps` seam)."""
    with observe_sweeps() as seen:
        yield seen


#: the profile store's methods that read it (`capture_store`)
READS = ("history", "histories", "read", "whole", "counts")


@contextmanager
def capture_store() -> Iterator[dict[str, float]]:
    """Seconds spent in the local profile store per method (`read`, `whole` and `counts`
    read, `write` stores the new loads): `ProfileStore`'s methods are wrapped for the
    duration (a method that calls another counts once, as the outer one)."""
    from dlt_contract_ops.profiles.store import ProfileStore

    spent: dict[str, float] = {}
    originals = {name: getattr(ProfileStore, name) for name in (*READS, "write")
                 if hasattr(ProfileStore, name)}

    def timed(name: str, method: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            depth.append(name)
            try:
                return method(*args, **kwargs)
            finally:
                depth.pop()
                if not depth:  # `history` calls `histories` calls `read`: the outer one
                    spent[name] = spent.get(name, 0.0) + time.perf_counter() - started
        return wrapper

    depth: list[str] = []
    for name, method in originals.items():
        setattr(ProfileStore, name, timed(name, method))
    try:
        yield spent
    finally:
        for name, method in originals.items():
            setattr(ProfileStore, name, method)


@contextmanager
def capture_connection() -> Iterator[dict[str, float]]:
    """Seconds the adapters' sessions spent opening and closing their connections (DuckDB
    loads and frees the file's catalog there: driver time, not ours, and not in
    `query_seconds`). `ClientSession`'s open and close on the session are wrapped for the
    duration."""
    from dlt_contract_ops.destinations.connection import ClientSession

    spent = {"connect": 0.0, "close": 0.0}
    originals = {"connect": ClientSession._open_on_session,
                 "close": ClientSession._close_on_session}

    def timed(kind: str) -> Any:
        method = originals[kind]

        def wrapper(self: Any) -> None:
            started = time.perf_counter()
            try:
                method(self)
            finally:
                spent[kind] += time.perf_counter() - started
        return wrapper

    ClientSession._open_on_session = timed("connect")  # type: ignore[method-assign]
    ClientSession._close_on_session = timed("close")  # type: ignore[method-assign]
    try:
        yield spent
    finally:
        ClientSession._open_on_session = originals["connect"]  # type: ignore[method-assign]
        ClientSession._close_on_session = originals["close"]  # type: ignore[method-assign]


@dataclass
class Sample:
    """One timed run."""

    seconds: float
    cpu_seconds: float  # this process, every thread: Python and DuckDB's workers
    queries: dict[str, int]
    query_seconds: dict[str, float]
    findings: dict[str, int]
    sources_built: int
    #: every finding as (detector, table, columns, coverage): what two runs must agree on
    signature: list[tuple[Any, ...]] = field(default_factory=list)
    #: where the sweep's adapters read (`DestinationAdapter.location`)
    locations: list[str] = field(default_factory=list)
    #: seconds in the local profile store per method (`capture_store`)
    store_seconds: dict[str, float] = field(default_factory=dict)
    #: CPU seconds of the calling thread alone: our Python (the queries run on the
    #: adapter's session thread, DuckDB on its own workers)
    thread_cpu_seconds: float = 0.0
    #: seconds the sessions spent opening and closing connections (`capture_connection`)
    connection_seconds: dict[str, float] = field(default_factory=dict)


def summary(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 4), "median": round(statistics.median(values), 4)}


def _forget_source_module() -> None:
    """Drop the imported bench source so a run pays the user's module import like a cron run."""
    for name in [m for m in sys.modules if m == PIPELINE_NAME or m.startswith(PIPELINE_NAME + ".")]:
        del sys.modules[name]


def run_ours(workload: Workload, mode: str, *, cold_import: bool) -> Sample:
    """One reconcile of the bench source, as a library caller runs it."""
    from dlt_contract_ops.engine.reconcile import run

    if cold_import:
        _forget_source_module()
    gc.collect()
    with capture_sweeps() as sweeps, capture_store() as store, capture_connection() as conn:
        cpu = time.process_time()
        thread_cpu = time.thread_time()
        started = time.perf_counter()
        results = run(
            [SOURCE_NAME], detectors=MODES[mode], dry_run=True, project_dir=workload.root
        )
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu
        thread_cpu = time.thread_time() - thread_cpu
    errors = [r.error for r in results if r.error]
    if errors:
        raise RuntimeError(f"reconcile {mode} failed on {workload.root}: {errors}")
    stats = sweeps[-1]
    findings: Counter[str] = Counter()
    signature = []
    for r in results:
        findings[r.detector] += len(r.findings)
        for f in r.findings:
            coverage = sorted((c, v.baseline, v.recent) for c, v in (f.coverage or {}).items())
            signature.append((r.detector, f.table, tuple(f.columns), tuple(coverage)))
    return Sample(
        seconds=seconds,
        cpu_seconds=cpu,
        queries=dict(stats.queries),
        query_seconds={k: round(v, 4) for k, v in stats.query_seconds.items()},
        findings=dict(findings),
        sources_built=stats.sources_built,
        signature=sorted(signature),
        locations=sorted(stats.locations),
        store_seconds={k: round(v, 4) for k, v in store.items()},
        thread_cpu_seconds=thread_cpu,
        connection_seconds={k: round(v, 4) for k, v in conn.items()},
    )


def check_findings(workload: Workload, mode: str, sample: Sample) -> None:
    """A run that misses planted drift measured nothing: fail loudly."""
    expected = {"additive": workload.spec.drifted, "removal": workload.spec.dark}
    for detector in MODES[mode]:
        got = sample.findings.get(detector, 0)
        if got != expected[detector]:
            raise AssertionError(
                f"{workload.spec.label} {mode}: {detector} found {got} drifted tables, "
                f"expected {expected[detector]} (workload {workload.root})"
            )


@dataclass(frozen=True)
class FloorQueries:
    """The SQL text and parameters the reconciler sent to DuckDB, per query kind."""

    metadata: list[tuple[str, list[Any]]]
    coverage: list[tuple[str, list[Any]]]
    sample: list[tuple[str, list[Any]]]


@contextmanager
def record_sql() -> Iterator[dict[str, list[tuple[str, list[Any]]]]]:
    """Record the exact (SQL, parameters) each query kind sent to the driver.

    `SqlClientAdapter._start` is wrapped: it hands each rendered query, its kind, text and
    values, to the session thread, which passes the text and values to `_execute` unchanged
    (`run`, `run_all` and the PostgreSQL pool's fallback all start queries there).
    """
    from dlt_contract_ops.destinations.base import SqlClientAdapter

    if "_start" not in vars(SqlClientAdapter):
        raise RuntimeError(
            "SqlClientAdapter has no `_start` any more: update bench/measure.py:record_sql to "
            "record the SQL where the adapter now hands it to its session"
        )
    seen: dict[str, list[tuple[str, list[Any]]]] = {}
    start = SqlClientAdapter._start

    def start_recorded(self: Any, job: Any) -> Any:
        seen.setdefault(job.kind, []).append((job.sql, list(job.values)))
        return start(self, job)

    SqlClientAdapter._start = start_recorded  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        SqlClientAdapter._start = start  # type: ignore[method-assign]


def floor_queries(recorded: dict[str, list[tuple[str, list[Any]]]]) -> FloorQueries:
    """The floor replays exactly what the reconciler sent; nothing is rebuilt by hand."""
    return FloorQueries(
        metadata=recorded.get("metadata", []),
        coverage=recorded.get("coverage", []),
        sample=recorded.get("sample", []),
    )


def run_floor(workload: Workload, queries: FloorQueries) -> dict[str, float]:
    """Wall seconds per query kind (and to connect) on a fresh read-only DuckDB connection;
    `cpu_<kind>` the process CPU seconds of the same."""
    import duckdb

    gc.collect()
    out: dict[str, float] = {}
    started = time.perf_counter()
    con = duckdb.connect(str(workload.database), read_only=True)
    out["connect"] = time.perf_counter() - started
    try:
        for kind, items in (
            ("metadata", queries.metadata),
            ("coverage", queries.coverage),
            ("sample", queries.sample),
        ):
            cpu = time.process_time()
            started = time.perf_counter()
            for sql, params in items:
                con.execute(sql, params or None).fetchall()
            out[kind] = time.perf_counter() - started
            out[f"cpu_{kind}"] = time.process_time() - cpu
    finally:
        con.close()
    return out


def replay(database: Path, recorded: dict[str, list[tuple[str, list[Any]]]]) -> dict[str, float]:
    """Like `run_floor`, for whatever kinds were recorded: wall seconds per kind (and
    `connect`, not part of the floor) on a fresh read-only DuckDB connection."""
    import duckdb

    gc.collect()
    out: dict[str, float] = {}
    started = time.perf_counter()
    con = duckdb.connect(str(database), read_only=True)
    out["connect"] = time.perf_counter() - started
    try:
        for kind, items in sorted(recorded.items()):
            started = time.perf_counter()
            for sql, params in items:
                con.execute(sql, params or None).fetchall()
            out[kind] = time.perf_counter() - started
    finally:
        con.close()
    return out


#: the operator metrics DuckDB's JSON profile carries for the scan count
_SCAN_METRICS = json.dumps(dict.fromkeys((
    "OPERATOR_TYPE", "OPERATOR_NAME", "OPERATOR_CARDINALITY", "OPERATOR_ROWS_SCANNED",
    "EXTRA_INFO"), "true"))


@dataclass
class ScanStats:
    """What DuckDB's own profiler says the table scans of some queries read.

    `rows_scanned`: the TABLE_SCAN operators' `operator_rows_scanned`, rows read from storage
    after zone-map (min/max) pruning of row groups, before filters. `rows_emitted`: their
    `operator_cardinality`, rows passed on after filter pushdown. `cells_scanned`: each scan's
    rows read times the columns it projects (a row of one column costs less than a row of 30).
    """

    rows_scanned: int = 0
    rows_emitted: int = 0
    cells_scanned: int = 0
    scans: int = 0

    def add(self, other: ScanStats) -> None:
        self.rows_scanned += other.rows_scanned
        self.rows_emitted += other.rows_emitted
        self.cells_scanned += other.cells_scanned
        self.scans += other.scans


def _scans(node: dict[str, Any]) -> ScanStats:
    out = ScanStats()
    if node.get("operator_type") == "TABLE_SCAN":
        info = node.get("extra_info") or {}
        projections = info.get("Projections") or []
        width = len(projections) if isinstance(projections, list) else 1
        rows = int(node.get("operator_rows_scanned") or 0)
        out.rows_scanned += rows
        out.rows_emitted += int(node.get("operator_cardinality") or 0)
        out.cells_scanned += rows * max(1, width)
        out.scans += 1
    for child in node.get("children") or []:
        out.add(_scans(child))
    return out


def scan_stats(
    database: Path, recorded: dict[str, list[tuple[str, list[Any]]]]
) -> dict[str, ScanStats]:
    """Replay the recorded queries once more with DuckDB's JSON profiler on (never timed):
    per kind, what their table scans read (see `ScanStats`)."""
    import tempfile

    import duckdb

    out: dict[str, ScanStats] = {}
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "profile.json"
        con = duckdb.connect(str(database), read_only=True)
        try:
            con.execute("PRAGMA enable_profiling='json'")
            con.execute(f"PRAGMA profiling_output='{profile}'")
            con.execute(f"SET custom_profiling_settings='{_SCAN_METRICS}'")
            for kind, items in sorted(recorded.items()):
                stats = out.setdefault(kind, ScanStats())
                for sql, params in items:
                    con.execute(sql, params or None).fetchall()
                    stats.add(_scans(json.loads(profile.read_text())))
        finally:
            con.close()
    return out


def floor_seconds(mode: str, parts: dict[str, float], prefix: str = "") -> float:
    """The floor of a mode: the query kinds its detectors run (`prefix="cpu_"` for CPU)."""
    kinds = {"additive": ("metadata", "sample"), "removal": ("metadata", "coverage")}
    wanted = {"metadata", "sample", "coverage"} if mode == "both" else set(kinds[mode])
    return sum(parts[prefix + k] for k in wanted)


def environment() -> dict[str, Any]:
    """The machine, for the report."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    import dlt
    import duckdb

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "mem_gib": mem_gib,
        "python": sys.version.split()[0],
        "dlt": dlt.__version__,
        "duckdb": duckdb.__version__,
    }



def startup(repeats: int = 5) -> dict[str, float]:
    """Median wall seconds of `dlt-contract-ops --help` and of a bare interpreter start."""
    import subprocess

    cli = Path(sys.executable).with_name("dlt-contract-ops")
    out: dict[str, float] = {}
    for key, argv in (("python -c pass", [sys.executable, "-c", "pass"]),
                      ("dlt-contract-ops --help", [str(cli), "--help"])):
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=True)
            times.append(time.perf_counter() - started)
        out[key] = round(statistics.median(times), 4)
    return out
