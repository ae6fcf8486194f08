"""`python -m bench`: build workloads, time ours vs the raw-SQL floor (and the peer), report.

    python -m bench                       # the default: 50x30x200k and 200x30x2k
    python -m bench --preset small        # seconds: a CI smoke run
    python -m bench --preset tiny --repeats 1 --startup-repeats 1   # the test suite's smoke
    python -m bench --preset linearity    # 200 then 2000 tables x 30 x 2k
    python -m bench --preset incremental  # removal from load profiles: first vs repeat sweep
    python -m bench --preset store --repeats 3 --no-cold   # profile sweeps vs a plain scan:
                                          # hourly loads, then 200x30x2k, 50x30x200k, 20x30x2M
    python -m bench --preset small --incremental --repeats 1
    python -m bench --preset 50x30x200k --peer --profile
    python -m bench --tables 100 --columns 60 --rows 50k --drifted 3 --dark 3
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.spec import INCREMENTAL_PRESETS, PRESETS, Spec, parse_count, parse_shape

DEFAULT_WORKDIR = Path(__file__).resolve().parent / ".work"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", default="default",
                   help=f"one of {', '.join(PRESETS)} or a shape TABLESxCOLUMNSxROWS "
                        "(default: default)")
    shape = p.add_argument_group("workload (override the preset's values)")
    shape.add_argument("--tables", type=int)
    shape.add_argument("--columns", type=int, help="model fields per table, id and loaded_at "
                                                   "included")
    shape.add_argument("--rows", type=parse_count, help="rows per table over all loads, e.g. 200k")
    shape.add_argument("--drifted", type=int, help="tables given undeclared columns (additive)")
    shape.add_argument("--dark", type=int, help="tables whose declared columns go NULL (removal)")
    shape.add_argument("--loads", type=int, help="baseline loads before the recent one")
    shape.add_argument("--days", type=float, help="the baseline loads span this many days")
    shape.add_argument("--axis", choices=("loaded_at", "load_id"),
                       help="the time axis removal cuts its windows on: the `loaded_at` column "
                            "(default) or `_dlt_load_id` (no load_timestamp_column configured)")
    p.add_argument("--recent-window", default=None,
                   help="--incremental: removal's recent window after the new load, so the "
                        "repeat reads only the new load again: shorter than the build's recent "
                        "load is old (30 min at the build, more on reuse), longer than the new "
                        "load (10 min old at the append) gets while steps e and d run; "
                        "default: the product's (6h)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per mode (default 5)")
    p.add_argument("--incremental", action="store_true",
                   help="run the incremental steps (removal from load profiles: full scan, "
                        "first sweep, one new load, repeat sweep) instead of the modes; "
                        "implied by --preset incremental")
    p.add_argument("--append-share", type=float, default=0.02,
                   help="--incremental: the new load's rows, a share of --rows (default 0.02)")
    p.add_argument("--startup-repeats", type=int, default=5,
                   help="runs of each start-up figure (`python -c pass`, `dlt-contract-ops "
                        "--help`), the median reported (default 5)")
    p.add_argument("--peer", action="store_true",
                   help="also run dlt-ops==0.1.0 from PyPI in bench/.peer-venv")
    p.add_argument("--peer-repeats", type=int, default=1,
                   help="timed peer runs per mode (default 1: the peer is slow)")
    p.add_argument("--profile", action="store_true",
                   help="profile one `both` run per workload with pyinstrument, in process "
                        "and as a cold `dlt-contract-ops reconcile` process")
    p.add_argument("--no-cold", dest="cold", action="store_false",
                   help="skip timing the cold CLI process (bench/cold.py) against the cold "
                        "SQL floor")
    p.add_argument("--warm-source", action="store_true",
                   help="keep the bench source module imported between runs (default: each "
                        "run imports it, as a fresh cron process would)")
    p.add_argument("--rebuild", action="store_true", help="never reuse a built warehouse")
    p.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR,
                   help="where warehouses are built (default: bench/.work)")
    p.add_argument("--results-dir", type=Path, default=None,
                   help="where the JSON and profiles go (default: bench/results)")
    return p.parse_args(argv)


def specs_for(args: argparse.Namespace) -> list[Spec]:
    base = PRESETS.get(args.preset)
    specs = list(base) if base is not None else [parse_shape(args.preset)]
    overrides = {k: getattr(args, k) for k in
                 ("tables", "columns", "rows", "drifted", "dark", "loads", "days", "axis")
                 if getattr(args, k) is not None}
    return [replace(s, **overrides).validate() for s in specs]


def _budget_problems(spec: Spec, mode: str, queries: dict[str, int]) -> list[str]:
    expected = {"metadata": 1,
                "coverage": spec.tables if mode in ("removal", "both") else 0,
                "sample": spec.drifted if mode in ("additive", "both") else 0}
    return [f"{mode}: {k} queries {queries.get(k, 0)} != {v}"
            for k, v in expected.items() if queries.get(k, 0) != v]


def bench_workload(spec: Spec, args: argparse.Namespace, log: Any) -> dict[str, Any]:
    """Build/reuse, then time every mode and the floor; returns the JSON-ready result."""
    from bench import measure
    from bench.project import build

    workload = build(spec, args.workdir, reuse=not args.rebuild, log=log)
    os.environ["DLT_DATA_DIR"] = str(workload.data_dir)
    # the modes time removal's full scan (one coverage aggregate per table, the query budget);
    # removal from load profiles is `--preset incremental`'s
    os.environ["CONTRACT_OPS__REMOVAL__FROM_PROFILES"] = "false"
    cold = not args.warm_source

    # first run: pays imports; checks findings and that the floor runs the reconciler's SQL
    with measure.record_sql() as recorded:
        first = measure.run_ours(workload, "both", cold_import=cold)
    measure.check_findings(workload, "both", first)
    floor_queries = measure.floor_queries(recorded)
    measure.run_floor(workload, floor_queries)  # warm the page cache the same way

    samples: dict[str, list[measure.Sample]] = {m: [] for m in measure.MODES}
    floors: list[dict[str, float]] = []
    for r in range(args.repeats):
        floors.append(measure.run_floor(workload, floor_queries))
        for mode in measure.MODES:
            sample = measure.run_ours(workload, mode, cold_import=cold)
            measure.check_findings(workload, mode, sample)
            samples[mode].append(sample)
        log(f"   repeat {r + 1}/{args.repeats}: both {samples['both'][-1].seconds:.3f} s, "
            f"floor {measure.floor_seconds('both', floors[-1]):.3f} s")

    result: dict[str, Any] = {
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "label": spec.label, "spec": spec.to_json(), "root": str(workload.root),
        "reused": workload.reused, "build_seconds": workload.build_seconds,
        "first_run_seconds": round(first.seconds, 4), "modes": {},
        "floor": {k: measure.summary([f[k] for f in floors]) for k in floors[0]},
    }
    problems: list[str] = []
    for mode, runs in samples.items():
        ours = [s.seconds for s in runs]
        floor = [measure.floor_seconds(mode, f) for f in floors]
        # a cold cron run's raw SQL opens its connection too: the floor with it, reported beside
        floor_connected = [x + f["connect"] for x, f in zip(floor, floors, strict=True)]
        ours_cpu = [s.cpu_seconds for s in runs]
        floor_cpu = [measure.floor_seconds(mode, f, "cpu_") for f in floors]
        in_sql = [sum(s.query_seconds.values()) for s in runs]
        last = runs[-1]
        # ours less the time the driver spent executing queries (the adapter's clock); the
        # Python of it: less opening and closing the connection too (DuckDB's catalog)
        overhead = statistics.median(o - q for o, q in zip(ours, in_sql, strict=True))
        python = statistics.median(
            o - q - sum(s.connection_seconds.values())
            for o, q, s in zip(ours, in_sql, runs, strict=True))
        thread_cpu = statistics.median(s.thread_cpu_seconds for s in runs)
        problems += _budget_problems(spec, mode, last.queries)
        if last.sources_built != 1:
            problems.append(f"{mode}: source built {last.sources_built} times, expected once")
        result["modes"][mode] = {
            "ours": measure.summary(ours), "floor": measure.summary(floor),
            "ratio_median": round(statistics.median(ours) / statistics.median(floor), 3),
            "ratio_min": round(min(ours) / min(floor), 3),
            "floor_with_connect": measure.summary(floor_connected),
            "ratio_with_connect_median": round(
                statistics.median(ours) / statistics.median(floor_connected), 3),
            "ours_cpu": measure.summary(ours_cpu), "floor_cpu": measure.summary(floor_cpu),
            "cpu_ratio_median": round(statistics.median(ours_cpu) / statistics.median(floor_cpu),
                                      3),
            "queries": last.queries, "findings": last.findings,
            "sources_built": last.sources_built,
            "query_seconds_median": round(statistics.median(in_sql), 4),
            "overhead_median": round(overhead, 4),
            # issue 40: per-table Python outside SQL, target <= 1 ms at 2,000 x 30 x 2k
            "per_table_outside_ms": round(1000 * overhead / spec.tables, 3),
            "per_table_python_ms": round(1000 * python / spec.tables, 3),
            "per_table_thread_cpu_ms": round(1000 * thread_cpu / spec.tables, 3),
            "connection_seconds_median": {
                k: round(statistics.median(s.connection_seconds.get(k, 0.0) for s in runs), 4)
                for k in ("connect", "close")},
        }
    if problems:
        raise AssertionError(f"{spec.label}: query budget broken: " + "; ".join(problems))
    if args.cold:
        from bench.cold import bench_cold

        result["cold"] = bench_cold(workload, args.repeats)
    if args.profile:
        result["profile"] = str(profile_both(workload, cold, args.results_dir))
        result["profile_cold"] = str(profile_cold(workload, args.results_dir))
    if args.peer:
        result["peer"] = peer_result(workload, args, log)
    return result


def profile_both(workload: Any, cold: bool, results_dir: Path | None) -> Path:
    """pyinstrument text and HTML of one `both` run, next to the JSON results."""
    from pyinstrument import Profiler

    from bench import measure
    from bench.report import RESULTS_DIR

    out_dir = results_dir or RESULTS_DIR

    profiler = Profiler(interval=0.0005)
    profiler.start()
    measure.run_ours(workload, "both", cold_import=cold)
    profiler.stop()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"profile-{workload.spec.label}.txt"
    path.write_text(profiler.output_text(unicode=False, color=False, show_all=False))
    (out_dir / f"profile-{workload.spec.label}.html").write_text(profiler.output_html())
    return path


def profile_cold(workload: Any, results_dir: Path | None) -> Path:
    """pyinstrument HTML of one cold `dlt-contract-ops reconcile` process (bench/cold.py)."""
    import subprocess

    from bench.cold import ARGS, _console_script, _env
    from bench.report import RESULTS_DIR

    out_dir = results_dir or RESULTS_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"profile-cold-{workload.spec.label}.html"
    subprocess.run([sys.executable, "-m", "pyinstrument", "-i", "0.0005", "-r", "html", "-o",
                    str(path), _console_script(), *ARGS],
                   cwd=workload.root, env=_env(workload), capture_output=True)
    return path


def peer_result(workload: Any, args: argparse.Namespace, log: Any) -> dict[str, Any]:
    from bench.peer import PeerUnavailable, run_peer

    log(f"   peer: dlt-ops 0.1.0, {args.peer_repeats} run(s) per mode ...")
    try:
        return run_peer(workload, ["additive", "removal"], args.peer_repeats,
                        cold_import=not args.warm_source, log=log)
    except PeerUnavailable as exc:
        log(f"   peer unavailable: {exc}")
        return {"error": str(exc)}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table and the path of the JSON results."""
    os.environ["RUNTIME__DLTHUB_TELEMETRY"] = "false"
    args = parse_args(argv)
    try:
        specs = specs_for(args)
    except ValueError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    if args.startup_repeats < 1:
        print("bench: --startup-repeats must be at least 1", file=sys.stderr)
        return 2
    logging.getLogger("dlt").setLevel(logging.ERROR)

    from bench import measure
    from bench.report import growth_table, workload_table, write_json

    def log(message: str) -> None:
        print(message, flush=True)

    if args.incremental or args.preset in INCREMENTAL_PRESETS:
        return main_incremental(specs, args, log)

    results = []
    for spec in specs:
        results.append(bench_workload(spec, args, log))
        print(workload_table(results[-1]), flush=True)
    print(growth_table(results))
    started = measure.startup(args.startup_repeats)
    print(f"\n== start-up (median of {args.startup_repeats}): "
          + ", ".join(f"{k} {v:.3f} s" for k, v in started.items()))
    document = {"preset": args.preset, "repeats": args.repeats,
                "startup_repeats": args.startup_repeats,
                "machine": measure.environment(), "startup": started, "workloads": results}
    path = write_json(document, args.results_dir) if args.results_dir else write_json(document)
    print(f"\nresults: {path}")
    return 0


def main_incremental(specs: list[Spec], args: argparse.Namespace, log: Any) -> int:
    """`--preset incremental`: the steps of bench/incremental.py per workload."""
    from bench import measure
    from bench.incremental import bench_incremental
    from bench.report import incremental_table, scan_table, write_json

    if not 0 < args.append_share <= 1:
        print("bench: --append-share must be in (0, 1]", file=sys.stderr)
        return 2
    results = []
    for spec in specs:
        results.append(bench_incremental(spec, args, log))
        print(incremental_table(results[-1]), flush=True)
    print(scan_table(results), flush=True)
    document = {"preset": "incremental" if args.incremental else args.preset,
                "repeats": args.repeats, "append_share": args.append_share,
                "machine": measure.environment(), "workloads": results}
    path = write_json(document, args.results_dir) if args.results_dir else write_json(document)
    print(f"\nresults: {path}")
    return 0
