"""`python -m bench.pg_samples`: the additive sample query of a wide drifted table on PostgreSQL.

Builds a table straight in PostgreSQL (127.0.0.1:5432, `test`): `id`, `--columns` text columns
the model does not declare (additive drift, every one sampled) and `--rows` rows, with dlt's
`_dlt_load_id` over the last three days and `_dlt_id`; a quarter of the columns hold a value
only in the oldest tenth of the rows (sparse). Then times the additive detector end to end
(`reconcile.run`) and its sample query alone (the text and values the reconciler sent to the
driver, `bench.measure.record_sql`), min/median of `--repeats`, and prints the query's plan
summary (sorts, and whether they spilled to disk). The dataset is dropped at the end.
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
from typing import Any

DSN = "dbname=test user=postgres host=127.0.0.1 port=5432"
CREDENTIALS = "postgresql://postgres:x@127.0.0.1:5432/test"
DATASET = "co_bench_samples"


def build(columns: int, rows: int) -> None:
    import psycopg2
    from psycopg2 import sql

    dense = sql.SQL("CASE WHEN g %% 7 = 0 THEN NULL ELSE md5(g::text || {}) END AS {}")
    sparse = sql.SQL("CASE WHEN g * 10 <= %s THEN md5(g::text || {}) END AS {}")
    cols = [
        (sparse if i % 4 == 3 else dense).format(sql.Literal(str(i)), sql.Identifier(f"c{i}"))
        for i in range(columns)
    ]
    params: list[Any] = [time.time()]
    params += [rows for i in range(columns) if i % 4 == 3]
    params.append(rows)
    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        cur.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(DATASET)))
        cur.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(DATASET)))
        cur.execute(
            sql.SQL(
                "CREATE TABLE {} AS SELECT g AS id, "
                "to_char(%s - (259200 - g * 259200 / {}), 'FM9999999999.0000000') "
                "AS _dlt_load_id, md5(g::text) AS _dlt_id, {} FROM generate_series(1, %s) AS g"
            ).format(sql.Identifier(DATASET, "wide"), sql.Literal(rows),
                     sql.SQL(", ").join(cols)),
            params,
        )
        cur.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(DATASET, "wide")))
    print(f"built 1 table x {columns} drifted columns x {rows:,} rows in {DATASET}")


def project(folder: Path) -> None:
    (folder / ".dlt").mkdir(parents=True)
    (folder / "wide_src.py").write_text(textwrap.dedent('''
        import dlt
        from pydantic import BaseModel

        class Wide(BaseModel):
            id: int

        @dlt.source(name="wide")
        def wide():
            return dlt.resource([], name="wide", columns=Wide)
    '''))
    (folder / ".dlt" / "config.toml").write_text(
        "[contract_ops]\nalert_sinks = []\nsource_cache = false\nquery_timeout = \"10m\"\n\n"
        '[sources.wide.contract_ops]\nref = "wide_src:wide"\ndestination = "postgres"\n'
        f'dataset_name = "{DATASET}"\n'
    )
    (folder / ".dlt" / "secrets.toml").write_text(
        f'[destination.postgres]\ncredentials = "{CREDENTIALS}"\n'
    )


def measure(
    folder: Path, repeats: int
) -> tuple[list[float], list[float], tuple[str, list[Any]], Any]:
    """End-to-end times, times of the sample query alone, its SQL and values (as sent to the
    driver), and the finding."""
    import psycopg2

    from bench.measure import record_sql
    from dlt_contract_ops.engine.reconcile import run

    ends, queries = [], []
    finding: Any = None
    for _ in range(repeats):
        with record_sql() as sent:
            started = time.perf_counter()
            [result] = run(["wide"], detectors=("additive",), project_dir=folder, dry_run=True,
                           dedup=False)
            ends.append(time.perf_counter() - started)
        assert result.error is None, result.error
        [finding] = result.findings
    [sample] = sent["sample"]
    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        for _ in range(repeats):
            started = time.perf_counter()
            cur.execute(*sample)
            cur.fetchall()
            queries.append(time.perf_counter() - started)
    return ends, queries, sample, finding


def plan_summary(sample: tuple[str, list[Any]]) -> dict[str, Any]:
    """Sort nodes of the query's plan, how many of them spilled to disk, and the seconds
    PostgreSQL's JIT spent compiling it (a compile does not heed a cancel)."""
    import psycopg2

    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        cur.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sample[0], sample[1])
        doc = cur.fetchone()[0][0]
    plan = doc["Plan"]
    jit = doc.get("JIT", {}).get("Timing", {}).get("Total", 0.0) / 1000
    sorts = spilled = 0
    stack = [plan]
    while stack:
        node = stack.pop()
        if node.get("Node Type") in ("Sort", "Incremental Sort"):
            sorts += 1
            spilled += node.get("Sort Space Type") == "Disk"
        stack += node.get("Plans", [])
    return {"sorts": sorts, "spilled": spilled, "jit_s": round(jit, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--columns", type=int, default=300)
    parser.add_argument("--rows", type=int, default=3_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dataset", default="co_bench_samples", help="schema built, then dropped")
    args = parser.parse_args()
    global DATASET  # a one-shot script: every helper reads the one schema
    DATASET = args.dataset
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    import psycopg2
    from psycopg2 import sql

    build(args.columns, args.rows)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["DLT_DATA_DIR"] = str(Path(tmp) / "dlt_data")
            folder = Path(tmp) / "project"
            project(folder)
            ends, queries, sample, finding = measure(folder, args.repeats)
            plan = plan_summary(sample)
    finally:
        with psycopg2.connect(DSN) as con, con.cursor() as cur:
            cur.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(DATASET)))
    sampled = sum(1 for values in finding.samples.values() if values)
    report = {
        "workload": f"{args.columns} drifted columns x {args.rows} rows",
        "end_to_end_s": {"min": min(ends), "median": statistics.median(ends)},
        "sample_query_s": {"min": min(queries), "median": statistics.median(queries)},
        "plan": plan,
        "columns_with_samples": sampled,
    }
    print(f"additive samples on PostgreSQL, {report['workload']} (median of {args.repeats}):")
    print(f"  end to end    {statistics.median(ends):8.3f} s (min {min(ends):.3f})")
    print(f"  sample query  {statistics.median(queries):8.3f} s (min {min(queries):.3f})")
    print(f"  plan: {plan['sorts']} sort(s), {plan['spilled']} spilled to disk, "
          f"JIT {plan['jit_s']:.3f} s; "
          f"{sampled} of {len(finding.samples)} columns sampled")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
