"""The cold cron process: `dlt-contract-ops reconcile` as a whole subprocess, what cron runs.

Three figures per workload, each the median of `repeats` alternating runs:

- **cold CLI**: the console script, from `exec` to exit (imports, config, source build,
  connection, queries, state, exit);
- **cold floor**: a fresh interpreter that imports DuckDB, connects read-only and runs exactly
  the SQL that CLI sent (recorded by a traced run), then exits: the least any process can do;
- **to first query**: seconds from `exec` to the first query handed to the destination, in a
  traced run (`python -m bench.cold trace ...`, which wraps the adapter where it starts a
  query and otherwise runs what the console script runs, `cli.console`);
- **import dlt**: `python -c "import dlt"`, the fixed start no reconcile can skip (the user's
  source module imports dlt too), alternated with the two above;
- **--help**: `dlt-contract-ops --help`, alternated likewise.

The target (issue 40): the cold CLI at most `import dlt` + `TARGET_FLOOR_FACTOR` x its floor,
and `--help` at most `HELP_TARGET_SECONDS`.

`time.perf_counter` is CLOCK_MONOTONIC on Linux, shared by every process: the parent's clock
before `exec` and the child's at its first query are on one time line.

`python -m bench.cold compare WORKLOAD_DIR REPEATS OLD NEW` runs the cold CLI of two (or more)
checkouts of the package alternately on one built workload: how a change moved the fixed cost.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.project import BENCH_DIR, Workload
from bench.spec import SOURCE_NAME

#: the sweep a cron job runs: every default detector plus removal, no alert
ARGS = ("reconcile", "-s", SOURCE_NAME, "--include-removal", "--dry-run", "--format", "json")

#: the cold CLI may take `import dlt` plus this many times its floor (issue 40)
TARGET_FLOOR_FACTOR = 1.15
#: `dlt-contract-ops --help`, seconds (issue 40)
HELP_TARGET_SECONDS = 0.1

FLOOR = """
import json, sys, duckdb
queries = json.load(open(sys.argv[2]))
con = duckdb.connect(sys.argv[1], read_only=True)
for sql, params in queries:
    con.execute(sql, params or None).fetchall()
con.close()
"""


def _console_script() -> str:
    return str(Path(sys.executable).with_name("dlt-contract-ops"))


def _env(workload: Workload) -> dict[str, str]:
    return {**workload.env(), "CONTRACT_OPS__REMOVAL__FROM_PROFILES": "false"}


def _findings(stdout: str) -> dict[str, int]:
    document = json.loads(stdout)
    counts: dict[str, int] = {}
    for result in document["results"]:
        counts[result["detector"]] = counts.get(result["detector"], 0) + len(result["findings"])
    return counts


def run_cli(workload: Workload, env: dict[str, str] | None = None) -> tuple[float, dict[str, int]]:
    """Wall seconds of one cold `dlt-contract-ops reconcile`, and its findings per detector
    (`env`: the process's whole environment; default: the workload's, without profiles)."""
    started = time.perf_counter()
    proc = subprocess.run([_console_script(), *ARGS], cwd=workload.root,
                          env=_env(workload) if env is None else env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # 1: drift found
        raise RuntimeError(f"cold reconcile exited {proc.returncode}: {proc.stderr[-2000:]}")
    return seconds, _findings(proc.stdout)


def trace(workload: Workload) -> dict[str, Any]:
    """One traced cold run: seconds to the first query, and every (SQL, params) it sent."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "trace.json"
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "bench.cold", "trace", str(out), *ARGS],
            cwd=workload.root, env={**_env(workload), "PYTHONPATH": str(BENCH_DIR.parent)},
            capture_output=True, text=True,
        )
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"traced reconcile exited {proc.returncode}: "
                               f"{proc.stderr[-2000:]}")
        doc = json.loads(out.read_text())
    return {"first_query_seconds": round(doc["first"] - started, 4), "queries": doc["queries"]}


def run_floor(workload: Workload, queries: list[tuple[str, list[Any]]]) -> float:
    """Wall seconds of a fresh interpreter running `queries` on its own connection."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(queries, f)
    try:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", FLOOR, str(workload.database), f.name],
                       env=_env(workload), check=True, capture_output=True)
        return time.perf_counter() - started
    finally:
        os.unlink(f.name)


def _timed(argv: list[str], workload: Workload) -> float:
    """Wall seconds of one process (it must exit 0)."""
    started = time.perf_counter()
    subprocess.run(argv, cwd=workload.root, env=_env(workload), check=True, capture_output=True)
    return time.perf_counter() - started


def _summary(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 4), "median": round(statistics.median(values), 4)}


def bench_cold(workload: Workload, repeats: int) -> dict[str, Any]:
    """The cold CLI against the cold floor, `import dlt` and `--help`, alternating; the
    first-query time of a traced run."""
    traced = trace(workload)
    queries = [(sql, params) for sql, params in traced["queries"]]
    run_floor(workload, queries)  # warm the page cache as the CLI's first run did
    # the traced run's `sys.path` differs from the console script's, so its source cache
    # entry does not serve the CLI: one untimed run writes the CLI's, as cron's first run does
    run_cli(workload)
    runs: dict[str, list[float]] = {"ours": [], "floor": [], "import_dlt": [], "help": []}
    findings: dict[str, int] = {}
    for _ in range(repeats):
        seconds, findings = run_cli(workload)
        runs["ours"].append(seconds)
        runs["floor"].append(run_floor(workload, queries))
        runs["import_dlt"].append(_timed([sys.executable, "-c", "import dlt"], workload))
        runs["help"].append(_timed([_console_script(), "--help"], workload))
    medians = {k: statistics.median(v) for k, v in runs.items()}
    target = medians["import_dlt"] + TARGET_FLOOR_FACTOR * medians["floor"]
    return {
        **{k: _summary(v) for k, v in runs.items()},
        "ratio_median": round(medians["ours"] / medians["floor"], 3),
        "target": round(target, 4),
        "target_met": medians["ours"] <= target,
        "above_import_dlt_vs_floor": round(
            (medians["ours"] - medians["import_dlt"]) / medians["floor"], 3),
        "help_target_met": medians["help"] <= HELP_TARGET_SECONDS,
        "first_query_seconds": traced["first_query_seconds"],
        "queries": len(queries),
        "findings": findings,
    }


def _traced_main(out: str, argv: list[str]) -> int:
    """The console script's `console`, with the adapter's query start recorded (the child of
    `trace`)."""
    from dlt_contract_ops.destinations.base import SqlClientAdapter

    seen: list[tuple[str, list[Any]]] = []
    first: list[float] = []
    start = SqlClientAdapter._start

    def start_recorded(self: Any, job: Any) -> Any:
        if not first:
            first.append(time.perf_counter())
        seen.append((job.sql, [v if isinstance(v, int | float | str) or v is None else str(v)
                               for v in job.values]))
        return start(self, job)

    SqlClientAdapter._start = start_recorded  # type: ignore[method-assign]
    import atexit

    from dlt_contract_ops.cli import console

    # written on the way out: the console script ends its process itself (`exit_process`),
    # after the `atexit` handlers
    atexit.register(lambda: Path(out).write_text(
        json.dumps({"first": first[0] if first else None, "queries": seen})))
    sys.argv = ["dlt-contract-ops", *argv]
    console()  # what the console script runs; it does not return
    return 1


#: the CLI of the package at sys.argv[1] (a checkout of any commit), not the installed one:
#: the editable install's finder is dropped first. The first query's clock and CPU go to
#: sys.argv[2] ("-": not recorded); the rest is the command line.
_FROM_CHECKOUT = """
import json, sys, time
root, out = sys.argv[1], sys.argv[2]
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f)]
sys.path.insert(0, root)
first = []
if out != "-":
    from dlt_contract_ops.destinations.base import SqlClientAdapter
    start = SqlClientAdapter._start
    def start_recorded(self, job):
        if not first:
            first.append((time.perf_counter(), time.process_time()))
        return start(self, job)
    SqlClientAdapter._start = start_recorded
import atexit
import dlt_contract_ops.cli as cli
assert cli.__file__.startswith(root), cli.__file__
if out != "-":  # a console script that ends its process itself runs `atexit` handlers first
    atexit.register(lambda: json.dump(first[0] if first else None, open(out, "w")))
sys.argv = ["dlt-contract-ops", *sys.argv[3:]]
try:
    getattr(cli, "console", cli.main)()
except SystemExit:
    pass
"""


def compare(workload: Workload, roots: list[str], repeats: int) -> dict[str, dict[str, float]]:
    """The cold CLI of each package checkout in `roots` (folders holding `dlt_contract_ops`,
    e.g. `git archive <commit> dlt_contract_ops | tar -x -C /tmp/old`), alternating, on one
    workload: medians of wall and CPU seconds to the first query and to exit, and of
    `--help`."""
    import resource

    def children_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    runs: dict[str, dict[str, list[float]]] = {
        r: {k: [] for k in ("first_query", "first_query_cpu", "exit", "exit_cpu", "help")}
        for r in roots
    }
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "first.json")
        # a data dir per checkout: each keeps its own source cache (their keys may differ),
        # written by one untimed run, as the timed runs of `bench_cold` find it
        env = {}
        for i, root in enumerate(roots):
            data = Path(tmp) / f"data-{i}"
            shutil.copytree(workload.data_dir, data)
            env[root] = {**_env(workload), "DLT_DATA_DIR": str(data)}
            subprocess.run([sys.executable, "-c", _FROM_CHECKOUT, root, "-", *ARGS],
                           cwd=workload.root, env=env[root], capture_output=True)
        for _ in range(repeats):
            for root in roots:
                cpu, started = children_cpu(), time.perf_counter()
                proc = subprocess.run([sys.executable, "-c", _FROM_CHECKOUT, root, out, *ARGS],
                                      cwd=workload.root, env=env[root],
                                      capture_output=True, text=True)
                runs[root]["exit"].append(time.perf_counter() - started)
                runs[root]["exit_cpu"].append(children_cpu() - cpu)
                if proc.returncode != 0 or not Path(out).exists():
                    raise RuntimeError(f"{root}: {proc.stderr[-2000:]}")
                first, first_cpu = json.loads(Path(out).read_text())
                runs[root]["first_query"].append(first - started)
                runs[root]["first_query_cpu"].append(first_cpu)
                started = time.perf_counter()
                subprocess.run([sys.executable, "-c", _FROM_CHECKOUT, root, "-", "--help"],
                               env=env[root], capture_output=True, check=True)
                runs[root]["help"].append(time.perf_counter() - started)
    return {root: {k: round(statistics.median(v), 3) for k, v in figures.items()}
            for root, figures in runs.items()}


def _compare_main(argv: list[str]) -> int:
    """`python -m bench.cold compare WORKLOAD_DIR REPEATS ROOT...` (a workload `make bench`
    built, under bench/.work/)."""
    from datetime import datetime

    from bench.spec import Spec

    workdir, repeats, roots = Path(argv[0]), int(argv[1]), argv[2:]
    workload = Workload(Spec(), workdir.resolve(), datetime.now(), 0.0, True)
    for root, figures in compare(workload, [str(Path(r).resolve()) for r in roots],
                                 repeats).items():
        print(root, json.dumps(figures))
    print("load average", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["trace"]:
    raise SystemExit(_traced_main(sys.argv[2], sys.argv[3:]))
if __name__ == "__main__" and sys.argv[1:2] == ["compare"]:
    raise SystemExit(_compare_main(sys.argv[2:]))
