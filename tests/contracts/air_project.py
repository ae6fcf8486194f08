"""A one-resource project (`air`: `flights`) whose model declares one field as a test needs,
for the contract CLI in process (CliRunner) on a real project, models discovered from a real
dlt source."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dlt_contract_ops.cli import main
from tests.projects import Project

SOURCE = '''
from datetime import datetime
from typing import Annotated

import dlt
from pydantic import BaseModel

from dlt_contract_ops import contracts as c


@c.TableSemantics(keys=("flight",), owner="Ops")
class Flight(BaseModel):
    flight: str
    {field}


@dlt.resource(name="flights", columns=Flight)
def flights():
    yield {{"flight": "LH1", {row}}}


@dlt.source(name="air")
def air():
    return flights
'''

#: (field declaration, its value in the one row) by what the field declares
FIELDS = {
    "unit": ('capacity: Annotated[int, c.Semantics(unit="{}")]', '"capacity": 180'),
    "timezone": ('departs: Annotated[datetime, c.Semantics(timezone="{}")]',
                 '"departs": "2026-12-01T08:00:00"'),
}


def write_source(project: Project, unit: str, *, declares: str = "unit") -> None:
    """The `air` source with its field declaring `unit` (or the `declares` property)."""
    field, row = FIELDS[declares]
    # a module name per declaration: the CLI runs in this process, which imports a module once
    module = f"air_{declares}_" + "".join(ch if ch.isalnum() else "_" for ch in unit)
    project.module(module, SOURCE.format(field=field.format(unit), row=row))
    (project.root / ".dlt" / "config.toml").write_text(
        f'[sources.air.contract_ops]\nref = "{module}:air"\npipeline_name = "air_pipe"\n'
        'destination = "duckdb"\ndataset_name = "air_data"\n'
    )


@pytest.fixture(autouse=True)
def in_project(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Import it into a test module: `--out` and `--against` default to ./contracts."""
    monkeypatch.chdir(project.root)


def invoke(project: Project, *args: str) -> tuple[int, str]:
    """`dlt-contract-ops contract ARGS --project-dir PROJECT`: exit code and output."""
    result = CliRunner().invoke(main, ["contract", *args, "--project-dir", str(project.root)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output
