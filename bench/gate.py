"""`python -m bench.gate`: what the ingest gate costs over a plain `pipeline.run`.

    python -m bench.gate                 # 100k rows into DuckDB, 5 alternated pairs
    python -m bench.gate --rows 20k --repeats 3

Each repeat loads the same batch (the gate's seed model, `append`) into a fresh DuckDB file
twice, once with `pipeline.run` and once with `gated_run`, alternating which goes first so
drift in the machine's speed falls on both. Reported: the median wall and CPU time (this
process's, DuckDB's threads included) of each, and the gate's overhead in percent of the plain
run. CPU time is the steadier figure on a shared machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.spec import parse_count


def _rows(n: int) -> list[dict[str, Any]]:
    day = dt.date(2026, 3, 18)
    return [{"order_id": f"o-{i}", "order_date": day, "channel": "web", "amount_cents": i}
            for i in range(n)]


def _once(mode: str, rows: int, folder: Path, n: int) -> tuple[float, float]:
    import dlt
    from pydantic import BaseModel

    from dlt_contract_ops import gated_run

    class Order(BaseModel):
        order_id: str
        order_date: dt.date
        channel: str
        amount_cents: int

    pipeline = dlt.pipeline(f"bench_{mode}_{n}", pipelines_dir=str(folder / "pipelines"),
                            destination=dlt.destinations.duckdb(str(folder / f"{mode}{n}.db")),
                            dataset_name="shop")
    resource = dlt.resource(_rows(rows), name="orders", columns=Order)
    wall, cpu = time.perf_counter(), time.process_time()
    if mode == "run":
        pipeline.run(resource)
    else:
        gated_run(pipeline, resource)
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.gate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=parse_count, default=100_000)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    times: dict[str, list[tuple[float, float]]] = {"run": [], "gate": []}
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        os.environ["DLT_DATA_DIR"] = str(Path(tmp) / "data")
        _once("run", 100, Path(tmp), -1)  # imports and first-use costs off the clock
        _once("gate", 100, Path(tmp), -1)
        for n in range(args.repeats):
            order = ("run", "gate") if n % 2 == 0 else ("gate", "run")
            for mode in order:
                times[mode].append(_once(mode, args.rows, Path(tmp), n))
    print(f"gate bench: {args.rows} rows x {args.repeats} alternated pairs, DuckDB")
    med = {m: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
           for m, t in times.items()}
    for mode, (wall, cpu) in med.items():
        print(f"  {mode:>4}: wall {wall:7.3f} s   cpu {cpu:7.3f} s")
    print(f"  gate overhead: wall {100 * (med['gate'][0] / med['run'][0] - 1):+.1f}%   "
          f"cpu {100 * (med['gate'][1] / med['run'][1] - 1):+.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
