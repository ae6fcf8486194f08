"""`python -m bench --preset tiny` end to end: builds through dlt, finds the planted drift,
keeps the query budget, and writes its JSON. The bench fails itself when any of that breaks.
`tiny` is `small`'s shape cut to what the assertions need (a drifted, a dark and a clean
table; two baseline loads days apart), each timing and start-up figure sampled once.

The bench's `main` runs in this process (the environment variables and the dlt log level it
sets are put back after); what the bench itself runs as a process (the build's loader, the
cold `reconcile`, the start-up figures) stays a process. Both tests share one workdir, so the
second reuses the warehouse the first built, as a second `python -m bench` run does.
The test runner's own objects are frozen out of the garbage collector meanwhile: the bench
collects before every timed run (a full collection), and a worker's heap of other test modules
made each collect walk several times what `python -m bench` holds."""

from __future__ import annotations

import gc
import json
import logging
import os
from datetime import datetime
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bench's `--workdir`, shared by the module: built once, reused after."""
    return tmp_path_factory.mktemp("bench-work")


def _bench(workdir: Path, results: Path, *args: str) -> None:
    """`python -m bench --preset tiny --repeats 1 --startup-repeats 1 ARGS` in this process;
    it must return 0."""
    from bench.cli import main

    argv = ["--preset", "tiny", "--repeats", "1", "--startup-repeats", "1", *args,
            "--workdir", str(workdir), "--results-dir", str(results)]
    saved_env = dict(os.environ)
    dlt_logger = logging.getLogger("dlt")
    saved_level = dlt_logger.level
    gc.collect()
    gc.freeze()
    try:
        code = main(argv)
    finally:
        gc.unfreeze()
        os.environ.clear()
        os.environ.update(saved_env)
        dlt_logger.setLevel(saved_level)
    assert code == 0


def test_tiny_preset_runs_and_reports(workdir: Path, tmp_path: Path) -> None:
    _bench(workdir, tmp_path / "results", "--profile")
    [result_file] = (tmp_path / "results").glob("bench-tiny-*.json")
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
    cold = workload["cold"]  # the cold `reconcile` process ran against its floor
    assert cold["ours"]["median"] > 0
    assert cold["floor"]["median"] > 0
    # ... and against `import dlt` and `--help`, alternated with it (issue 40)
    assert cold["import_dlt"]["median"] > 0
    assert cold["help"]["median"] > 0
    assert isinstance(cold["target_met"], bool)
    assert both["per_table_outside_ms"] > 0
    assert (tmp_path / "results" / f"profile-{workload['label']}.txt").exists()
    assert Path(workload["profile_cold"]).exists()
    assert document["startup"]["dlt-contract-ops --help"] > 0


def test_tiny_incremental_preset_names_each_load_for_its_moment(workdir: Path,
                                                                  tmp_path: Path) -> None:
    """The incremental steps run end to end (they fail themselves on differing findings), and
    every load's `_dlt_load_id` is the epoch it stands for: days apart, as real runs'."""
    import duckdb

    from bench.spec import DATASET_NAME, PIPELINE_NAME

    _bench(workdir, tmp_path / "results", "--incremental")
    [copy] = [p for p in workdir.iterdir() if p.name.endswith("-incremental")]
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
