"""A shop source whose batches are built to shape: steady noise, or one drifted load."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from tests.projects import Project

SOURCE = """
from typing import Literal, Optional

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    status: Literal["new", "paid", "shipped", "other"]
    region: Optional[str] = None
    code: Optional[str] = None
    note: Optional[str] = None
    amount: Optional[float] = None


def rows(batch, n, drift=(), start=0):
    for i in range(n):
        k = start + batch * 1000 + i
        wobble = (batch * 7 + i) % 10  # steady noise: shares move a little per batch
        status = "new" if wobble < 5 else "paid" if wobble < 8 else "shipped"
        if "other" in drift and i % 25 == 0:
            status = "other"  # 4% of rows fall into the default bucket
        region = "eu" if (i + batch) % 3 else "us"
        if "region" in drift and i % 2 == 0:
            region = "apac"
        yield {
            "id": k,
            "status": status,
            "region": region,
            "code": "same" if "code" in drift else f"c{k}",
            "note": None if ("note" in drift and i % 5) or (i + batch) % 10 == 0 else "n",
            "amount": float(i % 17) + batch / 10,
        }


@dlt.source(name="shop")
def shop(batch=0, n=100, drift=(), disposition="append", start=0):
    hints = {"primary_key": "id"} if disposition == "merge" else {}
    return dlt.resource(
        rows(batch, n, drift, start), name="orders", columns=Order,
        write_disposition=disposition, **hints,
    )
"""

DATASET = "shop_data"
PIPELINE = "shop_pipe"


#: the folder the loaded baselines are kept in for the run (`_baselines`); empty: none kept
_BASELINES: list[Path] = []


@pytest.fixture(scope="session", autouse=True)
def _baselines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One folder of loaded baselines for the whole run, shared by the xdist workers (their
    base temp folders sit side by side in the session's own)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder = base / "shop-baselines"
    folder.mkdir(exist_ok=True)
    _BASELINES.append(folder)
    yield
    _BASELINES.remove(folder)


def _pipeline_dir(pipeline: str) -> Path:
    return Path(os.environ["DLT_DATA_DIR"]) / "pipelines" / pipeline


def _baseline_key(project: Project, batches: Sequence[dict[str, Any]], module: str,
                  dataset: str) -> str:
    """What a baseline depends on: the source module, the project's config, the batches."""
    parts = [json.dumps([list(batches), dataset], sort_keys=True)]
    for path in (project.root / module, project.root / ".dlt" / "config.toml",
                 project.root / ".dlt" / "secrets.toml"):
        parts.append(path.read_text() if path.exists() else "")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _restore(saved: Path, project: Project, pipeline: str) -> None:
    """Copy a kept baseline (the DuckDB file and the pipeline's working folder) into this
    project and data dir. dlt opens `<the folder the pipeline first ran in>/<name>.duckdb`
    (`_local.initial_cwd` in its state): the copy's state is pointed at this project."""
    for database in saved.glob(f"{pipeline}.duckdb*"):
        shutil.copyfile(database, project.root / database.name)
    shutil.copytree(saved / "pipeline", _pipeline_dir(pipeline))
    state_file = _pipeline_dir(pipeline) / "state.json"
    state = json.loads(state_file.read_text())
    state["_local"]["initial_cwd"] = str(project.root)
    state_file.write_text(json.dumps(state))


def _keep(project: Project, pipeline: str, saved: Path) -> None:
    staging = saved.with_name(saved.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for database in project.root.glob(f"{pipeline}.duckdb*"):
        shutil.copyfile(database, staging / database.name)
    shutil.copytree(_pipeline_dir(pipeline), staging / "pipeline")
    staging.rename(saved)


def load_duckdb(
    project: Project, batches: Sequence[dict[str, Any]], *, pipeline: str, module: str,
    dataset: str, run: Callable[[Sequence[dict[str, Any]]], None],
) -> None:
    """`run(batches)` (real dlt loads into the pipeline's default DuckDB file), sharing the
    baseline: into a fresh project, all batches but the last are built once per test run
    and copied (many tests start from the same loads); the last batch is loaded for real.
    The copy is what the real loads left: the same file, load ids and pipeline state."""
    fresh = (not (project.root / f"{pipeline}.duckdb").exists()
             and not _pipeline_dir(pipeline).exists())
    if fresh and len(batches) > 1 and _BASELINES:
        baseline, batches = batches[:-1], batches[-1:]
        saved = _BASELINES[0] / _baseline_key(project, baseline, module, dataset)
        with FileLock(str(saved) + ".lock"):
            if saved.exists():
                _restore(saved, project, pipeline)
            else:
                run(baseline)
                _keep(project, pipeline, saved)
    run(batches)


def load(
    project: Project, *batches: dict[str, Any], destination: str = "duckdb",
    dataset: str = DATASET,
) -> None:
    """Run the pipeline once per batch (keyword arguments of `shop`); into DuckDB with the
    baseline shared (`load_duckdb`)."""
    def run(some: Sequence[dict[str, Any]]) -> None:
        _run_loads(project, some, destination, dataset)

    if destination == "duckdb":
        load_duckdb(project, batches, pipeline=PIPELINE, module="shop_mod.py", dataset=dataset,
                    run=run)
    else:
        run(batches)


def _run_loads(project: Project, batches: Sequence[dict[str, Any]], destination: str,
               dataset: str) -> None:
    """The batches through dlt, in one interpreter."""
    project.python(
        f"""
        import json, dlt
        from shop_mod import shop
        p = dlt.pipeline({PIPELINE!r}, destination={destination!r}, dataset_name={dataset!r})
        for kw in json.loads({json.dumps(json.dumps(list(batches)))}):
            p.run(shop(**kw))
        """
    )


@pytest.fixture
def shop(project: Project) -> Project:
    project.module("shop_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("shop", "shop_mod:shop", pipeline_name="shop_pipe", dataset_name=DATASET)
    return project
