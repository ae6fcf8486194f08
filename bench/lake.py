"""`python -m bench.lake`: the profile sweep on a local Parquet bucket, first vs repeat
(`--table-format delta` / `iceberg`: open tables of that format in the bucket).

A real dlt pipeline loads `--tables` tables x `--columns` columns x `--rows` rows as Parquet
into a local `file://` bucket (`bench/.lake/<shape>/`), in `--loads` daily loads (their load
ids stamped one day apart, as a daily cron's would be: dlt's `create_load_id` is pinned per
run in the build script). Then, each a whole cold CLI process
(`reconcile --include-removal --include-distribution --dry-run --format json`):

- `first`: the sweep on an empty profile store;
- one new load of `--append-share` of the rows per table (stamped now), in which a quarter
  of the tables drift: text column `c2` goes dark (removal), `c5` holds one word
  (distribution);
- `repeat`: the sweep on the store `first` left (copied into place before each run);
- `fresh`: the sweep of the grown bucket on an empty store: `repeat` must find exactly what
  it finds, else the bench fails;
- `floor`: what `first` computes, written by hand as DuckDB SQL over the same files (per
  table the profile query's aggregates per load and the table's row count, and the category
  query's value counts per load and text column), run in one whole cold process of Python
  and DuckDB alone, `--repeats` times on the bucket `first` read: `first` over `floor` is
  the issue's "first sweep within 1.5x of a hand-written DuckDB query".

Files, bytes and rows read: each step once more in process (same store state), untimed,
with `engine.sweep_stats.observe_sweeps`: the files its queries scanned
(`SweepStats.files_read`), their sizes and their Parquet row counts (footers, which every
sweep reads for the live columns, are not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from bench.project import BENCH_DIR

PIPELINE = "lake_bench"
DATASET = "lake"
DAY = 86400.0

SOURCE = '''
import pyarrow as pa
import pyarrow.compute as pc
import dlt
from pydantic import create_model

TABLES, COLUMNS, DRIFTED, TABLE_FORMAT = {tables}, {columns}, {drifted}, {table_format!r}
KINDS = ("int", "float", "text")


def model(t):
    fields = {{"id": (int, ...)}}
    for c in range(COLUMNS):
        kind = KINDS[c % 3]
        fields[f"c{{c}}"] = ({{"int": int, "float": float, "text": str}}[kind] | None, None)
    return create_model(f"T{{t}}", **fields)


def batch(t, first, n, dark):
    ids = pa.array(range(first, first + n), pa.int64())
    cols = {{"id": ids}}
    words = pa.array(["north", "south", "east", "west"])
    for c in range(COLUMNS):
        mixed = pc.bit_wise_and(pc.multiply(ids, 2654435761 + c * 97), 1023)
        kind = KINDS[c % 3]
        if kind == "int":
            cols[f"c{{c}}"] = mixed
        elif kind == "float":
            cols[f"c{{c}}"] = pc.divide(pc.cast(mixed, pa.float64()), 7.0)
        else:
            cols[f"c{{c}}"] = pc.take(words, pc.bit_wise_and(mixed, 3))
    if dark and t < DRIFTED:  # c2 goes dark, c5 holds one word: removal and distribution
        cols["c2"] = pa.nulls(n, pa.string())
        cols["c5"] = pa.array(["north"] * n)
    return pa.table(cols)


@dlt.source(name="lake")
def lake(first=0, n=1000, dark=False):
    return [dlt.resource([batch(t, first, n, dark)], name=f"t{{t:03d}}", columns=model(t),
                         write_disposition="append", table_format=TABLE_FORMAT)
            for t in range(TABLES)]
'''

LOAD = '''
import sys, dlt
import dlt.extract.storage as storage
from lake_src import lake

when, first, n, dark = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
storage.create_load_id = lambda: f"{{when:.7f}}"  # the day this load stands for
p = dlt.pipeline({pipeline!r}, destination="filesystem", dataset_name={dataset!r})
p.run(lake(first=first, n=n, dark=dark == "dark"), loader_file_format="parquet")
'''


def _env(root: Path, store: Path) -> dict[str, str]:
    return {**os.environ, "DLT_DATA_DIR": str(root / "data"), "RUNTIME__DLTHUB_TELEMETRY":
            "false", "CONTRACT_OPS__PROFILE_STORE": str(store)}


def build(root: Path, tables: int, columns: int, rows: int, loads: int,
          table_format: str | None = None) -> Path:
    """The project and its bucket: `loads` daily loads, the newest one day ago; with
    `table_format` (`delta`, `iceberg`) each table is an open table of that format."""
    project = root / "project"
    if (root / "built").exists():
        return project
    shutil.rmtree(root, ignore_errors=True)
    (project / ".dlt").mkdir(parents=True)
    (project / "lake_src.py").write_text(
        SOURCE.format(tables=tables, columns=columns, drifted=max(1, tables // 4),
                      table_format=table_format))
    (project / "load.py").write_text(LOAD.format(pipeline=PIPELINE, dataset=DATASET))
    (project / ".dlt" / "config.toml").write_text(textwrap.dedent(f"""\
        [runtime]
        dlthub_telemetry = false

        [contract_ops]
        alert_sinks = []

        [normalize.parquet_normalizer]
        add_dlt_load_id = true

        [destination.filesystem]
        bucket_url = {json.dumps((root / "bucket").as_uri())}

        [sources.lake.contract_ops]
        ref = "lake_src:lake"
        pipeline_name = "{PIPELINE}"
        destination = "filesystem"
        dataset_name = "{DATASET}"
        """))
    now = time.time()
    per_load = rows // loads
    for d in range(loads):
        load(root, now - (loads - d) * DAY, d * per_load, per_load)
    (root / "built").write_text("ok")
    return project


def load(root: Path, when: float, first: int, n: int, dark: bool = False) -> None:
    subprocess.run([sys.executable, "load.py", str(when), str(first), str(n),
                    "dark" if dark else "steady"],
                   cwd=root / "project", check=True,
                   env={**_env(root, root / "unused.duckdb"), "RUNTIME__LOG_LEVEL": "ERROR"})


def cold(root: Path, store: Path) -> tuple[float, dict[str, Any]]:
    """One whole CLI process: its wall time and its findings."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dlt_contract_ops.cli", "reconcile", "-s", "lake",
         "--include-removal", "--include-distribution", "--dry-run", "--format", "json"],
        cwd=root / "project", env=_env(root, store), capture_output=True, text=True)
    spent = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"reconcile exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return spent, findings(json.loads(proc.stdout))


def findings(doc: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for r in doc["results"]:
        if r["error"]:
            raise SystemExit(f"{r['detector']}: {r['error']}")
        for f in r["findings"]:
            out[f"{f['drift_type']}:{f['table']}"] = {
                k: v for k, v in f.items()
                if k not in ("detected_at", "first_seen", "fingerprint", "reproduce")}
    return out


def scanned(root: Path, store: Path) -> dict[str, int]:
    """Files, bytes and rows the sweep's queries scanned, in process (untimed)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from dlt_contract_ops.engine.reconcile import run
    from dlt_contract_ops.engine.sweep_stats import observe_sweeps

    saved = {k: os.environ.get(k) for k in ("DLT_DATA_DIR", "CONTRACT_OPS__PROFILE_STORE")}
    os.environ.update({k: _env(root, store)[k] for k in saved})
    try:
        with observe_sweeps() as seen:
            run(["lake"], detectors=("removal", "distribution"), dry_run=True,
                project_dir=root / "project")
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    files = {f.removeprefix("file://") for s in seen for f in s.files_read
             if f.endswith(".parquet")}
    return {"files": len(files), "bytes": sum(Path(f).stat().st_size for f in files),
            "rows": sum(pq.read_metadata(f).num_rows for f in files)}


FLOOR = '''
import json, sys, time
import duckdb

started = time.perf_counter()
connection = duckdb.connect()
connection.execute("SET enable_progress_bar = false")  # it draws on stdout, as the product's
rows = 0
for table in json.loads(sys.stdin.read()):
    for n, sql in enumerate(table):
        found = connection.execute(sql).fetchall()
        if n == 0:  # the profile: its row with no load id is the table's row count
            rows += sum(r[1] for r in found if r[0] is None)
print(json.dumps({"queries_s": time.perf_counter() - started, "rows": rows}))
'''


def floor_queries(root: Path, tables: int, columns: int, table_format: str | None = None
                  ) -> list[list[str]]:
    """What the first sweep computes, written by hand in DuckDB's SQL over the same files,
    per table: per load its rows and per declared column the non-NULL count, approximate
    distinct count and (numbers) min and max, plus the table's row count (the profile
    query); per load and text column the rows of each value (the category query). An open
    table's data files are its folder's (Delta) or its `data` folder's (Iceberg) Parquet
    files: each is current while the bench only appends."""
    out = []
    for t in range(tables):
        folder = root / "bucket" / DATASET / f"t{t:03d}"
        if table_format == "iceberg":
            folder = folder / "data"
        files = f"read_parquet('{folder}/*.parquet')"
        names = ["id", *(f"c{c}" for c in range(columns))]
        text = [f"c{c}" for c in range(columns) if c % 3 == 2]
        aggregates = []
        for name in names:
            aggregates += [f'COUNT("{name}")', f'APPROX_COUNT_DISTINCT("{name}")']
            if name not in text:
                aggregates += [f'MIN("{name}")', f'MAX("{name}")']
        nulls = ", ".join(["NULL"] * len(aggregates))
        # hand-written SQL over the bench's own file and column names: the point of a floor
        profile = (f"SELECT _dlt_load_id, COUNT(*), {', '.join(aggregates)} FROM {files} "  # noqa: S608
                   f"GROUP BY _dlt_load_id UNION ALL SELECT NULL, COUNT(*), {nulls} "
                   f"FROM {files}")
        categories = " UNION ALL ".join(
            f'SELECT {i}, _dlt_load_id, CAST("{c}" AS TEXT), COUNT(*) FROM {files} '  # noqa: S608
            f'WHERE "{c}" IS NOT NULL GROUP BY _dlt_load_id, "{c}"'
            for i, c in enumerate(text))
        out.append([profile, categories] if categories else [profile])
    return out


def floor(root: Path, queries: list[list[str]]) -> tuple[float, float, int]:
    """The hand-written queries in one whole cold process (Python, DuckDB, nothing else):
    its wall time, the queries' own time inside it, and the rows of every table."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", FLOOR], input=json.dumps(queries),
                          cwd=root / "project", capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the floor's queries exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    spent = time.perf_counter() - started
    out = json.loads(proc.stdout)
    return spent, float(out["queries_s"]), int(out["rows"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lake", description=__doc__)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--columns", type=int, default=30)
    parser.add_argument("--rows", type=int, default=200_000, help="per table, over all loads")
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--append-share", type=float, default=0.02)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--table-format", choices=("delta", "iceberg"), default=None,
                        help="open tables of this format (default: Parquet files)")
    args = parser.parse_args(argv)
    shape = f"{args.tables}x{args.columns}x{args.rows}x{args.loads}"
    root = BENCH_DIR / ".lake" / (f"{shape}-{args.table_format}" if args.table_format
                                  else shape)
    started = time.perf_counter()
    build(root, args.tables, args.columns, args.rows, args.loads, args.table_format)
    print(f"bucket: {root / 'bucket'} (built in {time.perf_counter() - started:.0f}s)")
    work = root / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    base = work / "first.duckdb"
    first = []
    for _ in range(args.repeats):
        base.unlink(missing_ok=True)
        spent, _ = cold(root, base)
        first.append(spent)
    first_read = scanned(root, work / "first-scan.duckdb")
    # the floor: what the first sweep computes, by hand, over the same files
    hand = floor_queries(root, args.tables, args.columns, args.table_format)
    floors = [floor(root, hand) for _ in range(args.repeats)]
    if {r for _, _, r in floors} != {first_read["rows"]}:  # not the same files: no floor
        raise SystemExit(f"the floor counted {floors[0][2]} rows, the first sweep scanned "
                         f"{first_read['rows']}")
    # the new load; the bucket as the first sweep saw it is gone after this (rebuild to rerun)
    (root / "built").unlink()
    load(root, time.time(), 10**9, int(args.rows * args.append_share), dark=True)
    repeat = []
    for i in range(args.repeats):
        store = work / f"repeat-{i}.duckdb"
        shutil.copy(base, store)
        spent, repeat_found = cold(root, store)
        repeat.append(spent)
    shutil.copy(base, work / "repeat-scan.duckdb")
    repeat_read = scanned(root, work / "repeat-scan.duckdb")
    _, fresh_found = cold(root, work / "fresh.duckdb")
    if not repeat_found or repeat_found != fresh_found:
        raise SystemExit("the repeat sweep found nothing, or not what a fresh sweep finds")
    result = {
        "shape": root.name, "load_average": os.getloadavg(),
        "first_s": {"min": min(first), "median": statistics.median(first)},
        "repeat_s": {"min": min(repeat), "median": statistics.median(repeat)},
        "floor_s": {"min": min(f for f, _, _ in floors),
                    "median": statistics.median(f for f, _, _ in floors)},
        "floor_queries_s": {"min": min(q for _, q, _ in floors),
                            "median": statistics.median(q for _, q, _ in floors)},
        "gain_min": min(first) / min(repeat),
        "first_over_floor_min": min(first) / min(f for f, _, _ in floors),
        "first_read": first_read, "repeat_read": repeat_read,
        "findings": sorted(repeat_found),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
