"""`python -m bench --preset small` end to end: builds through dlt, finds the planted drift,
keeps the query budget, and writes its JSON. The bench fails itself when any of that breaks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_small_preset_runs_and_reports(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--preset", "small", "--repeats", "1", "--profile",
         "--workdir", str(tmp_path / "work"), "--results-dir", str(tmp_path / "results")],
        cwd=ROOT,
        env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
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
