"""Time the reconciler in-process and the raw-SQL floor on the same warehouse.

Ours: `dlt_contract_ops.reconcile.run` as a library caller uses it, with the per-kind query
counters and query time the adapters keep, captured as each sweep closes. The floor: the very
queries the reconciler renders (metadata, one coverage aggregate per table, one sample query
per drifted table), pre-rendered and executed on a plain DuckDB connection.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from bench.project import Workload
from bench.spec import (
    FIXED_COLUMNS,
    LOAD_TIMESTAMP_COLUMN,
    PIPELINE_NAME,
    SOURCE_NAME,
    column_name,
    extra_column_name,
    table_name,
)

#: what `make bench` times, and the detectors each runs
MODES: dict[str, tuple[str, ...]] = {
    "additive": ("additive",),
    "removal": ("removal",),
    "both": ("additive", "removal"),
}


@dataclass
class SweepStats:
    """Counters of one sweep, read just before its adapters close."""

    queries: Counter[str] = field(default_factory=Counter)
    query_seconds: Counter[str] = field(default_factory=Counter)
    sources_built: int = 0
    adapters: list[Any] = field(default_factory=list)


@contextmanager
def capture_sweeps() -> Iterator[list[SweepStats]]:
    """Record every sweep's counters: `Sweep.close` is wrapped for the duration."""
    from dlt_contract_ops.context import Sweep

    seen: list[SweepStats] = []
    original = Sweep.close

    def close(self: Sweep) -> None:
        stats = SweepStats(sources_built=self.sources_built, adapters=list(self.adapters))
        for adapter in self.adapters:
            stats.queries.update(adapter.queries)
            stats.query_seconds.update(adapter.query_seconds)
        seen.append(stats)
        original(self)

    Sweep.close = close  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        Sweep.close = original  # type: ignore[method-assign]


@dataclass
class Sample:
    """One timed run."""

    seconds: float
    queries: dict[str, int]
    query_seconds: dict[str, float]
    findings: dict[str, int]
    sources_built: int


def summary(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 4), "median": round(statistics.median(values), 4)}


def _forget_source_module() -> None:
    """Drop the imported bench source so a run pays the user's module import like a cron run."""
    for name in [m for m in sys.modules if m == PIPELINE_NAME or m.startswith(PIPELINE_NAME + ".")]:
        del sys.modules[name]


def run_ours(workload: Workload, mode: str, *, cold_import: bool) -> tuple[Sample, Any]:
    """One reconcile of the bench source; returns the sample and an adapter (for the floor)."""
    from dlt_contract_ops.reconcile import run

    if cold_import:
        _forget_source_module()
    gc.collect()
    with capture_sweeps() as sweeps:
        started = time.perf_counter()
        results = run(
            [SOURCE_NAME], detectors=MODES[mode], dry_run=True, project_dir=workload.root
        )
        seconds = time.perf_counter() - started
    errors = [r.error for r in results if r.error]
    if errors:
        raise RuntimeError(f"reconcile {mode} failed on {workload.root}: {errors}")
    stats = sweeps[-1]
    findings: Counter[str] = Counter()
    for r in results:
        findings[r.detector] += len(r.findings)
    sample = Sample(
        seconds=seconds,
        queries=dict(stats.queries),
        query_seconds={k: round(v, 4) for k, v in stats.query_seconds.items()},
        findings=dict(findings),
        sources_built=stats.sources_built,
    )
    return sample, (stats.adapters[0] if stats.adapters else None)


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
    """The reconciler's queries, rendered once, ready for a plain connection."""

    metadata: tuple[str, list[Any]]
    coverage: list[tuple[str, list[Any]]]
    sample: list[tuple[str, list[Any]]]


def floor_queries(workload: Workload, adapter: Any) -> FloorQueries:
    """Build the same SQL the reconciler runs, through its own builders and renderer."""
    from datetime import datetime, timezone

    from dlt_contract_ops.core.columns import TimeAxis
    from dlt_contract_ops.queries import axis_bound, coverage_query, sample_query

    spec = workload.spec
    axis = TimeAxis(LOAD_TIMESTAMP_COLUMN, "timestamp")
    now = datetime.now(timezone.utc)
    recent_start = now - timedelta(hours=6)
    baseline_start = recent_start - timedelta(days=7)
    params = [axis_bound(recent_start, axis), axis_bound(baseline_start, axis)]
    # what removal reads: every declared column but the time axis, sorted
    declared = sorted(
        [c for c in FIXED_COLUMNS if c != LOAD_TIMESTAMP_COLUMN]
        + [column_name(j) for j in range(spec.columns - len(FIXED_COLUMNS))]
    )
    extras = [extra_column_name(k) for k in range(spec.extra_columns)]
    return FloorQueries(
        metadata=(adapter.render(adapter.metadata_query()), adapter.metadata_params()),
        coverage=[
            (adapter.render(coverage_query(adapter.table(table_name(i)), declared, axis)), params)
            for i in range(spec.tables)
        ],
        sample=[
            (adapter.render(sample_query(adapter.table(table_name(i)), extras, axis)), [])
            for i in spec.drifted_tables()
        ],
    )


def run_floor(workload: Workload, queries: FloorQueries) -> dict[str, float]:
    """Seconds per query kind (and to connect) on a fresh read-only DuckDB connection."""
    import duckdb

    gc.collect()
    out: dict[str, float] = {}
    started = time.perf_counter()
    con = duckdb.connect(str(workload.database), read_only=True)
    out["connect"] = time.perf_counter() - started
    try:
        for kind, items in (
            ("metadata", [queries.metadata]),
            ("coverage", queries.coverage),
            ("sample", queries.sample),
        ):
            started = time.perf_counter()
            for sql, params in items:
                con.execute(sql, params or None).fetchall()
            out[kind] = time.perf_counter() - started
    finally:
        con.close()
    return out


def floor_seconds(mode: str, parts: dict[str, float]) -> float:
    kinds = {"additive": ("metadata", "sample"), "removal": ("metadata", "coverage")}
    wanted = {"metadata", "sample", "coverage"} if mode == "both" else set(kinds[mode])
    return sum(parts[k] for k in wanted)


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


@contextmanager
def record_sql() -> Iterator[dict[str, set[str]]]:
    """The SQL text each query kind ran with, for checking the floor runs the same queries."""
    from dlt_contract_ops.destinations.base import SqlClientAdapter

    seen: dict[str, set[str]] = {}
    original = SqlClientAdapter.run

    def run(self: SqlClientAdapter, query: Any, params: Any, kind: Any) -> Any:
        seen.setdefault(kind, set()).add(self.render(query))
        return original(self, query, params, kind)

    SqlClientAdapter.run = run  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        SqlClientAdapter.run = original  # type: ignore[method-assign]


def check_same_queries(recorded: dict[str, set[str]], floor: FloorQueries) -> None:
    """Fail when the floor would time other SQL than the reconciler ran."""
    planned = {
        "metadata": {floor.metadata[0]},
        "coverage": {sql for sql, _ in floor.coverage},
        "sample": {sql for sql, _ in floor.sample},
    }
    for kind, sqls in planned.items():
        got = recorded.get(kind, set())
        if got != sqls:
            raise AssertionError(
                f"the floor's {kind} queries differ from the reconciler's: "
                f"{len(sqls - got)} only in the floor, {len(got - sqls)} only in the reconciler"
            )
