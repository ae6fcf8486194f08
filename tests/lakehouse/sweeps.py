"""A shop whose orders a real dlt pipeline loads into a local `file://` bucket, one load per
batch: steady loads stamped days back on `loaded_at`, then a drifted one (a dark `note`, a
shifted `status` share). For the profile sweep on dlt's `filesystem` destination."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.projects import Project

PIPELINE = "shop_lake"
DATASET = "shop"

SOURCE = """
from datetime import datetime, timedelta, timezone
from typing import Literal, Optional

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    status: Literal["new", "paid", "shipped", "other"]
    note: Optional[str] = None
    amount: Optional[float] = None
    loaded_at: Optional[datetime] = None


def rows(batch, n, drift, days_ago, first=0):
    when = datetime.now(timezone.utc) - timedelta(days=days_ago)
    for i in range(n):
        wobble = (batch * 7 + i) % 10
        status = "new" if wobble < 5 else "paid" if wobble < 8 else "shipped"
        if drift and i % 4 == 0:
            status = "other"
        yield {"id": first + batch * 1000 + i, "status": status, "amount": float(i % 17),
               "note": None if drift or i % 10 == 0 else "n", "loaded_at": when}


@dlt.source(name="shop")
def shop(batch=0, n=100, drift=False, days_ago=0, disposition="append", table_format=None,
         first=0):
    hints = {"primary_key": "id"} if disposition == "merge" else {}
    if table_format:
        hints["table_format"] = table_format
    return dlt.resource(rows(batch, n, drift, days_ago, first), name="orders", columns=Order,
                        write_disposition=disposition, **hints)
"""

STEADY = [{"batch": b, "days_ago": 3} for b in range(6)]
DRIFTED = {"batch": 6, "drift": True}


def setup(project: Project, bucket: Path) -> None:
    project.module("shop_lake_src", SOURCE)
    project.config(
        "[runtime]\ndlthub_telemetry = false\n\n[contract_ops]\nalert_sinks = []\n\n"
        f"[destination.filesystem]\nbucket_url = {json.dumps(bucket.as_uri())}\n")
    project.source("shop", "shop_lake_src:shop", pipeline_name=PIPELINE,
                   destination="filesystem", dataset_name=DATASET,
                   load_timestamp_column="loaded_at")


def load(project: Project, *batches: dict[str, Any], file_format: str = "parquet") -> None:
    """Run the pipeline once per batch (keyword arguments of `shop`): one load each."""
    project.python(f"""
        import json, dlt
        from shop_lake_src import shop
        p = dlt.pipeline({PIPELINE!r}, destination="filesystem", dataset_name={DATASET!r})
        for kw in json.loads({json.dumps(json.dumps(list(batches)))}):
            p.run(shop(**kw), loader_file_format={file_format!r})
        """)


def sweep(project: Project, *args: str) -> tuple[int, dict[str, Any], str]:
    """`reconcile -s shop --include-removal --include-distribution --dry-run ARGS` as JSON."""
    proc = project.cli("reconcile", "-s", "shop", "--include-removal", "--include-distribution",
                       "--dry-run", "--format", "json", *args)
    try:
        doc = json.loads(proc.stdout)
    except ValueError as exc:
        raise AssertionError(f"not JSON: {proc.stdout!r}\nstderr: {proc.stderr}") from exc
    return proc.returncode, doc, proc.stderr


def findings(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(drift type, table) -> finding, without what differs between two runs (times)."""
    out = {}
    for r in doc["results"]:
        assert r["error"] is None, r["error"]
        for f in r["findings"]:
            kept = {k: v for k, v in f.items()
                    if k not in ("detected_at", "first_seen", "fingerprint", "reproduce")}
            out[(f["drift_type"], f["table"])] = kept
    return out


def backdate(bucket: Path, hours: float = 20) -> dict[str, str]:
    """Every load so far moved back, the n-th of N to (N - n) * `hours` ago, as dlt would have
    written it then: its files renamed and their `_dlt_load_id` rewritten, its `_dlt_loads`
    record too. Old id -> new id."""
    import time

    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    root = bucket / DATASET
    records = sorted((root / "_dlt_loads").iterdir())
    ids = [p.name.split("__", 1)[1].removesuffix(".jsonl") for p in records]
    now = time.time()
    moved = {old: f"{now - (len(ids) - n) * hours * 3600:.6f}" for n, old in enumerate(ids)}
    for path in sorted((root / "orders").iterdir()):
        old = next(i for i in ids if path.name.startswith(f"{i}."))
        table = pq.read_table(path)
        column = table.schema.get_field_index("_dlt_load_id")
        table = table.set_column(column, "_dlt_load_id",
                                 pa.array([moved[old]] * table.num_rows, pa.string()))
        pq.write_table(table, path.with_name(moved[old] + path.name[len(old):]))
        path.unlink()
    for path, old in zip(records, ids, strict=True):
        record = json.loads(path.read_text())
        record["load_id"] = moved[old]
        path.with_name(f"{DATASET}__{moved[old]}.jsonl").write_text(json.dumps(record) + "\n")
        path.unlink()
    return moved


def data_files(bucket: Path, table: str = "orders") -> list[str]:
    return sorted(str(p) for p in (bucket / DATASET / table).iterdir() if p.is_file())
