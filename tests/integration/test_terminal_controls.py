"""A column name holding ESC, BEL and a bidi override (U+202E), really loaded into DuckDB
(dlt's `direct` naming keeps it as it is), reaches neither stdout nor stderr raw: the text
output and the logging sink show it escaped; the JSON output keeps the name itself."""

from __future__ import annotations

import json

import duckdb
import pytest
from click.testing import CliRunner

from dlt_contract_ops.commands import main
from tests.projects import Project

HOSTILE = "evil\x1b[31m\a\u202etxt"
SHOWN = "evil\\u001b[31m\\u0007\\u202etxt"
RAW = ("\x1b", "\a", "\u202e")

SOURCE = '''
import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    kind: str


@dlt.source(name="app")
def app():
    return dlt.resource([{"id": 1, "kind": "a"}], name="events", columns=Event)
'''

# the same table loaded once more without the model (its contract would drop an unknown
# column): the hostile column lands beside the modelled ones
LOAD = f'''
import dlt
from app_mod import app

p = dlt.pipeline("ctl_pipe", destination="duckdb", dataset_name="ctl_raw")
p.run(app())
p.run(dlt.resource([{{"id": 2, "kind": "b", {HOSTILE!r}: "x"}}], name="events"),
      schema_contract="evolve")
'''


def test_a_hostile_column_name_is_escaped_on_the_terminal(project: Project) -> None:
    project.module("app_mod", SOURCE)
    project.config('[schema]\nnaming = "direct"\n\n[contract_ops]\nalert_sinks = ["logging"]\n')
    project.source("app", "app_mod:app", pipeline_name="ctl_pipe", dataset_name="ctl_raw")
    project.python(LOAD)
    with duckdb.connect(str(project.root / "ctl_pipe.duckdb"), read_only=True) as con:
        names = [r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'events'"
        ).fetchall()]
    assert HOSTILE in names  # the raw name really is in the warehouse

    text = project.cli("reconcile", "-s", "app", "--no-dedup")
    assert text.returncode == 0, text.stderr
    for stream in (text.stdout, text.stderr):
        assert not any(c in stream for c in RAW), ascii(stream)
    assert f'Columns: "{SHOWN}"' in text.stdout
    [line] = [x for x in text.stderr.splitlines() if "schema drift kind=additive" in x]
    assert f'columns=["{SHOWN}"]' in line

    doc = json.loads(project.cli("reconcile", "-s", "app", "--dry-run", "--format",
                                 "json").stdout)
    assert doc["results"][0]["findings"][0]["columns"] == [HOSTILE]


@pytest.mark.parametrize(
    "args",
    [
        ("ack", "bad\nid\x1b", "--until", "1d", "--reason", "r"),
        ("unack", "bad\nid\x1b"),
        ("reconcile", "-s", "bad\nid\x1b"),
        ("profile", "-s", "bad\nid\x1b"),
        ("gate", "check", "-s", "bad\nid\x1b"),
    ],
    ids=lambda args: args[0] if args[0] != "gate" else "gate check",
)
def test_a_name_typed_with_a_line_break_is_one_escaped_error_line(
    project: Project, args: tuple[str, ...]
) -> None:
    """An id or source name holding a line break or ESC stays inside its one `Error:` line,
    shown escaped (it was printed raw, or split onto a second line)."""
    project.module("app_mod", SOURCE)
    project.source("app", "app_mod:app", pipeline_name="ctl_pipe", dataset_name="ctl_raw")
    result = CliRunner().invoke(main, [*args, "--project-dir", str(project.root)])
    assert result.exit_code in (1, 2), result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: "), line
    assert "bad\\nid\\u001b" in line, line
    assert "\x1b" not in result.output
