"""Loaded PostgreSQL baselines shared by a test run: `tests/duckdb_baselines.py` for tests
that load into a dataset of their own. The first build's tables (and dlt's merge staging
schema) are copied into kept schemas of the run and its pipeline folder is kept; a later test
gets the tables copied into its own dataset and the folder with its dataset's name in dlt's
state. Its later loads stay real. `tests/conftest.py` drops the kept schemas at the end of
the run (`drop_kept`)."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from filelock import FileLock

from tests.duckdb_baselines import BASELINES, baseline_key, pipeline_dir, point_state
from tests.projects import Project

#: the file in a kept baseline's folder that names its kept schemas (one a line)
SCHEMAS = "postgres-schemas"


def _copy(dsn: str, pairs: Sequence[tuple[str, str]]) -> list[str]:
    """Each `(source, target)` schema that exists copied table by table; the targets made."""
    import psycopg2
    from psycopg2.sql import SQL, Identifier

    made = []
    con = psycopg2.connect(dsn)
    try:
        with con, con.cursor() as cur:
            for source, target in pairs:
                cur.execute("SELECT table_name FROM information_schema.tables"
                            " WHERE table_schema = %s AND table_type = 'BASE TABLE'", (source,))
                tables = [r[0] for r in cur.fetchall()]
                if not tables:
                    continue
                cur.execute(SQL("CREATE SCHEMA {}").format(Identifier(target)))
                for table in tables:
                    new, old = Identifier(target, table), Identifier(source, table)
                    cur.execute(SQL("CREATE TABLE {} (LIKE {} INCLUDING ALL)").format(new, old))
                    cur.execute(SQL("INSERT INTO {} SELECT * FROM {}").format(new, old))
                made.append(target)
    finally:
        con.close()
    return made


def shared_postgres_loads(
    project: Project, steps: Sequence[Any], *, pipeline: str, module: str, dataset: str,
    dsn: str, run: Callable[[Sequence[Any]], None],
) -> None:
    """`run(steps)`: real dlt loads into `dataset` on PostgreSQL. Into a fresh project (no
    pipeline folder) they run once per test run under a key of the steps, the source module
    and the project's config; later tests get a copy of what they left (the same tables and
    rows, load ids and pipeline state) in their own dataset. `steps` must name everything
    `run` does with them (JSON)."""
    if not (BASELINES and steps and not pipeline_dir(pipeline).exists()):
        run(steps)
        return
    key = baseline_key(project, steps, module, dataset, any_dataset=True)
    saved = BASELINES[0] / f"pg-{key}"
    with FileLock(str(saved) + ".lock"):
        if saved.exists():
            copy_kept(dsn, saved, dataset)
            shutil.copytree(saved / "pipeline", pipeline_dir(pipeline))
            point_state(project, pipeline, dataset_name=dataset)
            return
        run(steps)
        run_tag = hashlib.sha256(str(BASELINES[0]).encode()).hexdigest()[:8]
        staging = saved.with_name(saved.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        keep(dsn, dataset, f"co_kept_{run_tag}_{key}", staging)
        shutil.copytree(pipeline_dir(pipeline), staging / "pipeline")
        staging.rename(saved)


def keep(dsn: str, dataset: str, name: str, folder: Path) -> None:
    """`dataset` (and dlt's staging dataset) copied into schemas `name` kept for the run,
    named in `folder` for `copy_kept` and `drop_kept`."""
    kept = _copy(dsn, [(dataset, name), (f"{dataset}_staging", f"{name}_staging")])
    (folder / SCHEMAS).write_text("\n".join(kept))
    (folder / "dsn").write_text(dsn)


def copy_kept(dsn: str, saved: Path, dataset: str) -> None:
    """The schemas kept in `saved` (`keep`) copied into `dataset` and its staging dataset."""
    kept = (saved / SCHEMAS).read_text().split()
    _copy(dsn, [(kept[0], dataset), *[(s, f"{dataset}_staging") for s in kept[1:]]])


def drop_kept(folder: Path) -> None:
    """Drop the kept schemas of the run's PostgreSQL baselines in `folder`."""
    import psycopg2
    from psycopg2.sql import SQL, Identifier

    for saved in folder.glob(f"pg-*/{SCHEMAS}"):
        con = psycopg2.connect((saved.parent / "dsn").read_text())
        try:
            con.autocommit = True
            with con.cursor() as cur:
                for schema in saved.read_text().split():
                    cur.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(schema)))
        finally:
            con.close()
