"""The console script ends its process without the interpreter's teardown once the command
returned (`commands.common.exit_process(skip_teardown=True)`), and leaves out nothing a
process's exit owes: the command's exit code, every byte of stdout and stderr, the `atexit`
handlers (dlt's, logging's, the user's own), and a thread that is not a daemon, which it waits
for by taking the interpreter's own way out. Real `dlt-contract-ops` processes on a real dlt
load into DuckDB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.projects import Project

SOURCE = '''
import atexit
import dlt
import os
import threading
import time
from pydantic import BaseModel

MARKS = os.environ["EXIT_MARKS"]


def _mark(name):
    with open(os.path.join(MARKS, name), "w") as fh:
        fh.write("done")


# the user's module asks for work at exit: an `atexit` handler and, when told, a thread that
# is not a daemon and finishes its work after the command is over
atexit.register(_mark, "atexit")
if os.environ.get("EXIT_THREAD"):
    def _late():
        time.sleep(0.5)
        _mark("thread")
    threading.Thread(target=_late, daemon=False).start()


class Event(BaseModel):
    id: int
    kind: str


@dlt.source(name="app")
def app():
    return [dlt.resource([{"id": 1, "kind": "a"}], name=f"events_{n}", columns=Event)
            for n in range(40)]
'''

LOAD = '''
import dlt
from app_mod import app

p = dlt.pipeline("exit_pipe", destination="duckdb", dataset_name="exit_raw")
p.run(app())
p.run(dlt.resource([{"id": 2, "kind": "b", "extra": "x" * 3000}], name="events_0"),
      schema_contract="evolve")
'''


@pytest.fixture
def app(project: Project, tmp_path: Path) -> Project:
    (tmp_path / "marks").mkdir()
    project.module("app_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.secrets('[destination.duckdb.credentials]\ndatabase = "exit_pipe.duckdb"\n')
    project.source("app", "app_mod:app", pipeline_name="exit_pipe", dataset_name="exit_raw")
    # a process of its own: the module registers its handler in whatever imports it
    project.python_process(f"import os\nos.environ['EXIT_MARKS'] = {str(tmp_path / 'marks')!r}\n"
                           + LOAD)
    (tmp_path / "marks" / "atexit").unlink()  # the load's own process ran the handler
    return project


def test_the_console_script_keeps_its_exit_code_output_and_atexit_handlers(
    app: Project, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    proc = app.cli_process("reconcile", "-s", "app", "--dry-run", "--format", "json",
                           "--fail-on-drift", env={"EXIT_MARKS": str(marks)})

    assert proc.returncode == 3, proc.stderr  # drift found, `--fail-on-drift`
    document = json.loads(proc.stdout)  # the whole document reached the pipe
    [additive] = [r for r in document["results"] if r["detector"] == "additive"]
    assert [f["columns"] for f in additive["findings"]] == [["extra"]]
    assert (marks / "atexit").read_text() == "done"


def test_a_usage_error_exits_2_with_its_one_line(
    app: Project, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    proc = app.cli_process("reconcile", "-s", "nope", "--dry-run",
                           env={"EXIT_MARKS": str(marks)})

    assert proc.returncode == 2
    assert proc.stderr.startswith("Error: ")
    assert "nope" in proc.stderr


def test_a_thread_that_is_not_a_daemon_is_waited_for(app: Project, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    proc = app.cli_process("reconcile", "-s", "app", "--dry-run", "--format", "json",
                           env={"EXIT_MARKS": str(marks), "EXIT_THREAD": "1"})

    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"]
    # the thread finished its work after the command: the interpreter's exit waited for it
    assert (marks / "thread").read_text() == "done"
    assert (marks / "atexit").read_text() == "done"
