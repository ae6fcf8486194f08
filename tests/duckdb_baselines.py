"""Loaded DuckDB baselines shared by a test run: the first loads of many tests are the same
real dlt loads, so they are run once per run and copied (the DuckDB file and dlt's pipeline
folder); each test's later loads stay real.

`tests/conftest.py` keeps the folder for the run (`_duckdb_baselines`): one for all xdist
workers, a file lock per baseline keyed by what builds it.

A project whose tests only read it (a warehouse loaded and drifted) is loaded once per session
instead (`load_once`) and copied by each test (`copy_project`); the warehouses several folders
share are fixtures of `tests/warehouses.py`, defined once for the suite."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from tests.projects import Project

#: the folder the loaded baselines are kept in for the run; empty: none kept (real loads)
BASELINES: list[Path] = []
#: its name, in the run's base temporary folder
FOLDER = "duckdb-baselines"


def pipeline_dir(pipeline: str) -> Path:
    return Path(os.environ["DLT_DATA_DIR"]) / "pipelines" / pipeline


def is_fresh(project: Project, pipeline: str) -> bool:
    """Nothing loaded yet: no DuckDB file of the pipeline, no pipeline folder."""
    return (not (project.root / f"{pipeline}.duckdb").exists()
            and not pipeline_dir(pipeline).exists())


def baseline_key(project: Project, steps: Sequence[Any], module: str, dataset: str, *,
                 any_dataset: bool = False) -> str:
    """What a baseline depends on: the source module, the project's config, the steps and
    the dataset; `any_dataset`: a baseline copied into each test's own dataset, its name left
    out."""
    parts = [json.dumps([list(steps), None if any_dataset else dataset], sort_keys=True)]
    for path in (project.root / module, project.root / ".dlt" / "config.toml",
                 project.root / ".dlt" / "secrets.toml"):
        text = path.read_text() if path.exists() else ""
        parts.append(text.replace(dataset, "<dataset>") if any_dataset else text)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def point_state(project: Project, pipeline: str, **changes: Any) -> None:
    """A copied pipeline folder's state pointed at this test: dlt opens `<the folder the
    pipeline first ran in>/<name>.duckdb` and keeps that folder in `_local.initial_cwd`;
    `changes` are further top-level keys (a dataset name)."""
    state_file = pipeline_dir(pipeline) / "state.json"
    state = json.loads(state_file.read_text())
    state["_local"]["initial_cwd"] = str(project.root)
    state.update(changes)
    state_file.write_text(json.dumps(state))


def _restore(saved: Path, project: Project, pipeline: str) -> None:
    """Copy a kept baseline into this project and data dir, its state pointed here."""
    for database in saved.glob(f"{pipeline}.duckdb*"):
        shutil.copyfile(database, project.root / database.name)
    shutil.copytree(saved / "pipeline", pipeline_dir(pipeline))
    point_state(project, pipeline)


def _keep(project: Project, pipeline: str, saved: Path) -> None:
    staging = saved.with_name(saved.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for database in project.root.glob(f"{pipeline}.duckdb*"):
        shutil.copyfile(database, staging / database.name)
    shutil.copytree(pipeline_dir(pipeline), staging / "pipeline")
    staging.rename(saved)


def shared_loads(
    project: Project, steps: Sequence[Any], *, pipeline: str, module: str, dataset: str,
    run: Callable[[Sequence[Any]], None],
) -> None:
    """`run(steps)`: real dlt loads into the pipeline's default DuckDB file in the project
    folder. Into a fresh project they run once per test run under a key of the steps, the
    source module and the project's config; later tests get a copy of what they left (the
    same file, load ids and pipeline state). Into a loaded project they simply run.
    `steps` must name everything `run` does with them (JSON), one load a step: a baseline is
    built from the baseline of its steps but the last (`_shared`), so tests whose first loads
    begin alike share those loads too."""
    if not (BASELINES and steps and is_fresh(project, pipeline)):
        run(steps)
        return
    _shared(project, list(steps), pipeline, module, dataset, run)


def _shared(project: Project, steps: list[Any], pipeline: str, module: str, dataset: str,
            run: Callable[[Sequence[Any]], None]) -> None:
    """The baseline of `steps` restored into the fresh project, built first if need be: its
    last step run on a copy of the baseline of the others. The locks are taken from the
    longest steps to the shortest, so two builds never wait on each other in a cycle."""
    saved = BASELINES[0] / baseline_key(project, steps, module, dataset)
    with FileLock(str(saved) + ".lock"):
        if saved.exists():
            _restore(saved, project, pipeline)
            return
        if len(steps) > 1:
            _shared(project, steps[:-1], pipeline, module, dataset, run)
        run(steps[-1:])
        _keep(project, pipeline, saved)


def load_duckdb(
    project: Project, batches: Sequence[dict[str, Any]], *, pipeline: str, module: str,
    dataset: str, run: Callable[[Sequence[dict[str, Any]]], None],
) -> None:
    """`run(batches)` with the baseline shared: into a fresh project, all batches but the
    last are built once per test run and copied (`shared_loads`); the last batch is loaded
    for real."""
    if len(batches) > 1 and is_fresh(project, pipeline):
        shared_loads(project, batches[:-1], pipeline=pipeline, module=module, dataset=dataset,
                     run=run)
        batches = batches[-1:]
    run(batches)


# -- a warehouse loaded once per session, copied by each test ------------------------------


def load_once(factory: pytest.TempPathFactory, name: str,
              build: Callable[[Project], object]) -> Path:
    """The folder of a project `build` loads for real (`<folder>/project`, its dlt data dir
    `<folder>/_dlt_data`), made once per session. Session fixtures run before each test's
    isolation (`tests/conftest.py`), so the loads are isolated here. Read-only: tests copy
    it (`copy_project`)."""
    base = factory.mktemp(name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
        mp.setenv("DLT_DATA_DIR", str(base / "_dlt_data"))
        build(Project(base / "project"))
    return base


def copy_project(loaded: Path, into: Path) -> Project:
    """A private copy of the project `load_once` made (its own files, its own imports)."""
    shutil.copytree(loaded / "project", into)
    return Project(into)


# -- what a DuckDB destination received ----------------------------------------------------


class QueryLog:
    """Every statement the reconciler's DuckDB sessions receive, from DuckDB's own query log
    (`log_query_path`, set on each session through dlt's `credentials.local_config`): what
    was sent, without wrapping the reconciler. SQL text only: DuckDB logs no parameters."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
        self.path = path
        monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS__LOCAL_CONFIG",
                           json.dumps({"log_query_path": str(path)}))

    def clear(self) -> None:
        """Forget what was logged so far (DuckDB starts a new file at the next session)."""
        self.path.unlink(missing_ok=True)

    def statements(self) -> list[str]:
        """The statements logged since the last `clear`, one a line as DuckDB writes them."""
        return self.path.read_text().splitlines() if self.path.exists() else []
