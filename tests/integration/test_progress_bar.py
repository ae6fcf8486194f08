"""DuckDB draws its progress bar on the process's own stdout (fd 1, not `sys.stdout`) for any
statement that runs longer than `progress_bar_time` (2 s by default), piped or not: a slow
coverage query would put bars in front of `reconcile --format json`'s document. The DuckDB
adapter turns the bar off as its connection is configured.

`progress_bar_time = 0` in dlt's DuckDB `local_config` stands in for a slow warehouse: every
statement run after it draws a bar, so the few SET statements that configure the connection
after the user's own settings (ours among them) draw one each here, where a real 2 s threshold
never would. What must not draw is a query: the bars are the same whether removal runs its
coverage query per table or not."""

from __future__ import annotations

import json

from tests.projects import Project

SOURCE = '''
import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    kind: str


@dlt.source(name="app")
def app():
    return [dlt.resource([{"id": 1, "kind": "a"}], name=f"events_{n}", columns=Event)
            for n in range(4)]
'''

LOAD = '''
import dlt
from app_mod import app

p = dlt.pipeline("bar_pipe", destination="duckdb", dataset_name="bar_raw")
p.run(app())
p.run(dlt.resource([{"id": 2, "kind": "b", "extra": "x"}], name="events_0"),
      schema_contract="evolve")
'''

SLOW = "[destination.duckdb.credentials.local_config]\nprogress_bar_time = 0\n"
BAR = "\u2595"  # the bar's left edge


def _run(project: Project, *extra: str) -> tuple[int, dict[str, object]]:
    """Bars drawn on stdout by one `reconcile --format json` process, and its document."""
    proc = project.cli_process("reconcile", "-s", "app", "--dry-run", "--format", "json",
                               *extra)
    assert proc.returncode == 0, proc.stderr
    start = proc.stdout.index("\n{") + 1 if not proc.stdout.startswith("{") else 0
    assert BAR not in proc.stdout[start:]
    return proc.stdout[:start].count(BAR), json.loads(proc.stdout[start:])


def test_queries_draw_no_duckdb_progress_bar_on_stdout(project: Project) -> None:
    project.module("app_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.secrets('[destination.duckdb.credentials]\ndatabase = "bar_pipe.duckdb"\n\n' + SLOW)
    project.source("app", "app_mod:app", pipeline_name="bar_pipe", dataset_name="bar_raw")
    project.python(LOAD)
    plain, doc = _run(project)
    with_removal, doc_removal = _run(project, "--include-removal")
    [additive] = [r for r in doc["results"] if r["detector"] == "additive"]  # type: ignore[union-attr]
    assert additive["findings"][0]["columns"] == ["extra"]
    assert [r["detector"] for r in doc_removal["results"]].count("removal") == 1  # type: ignore[union-attr]
    # four more coverage queries, not one more bar: only the connection's set-up drew
    assert with_removal == plain
