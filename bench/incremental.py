"""`python -m bench --preset incremental`: removal from load profiles vs the full scan.

On a copy of the built warehouse (its tables carry `_dlt_load_id`), four timed steps, each
`--repeats` times after one untimed first run whose SQL is recorded:

- (a) `full`: removal with `[contract_ops.removal] from_profiles = false`, the full scan;
- (b) `first`: removal from profiles on an empty profile store (a fresh store per run); the
  store of its last run is kept;
- (c) one new load of `--append-share` (2 %) of the rows per table, stamped 10 minutes ago,
  with the planted dark columns still NULL (so the findings stay non-empty); then
  (e) `full_after`, the full scan of the grown warehouse: the reference for (d);
- (d) `repeat`: removal from profiles with a copy of (b)'s store before each run.

(b) must find exactly what (a) found and (d) exactly what (e) found (tables, columns and
coverage), else the bench fails. Rows scanned come from DuckDB's own profiler: the recorded
queries are replayed once more, untimed, with JSON profiling on (`measure.scan_stats`). The
floor replays the same recorded SQL on a plain connection; it leaves out the profile store's
own reads and writes (a local file, not the warehouse).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

from bench.project import BENCH_DIR, Workload, build
from bench.report import ratio_of
from bench.spec import DATASET_NAME, PIPELINE_NAME, Spec, table_name

FROM_PROFILES = "CONTRACT_OPS__REMOVAL__FROM_PROFILES"
PROFILE_STORE = "CONTRACT_OPS__PROFILE_STORE"
RECENT_WINDOW = "CONTRACT_OPS__REMOVAL__RECENT_WINDOW"
#: the issue's targets: a repeat sweep at least 10x cheaper than the first; the first at
#: most 1.3x the full scan
REPEAT_GAIN = 10.0
FIRST_COST = 1.3

STEPS = {
    "full": "(a) removal, full scan (from_profiles=false)",
    "first": "(b) first sweep from profiles, empty store",
    "full_after": "(e) full scan after the new load",
    "repeat": "(d) repeat sweep after the new load",
}


@contextmanager
def environment(values: Mapping[str, str | None]) -> Iterator[None]:
    """Set (a str) or unset (None) environment variables for the duration."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _store_files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + ".wal")]


def remove_store(path: Path) -> None:
    for p in _store_files(path):
        p.unlink(missing_ok=True)


def copy_store(source: Path, target: Path) -> None:
    remove_store(target)
    for src, dst in zip(_store_files(source), _store_files(target), strict=True):
        if src.exists():
            shutil.copyfile(src, dst)


def copy_project(workload: Workload) -> Workload:
    """A fresh copy of the built project: the new load of step (c) must not reach the
    built warehouse, which later runs reuse.

    dlt keeps the directory a pipeline first ran in (`_local.initial_cwd` in its state) and
    opens `<that directory>/<pipeline>.duckdb`: the copy's state is pointed at the copy."""
    root = workload.root.with_name(workload.root.name + "-incremental")
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(workload.root, root)
    state_file = root / "_dlt_data" / "pipelines" / PIPELINE_NAME / "state.json"
    state = json.loads(state_file.read_text())
    state["_local"]["initial_cwd"] = str(root)
    state_file.write_text(json.dumps(state))
    return replace(workload, root=root)


def load_count(database: Path) -> int:
    import duckdb

    con = duckdb.connect(str(database), read_only=True)
    try:
        row = con.execute(f"SELECT count(*) FROM {DATASET_NAME}._dlt_loads").fetchone()  # noqa: S608 (a constant)
    finally:
        con.close()
    return int(row[0]) if row else 0


def check_load_ids(workload: Workload) -> None:
    """Profiles need `_dlt_load_id`: fail before measuring a warehouse without it."""
    import duckdb

    con = duckdb.connect(str(workload.database), read_only=True)
    try:
        rows = con.execute(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = ? "
            "AND table_name = ? AND column_name = '_dlt_load_id'",
            [DATASET_NAME, table_name(0)],
        ).fetchall()
    finally:
        con.close()
    if not rows or not rows[0][0]:
        raise AssertionError(
            f"{workload.database}: `{table_name(0)}` has no `_dlt_load_id`; the bench project "
            "sets `[normalize.parquet_normalizer] add_dlt_load_id = true`: rebuild it "
            "(`--rebuild`)"
        )


def append_load(workload: Workload, built: Workload, share: float, log: Any
                ) -> dict[str, Any]:
    """Step (c): one new load of `share` of the rows per table, stamped 10 minutes ago,
    dark columns still NULL, through the same loader as the build; into the copy only."""
    spec = workload.spec
    loads = (load_count(workload.database), load_count(built.database))
    rows = max(1, round(spec.rows * share))
    stamp = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=10)
    plan = [{"load_at": stamp.isoformat(), "rows": rows, "recent": True,
             "first_id": spec.rows, "kind": "append"}]
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bench.load", str(workload.root), json.dumps(plan)],
        cwd=workload.root,
        env={**workload.env(), "PYTHONPATH": str(BENCH_DIR.parent)},
        check=True,
    )
    seconds = round(time.perf_counter() - started, 2)
    after = (load_count(workload.database), load_count(built.database))
    if after[0] <= loads[0] or after[1] != loads[1]:
        raise AssertionError(
            f"the new load went astray: loads in the copy {loads[0]} -> {after[0]}, in the "
            f"built warehouse {loads[1]} -> {after[1]} (it must only reach the copy)"
        )
    log(f"   (c) appended {rows:,} rows to each of {spec.tables} tables in {seconds:.1f} s")
    return {"rows_per_table": rows, "load_at": stamp.isoformat(), "seconds": seconds}


def timed_step(
    workload: Workload,
    name: str,
    repeats: int,
    cold: bool,
    log: Any,
    before_each: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """One untimed first run (SQL recorded), then `repeats` timed runs of removal, each
    after `before_each` and the floor's replay of the recorded SQL."""
    from bench import measure

    before_each()
    with measure.record_sql() as recorded:
        first = measure.run_ours(workload, "removal", cold_import=cold)
    measure.check_findings(workload, "removal", first)
    if not first.locations or any(str(workload.database) not in x for x in first.locations):
        raise AssertionError(f"{STEPS[name]} read {first.locations}, not {workload.database}")
    measure.replay(workload.database, recorded)  # warm the page cache the same way
    runs: list[measure.Sample] = []
    floors: list[float] = []
    for _ in range(repeats):
        parts = measure.replay(workload.database, recorded)
        floors.append(sum(v for k, v in parts.items() if k != "connect"))
        before_each()
        sample = measure.run_ours(workload, "removal", cold_import=cold)
        measure.check_findings(workload, "removal", sample)
        if sample.signature != first.signature:
            raise AssertionError(f"{STEPS[name]}: findings changed between runs")
        runs.append(sample)
    scans = measure.scan_stats(workload.database, recorded)
    total = measure.ScanStats()
    for stats in scans.values():
        total.add(stats)
    wall = [s.seconds for s in runs]
    in_sql = [sum(s.query_seconds.values()) for s in runs]
    log(f"   {STEPS[name]}: median {statistics.median(wall):.3f} s, "
        f"{total.rows_scanned:,} rows scanned, queries {runs[-1].queries}")
    return {
        "step": STEPS[name],
        "ours": measure.summary(wall),
        "ours_cpu": measure.summary([s.cpu_seconds for s in runs]),
        "floor": measure.summary(floors),
        "query_seconds_median": round(statistics.median(in_sql), 4),
        "store_seconds_median": round(statistics.median(
            sum(s.store_seconds.values()) for s in runs), 4),
        "store_read_median": round(statistics.median(
            sum(s.store_seconds.get(k, 0.0) for k in measure.READS) for s in runs), 4),
        "store_write_median": round(statistics.median(
            s.store_seconds.get("write", 0.0) for s in runs), 4),
        "queries": runs[-1].queries,
        "sql_sent": {k: len(v) for k, v in recorded.items()},
        "rows_scanned": total.rows_scanned,
        "rows_emitted": total.rows_emitted,
        "cells_scanned": total.cells_scanned,
        "scans_by_kind": {k: vars(v) for k, v in scans.items()},
        "findings": first.findings,
        "signature": [list(x) for x in first.signature],
    }


def cold_step(workload: Workload, repeats: int, before_each: Callable[[], None]
              ) -> dict[str, Any]:
    """`repeats` cold `dlt-contract-ops reconcile` processes (bench/cold.py's cron command,
    additive and removal), each after `before_each`, in the current environment."""
    from bench import measure
    from bench.cold import run_cli

    walls: list[float] = []
    seen: list[dict[str, int]] = []
    for _ in range(repeats):
        before_each()
        seconds, findings = run_cli(workload, env=workload.env())
        walls.append(seconds)
        seen.append(findings)
    if any(f != seen[0] for f in seen):
        raise AssertionError(f"cold CLI: findings changed between runs: {seen}")
    return {"ours": measure.summary(walls), "findings": seen[0]}


def targets(steps: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The issue's two targets, from the steps' medians and rows scanned."""
    first, repeat, full = steps["first"], steps["repeat"], steps["full"]
    gain_wall = ratio_of(first["ours"]["median"], repeat["ours"]["median"])
    gain_wall_min = ratio_of(first["ours"]["min"], repeat["ours"]["min"])
    gain_rows = ratio_of(first["rows_scanned"], repeat["rows_scanned"])
    gain_cells = ratio_of(first["cells_scanned"], repeat["cells_scanned"])
    cost_wall = ratio_of(first["ours"]["median"], full["ours"]["median"])
    cost_wall_min = ratio_of(first["ours"]["min"], full["ours"]["min"])
    cost_rows = ratio_of(first["rows_scanned"], full["rows_scanned"])
    cost_cells = ratio_of(first["cells_scanned"], full["cells_scanned"])
    return {
        "repeat_vs_first": {
            "wall": gain_wall, "wall_min": gain_wall_min, "rows_scanned": gain_rows,
            "cells_scanned": gain_cells,
            "findings_identical": repeat["signature"] == steps["full_after"]["signature"],
            "met": bool(gain_wall and gain_rows and gain_wall >= REPEAT_GAIN
                        and gain_rows >= REPEAT_GAIN),
        },
        "first_vs_full": {
            "wall": cost_wall, "wall_min": cost_wall_min, "rows_scanned": cost_rows,
            "cells_scanned": cost_cells,
            "findings_identical": first["signature"] == full["signature"],
            "met": bool(cost_wall is not None and cost_rows is not None
                        and cost_wall <= FIRST_COST and cost_rows <= FIRST_COST),
        },
    }


def bench_incremental(spec: Spec, args: Any, log: Any) -> dict[str, Any]:
    """Steps (a) to (e) on a copy of the built warehouse; the JSON-ready result."""
    built = build(spec, args.workdir, reuse=not args.rebuild, log=log)
    check_load_ids(built)
    workload = copy_project(built)
    os.environ["DLT_DATA_DIR"] = str(workload.data_dir)
    cold = not args.warm_source
    stores = workload.root / "profile_stores"
    stores.mkdir()
    first_store, kept, repeat_store = (stores / f"{n}.duckdb" for n in ("first", "kept", "repeat"))
    full = {FROM_PROFILES: "false", PROFILE_STORE: str(stores / "unused.duckdb")}
    # a recent window set on the command line holds after the new load (steps e and d): the
    # build's recent load then falls before it, as an older load does for an hourly cron
    late = {RECENT_WINDOW: args.recent_window} if args.recent_window else {}

    steps: dict[str, dict[str, Any]] = {}
    log(f"   incremental on a copy: {workload.root}")
    with environment(full):
        steps["full"] = timed_step(workload, "full", args.repeats, cold, log)
    with environment({FROM_PROFILES: "true", PROFILE_STORE: str(first_store)}):
        steps["first"] = timed_step(workload, "first", args.repeats, cold, log,
                                    before_each=lambda: remove_store(first_store))
    profiled = steps["first"]["queries"].get("profile", 0) > 0
    if profiled != first_store.exists():
        raise AssertionError(
            f"the first sweep from profiles sent {steps['first']['queries']} but "
            f"{'wrote no' if profiled else 'wrote a'} store at {first_store}")
    if not profiled:  # the size-aware default scanned every table (`core.profile_choice`)
        log("   (b) every table scanned, none profiled: smaller than `profiles_min_rows`")
    copy_store(first_store, kept)
    appended = append_load(workload, built, args.append_share, log)
    with environment({**full, **late}):
        steps["full_after"] = timed_step(workload, "full_after", args.repeats, cold, log)
    with environment({FROM_PROFILES: "true", PROFILE_STORE: str(repeat_store), **late}):
        steps["repeat"] = timed_step(workload, "repeat", args.repeats, cold, log,
                                     before_each=lambda: copy_store(kept, repeat_store))
    # what cron pays: the same first and repeat sweeps as whole console-script processes
    if args.cold:
        cold_cli: dict[str, Any] = {}
        for name, store, reset in (
            ("first", stores / "cold-first.duckdb", remove_store),
            ("repeat", stores / "cold-repeat.duckdb", lambda s: copy_store(kept, s)),
        ):
            window = late if name == "repeat" else {}
            with environment({FROM_PROFILES: "true", PROFILE_STORE: str(store), **window}):
                cold_cli[name] = cold_step(workload, args.repeats, partial(reset, store))
            log(f"   cold CLI {name}: median {cold_cli[name]['ours']['median']:.3f} s, "
                f"findings {cold_cli[name]['findings']}")
            # removal in the cold process finds what the in-process step found
            ran = steps[name]["findings"].get("removal", 0)
            if cold_cli[name]["findings"].get("removal", 0) != ran:
                raise AssertionError(f"cold CLI {name}: removal found "
                                     f"{cold_cli[name]['findings']}, in process {ran}")

    result: dict[str, Any] = {
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "label": spec.label, "axis": spec.axis, "recent_window": args.recent_window,
        "spec": spec.to_json(), "root": str(workload.root),
        "reused": built.reused, "build_seconds": built.build_seconds,
        "append": appended, "steps": steps, "targets": targets(steps),
    }
    if args.cold:
        first, repeat = cold_cli["first"]["ours"], cold_cli["repeat"]["ours"]
        result["cold_cli"] = {
            **cold_cli, "repeat_vs_first": ratio_of(first["median"], repeat["median"]),
            "repeat_vs_first_min": ratio_of(first["min"], repeat["min"]),
        }
    wrong = [name for name, t in result["targets"].items() if not t["findings_identical"]]
    if wrong:
        from bench.report import incremental_table

        print(incremental_table(result), flush=True)
        raise AssertionError(
            f"{spec.label}: findings from profiles differ from the full scan ({', '.join(wrong)})"
        )
    return result
