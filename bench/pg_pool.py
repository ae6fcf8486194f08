"""`python -m bench.pg_pool`: removal on PostgreSQL, coverage one by one vs on the pool.

Builds a dataset straight in PostgreSQL (127.0.0.1:5432, `test`): `--tables` tables of
`--columns` nullable integer columns and `--rows` rows, with dlt's `_dlt_load_id` spread over
the last three days, and a matching source whose resources declare Pydantic models. Then times
`removal` with `PostgresAdapter.capabilities.pool_size` = 1 and = `--sessions` (min/median of
`--repeats`). The dataset is dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

DSN = "dbname=test user=postgres host=127.0.0.1 port=5432"
CREDENTIALS = "postgresql://postgres:x@127.0.0.1:5432/test"
DATASET = "co_bench_pool"


def build(tables: int, columns: int, rows: int) -> None:
    import psycopg2
    from psycopg2 import sql

    every_fifth_null = sql.SQL("CASE WHEN g %% 5 = 0 THEN NULL ELSE g END AS {}")
    cols = [every_fifth_null.format(sql.Identifier(f"c{i}")) for i in range(columns)]
    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        cur.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(DATASET)))
        cur.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(DATASET)))
        now = time.time()
        for t in range(tables):
            cur.execute(
                sql.SQL(
                    "CREATE TABLE {} AS SELECT g AS id, {}, "
                    "to_char(%s - (g %% 259200), 'FM9999999999.0000000') AS _dlt_load_id, "
                    "md5(g::text) AS _dlt_id FROM generate_series(1, %s) AS g"
                ).format(sql.Identifier(DATASET, f"t{t:03d}"), sql.SQL(", ").join(cols)),
                [now, rows],
            )
    print(f"built {tables} tables x {columns} columns x {rows:,} rows in {DATASET}")


def project(folder: Path, tables: int, columns: int) -> None:
    (folder / ".dlt").mkdir(parents=True)
    (folder / "pool_src.py").write_text(textwrap.dedent(f'''
        from typing import Optional
        import dlt
        from pydantic import create_model

        FIELDS = {{"id": (int, ...)}}
        FIELDS.update({{f"c{{i}}": (Optional[int], None) for i in range({columns})}})

        @dlt.source(name="pool")
        def pool():
            return [
                dlt.resource([], name=f"t{{t:03d}}", columns=create_model(f"T{{t}}", **FIELDS))
                for t in range({tables})
            ]
    '''))
    (folder / ".dlt" / "config.toml").write_text(
        "[contract_ops]\nalert_sinks = []\n\n[sources.pool.contract_ops]\n"
        f'ref = "pool_src:pool"\ndestination = "postgres"\ndataset_name = "{DATASET}"\n'
    )
    (folder / ".dlt" / "secrets.toml").write_text(
        f'[destination.postgres]\ncredentials = "{CREDENTIALS}"\n'
    )


def measure(folder: Path, sessions: int, repeats: int) -> list[float]:
    from dataclasses import replace

    from dlt_contract_ops.destinations.postgres import PostgresAdapter
    from dlt_contract_ops.engine.reconcile import run

    PostgresAdapter.capabilities = replace(PostgresAdapter.capabilities, pool_size=sessions)
    times = []
    for _ in range(repeats + 1):  # the first run warms imports and PostgreSQL's cache
        started = time.perf_counter()
        [result] = run(["pool"], detectors=("removal",), project_dir=folder, dry_run=True,
                       dedup=False)
        times.append(time.perf_counter() - started)
        assert result.error is None, result.error
    return times[1:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--columns", type=int, default=30)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    import psycopg2
    from psycopg2 import sql

    build(args.tables, args.columns, args.rows)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["DLT_DATA_DIR"] = str(Path(tmp) / "dlt_data")
            folder = Path(tmp) / "project"
            project(folder, args.tables, args.columns)
            serial = measure(folder, 1, args.repeats)
            pooled = measure(folder, args.sessions, args.repeats)
    finally:
        with psycopg2.connect(DSN) as con, con.cursor() as cur:
            cur.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(DATASET)))
    report = {
        "workload": f"{args.tables}x{args.columns}x{args.rows}",
        "nproc": os.cpu_count(),
        "serial_s": {"min": min(serial), "median": statistics.median(serial)},
        "pool_s": {"min": min(pooled), "median": statistics.median(pooled)},
        "sessions": args.sessions,
    }
    gain = statistics.median(serial) / statistics.median(pooled)
    print(f"removal on PostgreSQL, {report['workload']} (median of {args.repeats}):")
    print(f"  one by one      {statistics.median(serial):7.3f} s (min {min(serial):.3f})")
    print(f"  pool of {args.sessions}       {statistics.median(pooled):7.3f} s "
          f"(min {min(pooled):.3f})   gain x{gain:.2f}")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
