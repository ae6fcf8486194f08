"""A source whose build never returns (a blocked source function, an import that waits on the
network) is bounded by `source_build_timeout`: that source is an error naming the timeout and
the key to raise it, the other sources are reconciled and validated, and the process exits.

Real dlt pipelines into DuckDB; the CLI in process (CliRunner), and once as a real process,
for what only a process shows: that it exits with a build still blocked in it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from dlt_contract_ops.cli import EXIT_SOURCE_ERROR, EXIT_USAGE, main
from tests.projects import Project

GOOD = """
import dlt
from pydantic import BaseModel


class Person(BaseModel):
    id: int
    name: str


@dlt.resource(columns=Person, schema_contract={"columns": "evolve"})
def people(extra=False):
    for i in range(3):
        row = {"id": i, "name": f"p{i}"}
        if extra:
            row["nickname"] = f"n{i}"  # a column the model does not declare: additive drift
        yield row


@dlt.source(name="crm")
def crm(extra=False):
    return people(extra)
"""

#: the source function waits until the test releases it (never, in a real process)
STUCK = """
import threading

import dlt
from pydantic import BaseModel

RELEASE = threading.Event()


class Thing(BaseModel):
    id: int


@dlt.resource(columns=Thing)
def things():
    yield {"id": 1}


@dlt.source(name="stuck")
def stuck():
    RELEASE.wait()
    return things()
"""


def _project(project: Project, timeout: str = "1s") -> Project:
    project.module("crm_mod", GOOD)
    project.module("stuck_mod", STUCK)
    project.config(f'[contract_ops]\nalert_sinks = []\nsource_build_timeout = "{timeout}"\n')
    project.source("crm", "crm_mod:crm", pipeline_name="crm_pipe", dataset_name="crm_data")
    project.source("stuck", "stuck_mod:stuck", pipeline_name="crm_pipe", dataset_name="crm_data")
    project.python(
        """
        import dlt
        from crm_mod import crm
        dlt.pipeline("crm_pipe", destination="duckdb", dataset_name="crm_data").run(
            crm(extra=True)
        )
        """
    )
    return project


def _invoke(project: Project, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--project-dir", str(project.root)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def _release_abandoned_builds() -> list[threading.Thread]:
    """Let this process's blocked builds finish (the module is imported once per process)."""
    module = sys.modules.get("stuck_mod")
    if module is not None:
        module.RELEASE.set()
    return [t for t in threading.enumerate() if t.name.startswith("contract-ops-build")]


def test_reconcile_all_reports_the_blocked_source_and_checks_the_other(
    project: Project, tmp_path: Path
) -> None:
    _project(project)

    code, out = _invoke(project, "reconcile", "--all", "--format", "json")

    assert code == EXIT_SOURCE_ERROR, out
    results = json.loads(out)["results"]
    stuck = [r for r in results if r["source"] == "stuck"]
    assert len(stuck) == 1, results
    assert "was not built within 1s" in stuck[0]["error"]
    assert "`source_build_timeout`" in stuck[0]["error"]
    assert "[contract_ops]" in stuck[0]["error"]
    crm = [r for r in results if r["source"] == "crm"]
    assert crm
    assert all(r["error"] is None for r in crm), crm
    found = {(f["table"], c) for r in crm for f in r["findings"] for c in f["columns"]}
    assert ("people", "nickname") in found

    # the abandoned build, released now, finishes in its thread and writes nothing shared:
    # no source cache entry for `stuck` (the next run still times out rather than serving it)
    for thread in _release_abandoned_builds():
        thread.join(30)
        assert not thread.is_alive()
    cached = list((tmp_path / "_dlt_data").rglob("source_cache/*.json"))
    assert len(cached) == 1, cached  # `crm`'s only
    assert "stuck" not in cached[0].read_text()


def test_validate_reports_the_blocked_source_and_checks_the_other(project: Project) -> None:
    _project(project)

    code, out = _invoke(project, "validate", "--format", "json")

    assert code == 1, out
    problems = json.loads(out)["problems"]
    [stuck] = [p for p in problems if "stuck" in p["key"]]
    assert stuck["rule"] == "source_importable"
    assert "was not built within 1s" in stuck["message"]
    assert "`source_build_timeout`" in stuck["message"]
    assert not [p for p in problems if "crm" in p["key"]], problems
    _release_abandoned_builds()


@pytest.mark.parametrize("value", ["soon", "0", "-5s"])
def test_a_bad_timeout_is_a_configuration_error(project: Project, value: str) -> None:
    _project(project, timeout=value)

    code, out = _invoke(project, "reconcile", "--all")

    assert code == EXIT_USAGE, out
    assert "`source_build_timeout`" in out
    assert "Traceback" not in out


def test_the_process_exits_with_a_build_still_blocked(project: Project) -> None:
    """A blocked build is abandoned in a daemon thread: the CLI prints, exits 1, and the
    interpreter does not wait for it (the source function waits on an event nobody sets)."""
    _project(project)

    try:
        proc = subprocess.run(
            [sys.executable, "-m", "dlt_contract_ops.cli", "reconcile", "--all"],
            cwd=project.root,
            capture_output=True,
            text=True,
            timeout=300,  # a hang guard only: without the bound this never returns
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the process did not exit: {exc.stdout!r} {exc.stderr!r}") from None

    assert proc.returncode == EXIT_SOURCE_ERROR, proc.stdout + proc.stderr
    assert "was not built within 1s" in proc.stdout
    assert "nickname" in proc.stdout
    assert "Traceback" not in proc.stderr
