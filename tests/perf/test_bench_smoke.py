"""`python -m bench --preset small` end to end: builds through dlt, finds the planted drift,
keeps the query budget, and writes its JSON. The bench fails itself when any of that breaks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench(tmp_path: Path, *args: str) -> None:
    """`python -m bench --preset small --repeats 1 ARGS` into `tmp_path`; it must succeed."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--preset", "small", "--repeats", "1", *args,
         "--workdir", str(tmp_path / "work"), "--results-dir", str(tmp_path / "results")],
        cwd=ROOT,
        env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]


def test_small_preset_runs_and_reports(tmp_path: Path) -> None:
    _bench(tmp_path, "--profile")
    [result_file] = (tmp_path / "results").glob("bench-small-*.json")
    document = json.loads(result_file.read_text())
    [workload] = document["workloads"]
    spec = workload["spec"]
    both = workload["modes"]["both"]
    assert both["findings"] == {"additive": spec["drifted"], "removal": spec["dark"]}
    assert both["queries"] == {
        "metadata": 1, "coverage": spec["tables"], "sample": spec["drifted"]
    }
    assert both["sources_built"] == 1
    assert both["ours"]["median"] > 0
    assert both["floor"]["median"] > 0
    assert (tmp_path / "results" / "profile-8x12x4k.txt").exists()
    assert document["startup"]["dlt-contract-ops --help"] > 0


def test_small_incremental_preset_names_each_load_for_its_moment(tmp_path: Path) -> None:
    """The incremental steps run end to end (they fail themselves on differing findings), and
    every load's `_dlt_load_id` is the epoch it stands for: days apart, as real runs'."""
    import duckdb

    from bench.spec import DATASET_NAME, PIPELINE_NAME

    _bench(tmp_path, "--incremental")
    [copy] = [p for p in (tmp_path / "work").iterdir() if p.name.endswith("-incremental")]
    with duckdb.connect(str(copy / f"{PIPELINE_NAME}.duckdb"), read_only=True) as con:
        ids = [float(r[0]) for r in con.execute(
            f"SELECT load_id FROM {DATASET_NAME}._dlt_loads ORDER BY load_id").fetchall()]
    assert len(ids) == 4  # 2 baseline loads, the recent one, the appended one
    assert ids == sorted(set(ids))
    assert ids[1] - ids[0] > 12 * 3600  # baseline loads the plan spreads over days
    stamped_at = datetime.fromisoformat(
        json.loads(next((tmp_path / "results").glob("bench-*.json")).read_text())
        ["workloads"][0]["append"]["load_at"]).timestamp()
    assert ids[-1] == stamped_at  # the appended load: the moment the bench stamped it
