"""Additive, missing, type and removal drift on dlt's `filesystem` destination: a real
pipeline loads Parquet or JSONL files into a local `file://` bucket, and `reconcile` (the
CLI, the Python API and `dlt pipeline <name> reconcile`) reads what the files say."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from dlt_contract_ops.engine import reconcile
from tests.destinations.plain import plain_select
from tests.inprocess import run_dlt
from tests.lakehouse import lake
from tests.projects import Project

FORMATS = ["parquet", "jsonl"]

#: what each format's files say the drifted columns are
ADDED = {"parquet": {"payload_size": "BIGINT"}, "jsonl": {"payload_size": "BIGINT"}}


@pytest.fixture(params=FORMATS)
def loaded(request: pytest.FixtureRequest, project: Project, tmp_path: Path
           ) -> tuple[Project, Path, str]:
    bucket = tmp_path / "bucket"
    lake.setup(project, bucket, request.param, shared_by=__name__)
    return project, bucket, request.param


def _files_snapshot(bucket: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in bucket.rglob("*") if p.is_file()}


def test_cli_finds_all_four_drift_kinds(loaded: tuple[Project, Path, str]) -> None:
    project, bucket, fmt = loaded
    before = _files_snapshot(bucket)
    doc, found = lake.planted_drift(project)
    assert {(r["destination"], r["dataset"]) for r in doc["results"]} == {("filesystem", "lake")}
    added = found[("additive", "events")]
    assert added["columns"] == ["payload_size"]
    assert added["column_types"] == ADDED[fmt]
    assert set(added["samples"]["payload_size"]) <= {i * 7 for i in range(100, 110)}
    assert len(added["samples"]["payload_size"]) == 5
    assert found[("additive", "readings")]["columns"] == ["unit"]

    assert found[("missing", "events")]["columns"] == ["score"]
    retyped = found[("type", "events")]
    assert retyped["columns"] == ["rank"]
    assert retyped["column_types"] == {"rank": "VARCHAR"}
    assert retyped["expected_types"] == {"rank": "bigint"}

    dark = found[("removal", "events")]  # windowed on `loaded_at`, read from the files
    assert dark["columns"] == ["actor_login"]
    assert dark["coverage"]["actor_login"] == {"baseline": 0.8, "recent": 0.0}
    first_seen = datetime.fromisoformat(dark["first_seen"]).timestamp()
    assert abs(first_seen - time.time()) < 600  # the dark load is the recent one

    # read, never written: not a file added, changed or removed
    assert _files_snapshot(bucket) == before


def test_reproduce_reads_the_files_as_pasted(loaded: tuple[Project, Path, str]) -> None:
    project, bucket, fmt = loaded
    code, doc, stderr = lake.reconcile_json(
        project, "-s", "telemetry", "--include-removal", "--dry-run")
    assert code == 0, stderr
    found = lake.by_kind(doc)
    scan = "READ_PARQUET(" if fmt == "parquet" else "READ_JSON("
    coverage_sql = found[("removal", "events")]["reproduce"]
    samples_sql = found[("additive", "events")]["reproduce"]
    assert scan in coverage_sql
    assert str(bucket / "lake" / "events") in coverage_sql
    con = duckdb.connect()  # a fresh shell: no view, nothing but the pasted text
    try:
        coverage = con.execute(coverage_sql).fetchall()
        samples = con.execute(samples_sql).fetchall()
    finally:
        con.close()
    assert sorted((w, n, c) for w, n, c in coverage) == [("baseline", 20, 16), ("recent", 10, 0)]
    # the sampled rows, read plainly from the files: the samples, newest first
    plain_select(samples_sql, "duckdb")
    assert [r[0] for r in samples] == found[("additive", "events")]["samples"]["payload_size"]


def test_python_api_reads_the_bucket(loaded: tuple[Project, Path, str]) -> None:
    project, _, _ = loaded
    results = reconcile.run(["telemetry"], detectors=["additive", "missing", "type", "removal"],
                            dry_run=True, project_dir=project.root)
    assert [r.error for r in results] == [None] * 4
    kinds = sorted((f.drift_type, f.table, tuple(f.columns)) for r in results for f in r.findings)
    assert kinds == [
        ("additive", "events", ("payload_size",)), ("additive", "readings", ("unit",)),
        ("missing", "events", ("score",)), ("removal", "events", ("actor_login",)),
        ("type", "events", ("rank",)),
    ]


def test_dlt_pipeline_reconcile(loaded: tuple[Project, Path, str]) -> None:
    """dlt's own CLI with the plugin's command, in this process (`run_dlt`: the plugins
    discovered afresh, as a `dlt` process does)."""
    import json

    project, _, _ = loaded
    proc = run_dlt(["pipeline", lake.PIPELINE, "reconcile", "--dry-run", "--format", "json",
                    "--fail-on-drift"], project.root, {})
    assert proc.returncode == 3, proc.stderr  # drift found, and --fail-on-drift says so
    doc = json.loads(proc.stdout)
    assert {("additive", "events"), ("missing", "events"), ("type", "events")} <= set(
        lake.by_kind(doc))


def test_two_sources_on_one_dataset(project: Project, tmp_path: Path) -> None:
    """A second source on the same bucket and dataset in the same run is checked as the
    first is: its queries read views of its own adapter, not the first source's."""
    lake.setup(project, tmp_path / "bucket", "parquet", shared_by=__name__)
    project.source("telemetry_too", "telemetry_src:telemetry", pipeline_name=lake.PIPELINE,
                   destination="filesystem", dataset_name="lake",
                   load_timestamp_column="loaded_at")

    code, doc, stderr = lake.reconcile_json(
        project, "-s", "telemetry", "-s", "telemetry_too", "--include-removal", "--dry-run")

    assert code == 0, stderr
    assert [r["error"] for r in doc["results"]] == [None] * len(doc["results"])
    found = {(r["source"], f["drift_type"], f["table"])
             for r in doc["results"] for f in r["findings"]}
    assert found == {(s, *k) for s in ("telemetry", "telemetry_too") for k in lake.PLANTED}
