"""Time dlt-ops 0.1.0 on a bench project. Runs INSIDE the peer's virtual environment.

`python peer_runner.py PROJECT_DIR MODES REPEATS COLD` prints one JSON document on its last
stdout line. Standard library and dlt_ops only: this file must not import the bench package
or dlt_contract_ops. Queries are counted by wrapping the peer's adapter base class (a
counter around the real call; every query still runs).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

SOURCE = "bench"


def _count_queries() -> Counter[str]:
    # dlt_ops lives only in bench/.peer-venv, hence the ignores on its imports
    from dlt_ops.destinations._base import SqlAdapterBase  # type: ignore[import-not-found]

    counts: Counter[str] = Counter()
    inside_fetch = [False]
    execute_query = SqlAdapterBase.execute_query
    fetch_columns = SqlAdapterBase.fetch_columns

    def counted_execute(self: Any, client: Any, sql: str, *params: Any) -> Any:
        if not inside_fetch[0]:
            counts["coverage" if "in_recent" in sql else "sample"] += 1
        return execute_query(self, client, sql, *params)

    def counted_fetch(self: Any, client: Any, dataset: str, table: str) -> Any:
        counts["metadata"] += 1
        inside_fetch[0] = True
        try:
            return fetch_columns(self, client, dataset, table)
        finally:
            inside_fetch[0] = False

    SqlAdapterBase.execute_query = counted_execute
    SqlAdapterBase.fetch_columns = counted_fetch
    return counts


def _forget_source_module() -> None:
    for name in [m for m in sys.modules if m.startswith("dlt_ops._sources")]:
        del sys.modules[name]


def _once(mode: str, root: Path, counts: Counter[str], cold: bool) -> dict[str, Any]:
    from dlt_ops import detect_removal, reconcile_source  # type: ignore[import-not-found]

    if cold:
        _forget_source_module()
    gc.collect()
    counts.clear()
    findings: dict[str, int] = {}
    errors: list[str] = []
    started = time.perf_counter()
    if mode in ("additive", "both"):
        result = reconcile_source(SOURCE, dry_run=True, project_root=root)
        findings["additive"] = len(result.findings)
        errors += [result.error] if result.error else []
    if mode in ("removal", "both"):
        result = detect_removal(SOURCE, dry_run=True, project_root=root)
        findings["removal"] = len(result.findings)
        errors += [result.error] if result.error else []
        errors += list(getattr(result, "warnings", ()) or ())
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "queries": dict(counts), "findings": findings, "errors": errors}


def main(argv: list[str]) -> int:
    """Time each mode `repeats` times in a warmed interpreter; print JSON."""
    root = Path(argv[0]).resolve()
    modes = argv[1].split(",")
    repeats = int(argv[2])
    cold = argv[3] == "1"
    os.chdir(root)
    logging.disable(logging.WARNING)  # the peer logs each finding; the numbers are the point
    import dlt_ops

    counts = _count_queries()
    # warm the interpreter as ours is warmed (imports, the DuckDB driver), without a run:
    # one peer run at 200 tables takes about a minute
    import dlt_ops.destinations.duckdb  # type: ignore[import-not-found]
    import dlt_ops.reconciler  # type: ignore[import-not-found]
    import duckdb  # noqa: F401

    out: dict[str, Any] = {"version": dlt_ops.__version__, "modes": {}}
    for mode in modes:
        runs = [_once(mode, root, counts, cold) for _ in range(repeats)]
        seconds = [r["seconds"] for r in runs]
        out["modes"][mode] = {
            "min": round(min(seconds), 4),
            "median": round(statistics.median(seconds), 4),
            "queries": runs[-1]["queries"],
            "findings": runs[-1]["findings"],
            "errors": runs[-1]["errors"],
        }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
