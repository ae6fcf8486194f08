"""Delta and Iceberg tables written by dlt's own `table_format` paths into a local bucket:
the columns come from the Delta log and the Iceberg metadata, the rows from the table's
current version, and every drift kind is found as on Parquet files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.lakehouse import lake, sweeps
from tests.projects import Project

TABLE_FORMATS = ["delta", "iceberg"]


@pytest.fixture(scope="module")
def iceberg_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("iceberg-home")


@pytest.fixture(params=TABLE_FORMATS)
def open_lake(request: pytest.FixtureRequest, project: Project, tmp_path: Path,
              iceberg_home: Path) -> tuple[Project, Path, str]:
    bucket = (sweeps.same_path_bucket(iceberg_home) if request.param == "iceberg"
              else tmp_path / "bucket")
    lake.setup(project, bucket, "parquet", table_format=request.param, shared_by=__name__)
    return project, bucket, request.param


def _snapshot(bucket: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in bucket.rglob("*") if p.is_file()}


def test_all_four_drift_kinds_from_the_table_log(open_lake: tuple[Project, Path, str]) -> None:
    project, bucket, table_format = open_lake
    log = "_delta_log" if table_format == "delta" else "metadata"
    assert (bucket / "lake" / "events" / log).is_dir()  # dlt really wrote an open table
    before = _snapshot(bucket)

    _, found = lake.planted_drift(project)
    added = found[("additive", "events")]
    assert added["columns"] == ["payload_size"]
    assert added["column_types"] == {"payload_size": "BIGINT"}
    assert set(added["samples"]["payload_size"]) <= {i * 7 for i in range(100, 110)}
    assert len(added["samples"]["payload_size"]) == 5
    assert found[("additive", "readings")]["columns"] == ["unit"]
    assert found[("missing", "events")]["columns"] == ["score"]
    assert found[("type", "events")]["column_types"] == {"rank": "VARCHAR"}
    assert found[("removal", "events")]["coverage"]["actor_login"] == {
        "baseline": 0.8, "recent": 0.0}
    scan = "DELTA_SCAN(" if table_format == "delta" else "ICEBERG_SCAN("
    assert scan in found[("removal", "events")]["reproduce"]
    # read, never written: not a log entry, snapshot, data file or catalog row
    assert _snapshot(bucket) == before


def test_delta_reads_the_current_version_only(project: Project, tmp_path: Path) -> None:
    """A replace leaves the old version's files in the folder; the log says they are gone,
    so the drift they held is not reported."""
    bucket = tmp_path / "bucket"
    lake.setup(project, bucket, "parquet", table_format="delta", shared_by=__name__)
    project.python(f"""
import dlt
p = dlt.pipeline({lake.PIPELINE!r}, destination="filesystem", dataset_name="lake")
@dlt.resource(name="events", table_format="delta", write_disposition="replace")
def events():
    yield from ({{"id": i, "kind": "push", "rank": i, "score": i}} for i in range(3))
p.run(events(), loader_file_format="parquet")
""")
    parquet = list((bucket / "lake" / "events").glob("*.parquet"))
    assert len(parquet) > 1  # the replaced files are still there

    code, doc, stderr = lake.reconcile_json(project, "-s", "telemetry", "--dry-run")

    assert code == 0, stderr
    found = lake.by_kind(doc)
    # the replaced files held no `score` and 10 `payload_size` values; the current version
    # has `score` and no `payload_size` value
    assert ("missing", "events") not in found
    assert found[("additive", "events")]["columns"] == ["payload_size"]  # the log's schema
    assert found[("additive", "events")]["samples"] == {"payload_size": []}


def test_missing_delta_log_is_one_error_naming_the_table(project: Project,
                                                        tmp_path: Path) -> None:
    bucket = tmp_path / "bucket"
    lake.setup(project, bucket, "parquet", table_format="delta", shared_by=__name__)
    shutil.rmtree(bucket / "lake" / "events" / "_delta_log")

    code, doc, stderr = lake.reconcile_json(project, "-s", "telemetry", "--dry-run")

    assert code == 1, stderr
    errors = [r["error"] for r in doc["results"] if r["error"]]
    assert len(errors) == 1, errors
    assert "table `events`" in errors[0]
    assert "`_delta_log`" in errors[0]
    assert str(bucket / "lake" / "events") in errors[0]
    assert lake.by_kind(doc)[("additive", "readings")]["columns"] == ["unit"]  # still run


def test_reproduce_runs_where_the_extension_loads(open_lake: tuple[Project, Path, str]
                                                  ) -> None:
    """The reproduce text names the table's own scan; a DuckDB without the extension says
    so rather than reading something else."""
    project, bucket, table_format = open_lake
    code, doc, _ = lake.reconcile_json(project, "-s", "telemetry", "--dry-run")
    assert code == 0
    sql = lake.by_kind(doc)[("additive", "events")]["reproduce"]
    target = (str(bucket / "lake" / "events") if table_format == "delta"
              else str(bucket / "lake" / "events" / "metadata"))
    assert target in sql
    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    try:
        con.execute(sql).fetchall()
        failure = ""
    except duckdb.Error as exc:
        failure = str(exc).lower()
    finally:
        con.close()
    # it runs, or fails only for want of the extension
    assert not failure or table_format in failure, failure


@pytest.mark.parametrize(("corrupt", "expected"), [(False, 0), (True, 1)])
def test_console_script_exit_code_is_the_products_own(
    project: Project, tmp_path: Path, corrupt: bool, expected: int
) -> None:
    """deltalake can abort the interpreter at exit (134): the process ends with the code
    the command decided, after its output is written."""
    bucket = tmp_path / "bucket"
    lake.setup(project, bucket, "parquet", table_format="delta", shared_by=__name__)
    if corrupt:
        shutil.rmtree(bucket / "lake" / "events" / "_delta_log")
    script = Path(sys.executable).parent / "dlt-contract-ops"
    proc = subprocess.run(
        [str(script), "reconcile", "-s", "telemetry", "--dry-run", "--format", "json"],
        cwd=project.root, capture_output=True, text=True,
    )
    assert proc.returncode == expected, proc.stderr
    doc = json.loads(proc.stdout)  # flushed in full before the process ended
    assert ("additive", "readings") in lake.by_kind(doc)


@pytest.mark.parametrize("code", [0, 1, 3])
def test_exit_process_keeps_the_code_when_shutdown_aborts(project: Project, code: int) -> None:
    """The interpreter's shutdown aborting (as deltalake's runtime can, 134) does not change
    the exit code once a command is done: the abort stands in as an atexit handler."""
    proc = project.python_process(f"""
import atexit, os, sys
import deltalake  # noqa: F401
from dlt_contract_ops.commands.common import exit_process
atexit.register(os.abort)
def command():
    print("done")
    sys.exit({code})
exit_process(command)
""", check=False)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout == "done\n"


def test_a_broken_iceberg_table_is_one_error_naming_it(project: Project, iceberg_home: Path
                                                       ) -> None:
    """The newest metadata file is truncated: one error names the table and its folder, and
    the other table is checked."""
    bucket = sweeps.same_path_bucket(iceberg_home)
    lake.setup(project, bucket, "parquet", table_format="iceberg", shared_by=__name__)
    newest = sorted((bucket / "lake" / "events" / "metadata").glob("*.metadata.json"))[-1]
    newest.write_text("{")

    code, doc, stderr = lake.reconcile_json(project, "-s", "telemetry", "--dry-run")

    assert code == 1, stderr
    errors = [r["error"] for r in doc["results"] if r["error"]]
    assert len(errors) == 1, errors
    assert "table `events`" in errors[0]
    assert "Iceberg" in errors[0]
    assert str(bucket / "lake" / "events") in errors[0]
    assert lake.by_kind(doc)[("additive", "readings")]["columns"] == ["unit"]


@pytest.mark.parametrize("table_format", [None, "delta"])
def test_contract_verify_reads_the_lake(project: Project, tmp_path: Path,
                                        table_format: str | None) -> None:
    """A declared range on `readings.value` checked on the files: the second load's values
    (50 to 54.5) are outside `< 20`."""
    lake.setup(project, tmp_path / "bucket", "parquet", table_format=table_format,
               shared_by=__name__)
    source = f"TABLE_FORMAT = {table_format!r}\n" + lake.SOURCE.replace(
        "    value: Optional[float] = None",
        "    value: Annotated[Optional[float], Field(ge=0, lt=20)] = None",
    ).replace("from typing import Optional", "from typing import Annotated, Optional\n"
              "from pydantic import Field")
    project.module("telemetry_src", source)

    proc = project.cli("contract", "verify", "-s", "telemetry", "--format", "json",
                       "--dry-run", "--fail-on-drift")

    assert proc.returncode == 3, proc.stderr
    [finding] = [f for r in json.loads(proc.stdout)["results"] for f in r["findings"]]
    assert finding["table"] == "readings"
    assert [(v["column"], v["rule"], v["count"]) for v in finding["violations"]] == [
        ("value", "range", 10)]
