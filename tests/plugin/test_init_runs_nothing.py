"""`init` reads the project's code before it imports any of it: a helper script that mentions
dlt but defines no source is never imported, and a source module that would run a pipeline
when imported has the run refused. `--dry-run` leaves the project folder as it was."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

from tests.projects import Project

#: a modelled source: what init must still find and declare
SHOP = '''
import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    amount: float


@dlt.resource(columns=Order)
def orders():
    yield {"id": 1, "amount": 1.5}


@dlt.source
def shop():
    return orders
'''

#: a helper script that mentions dlt but defines no source; its top level writes a marker and
#: updates the warehouse, as running it by hand would
HELPER = '''
"""Patch the warehouse by hand (after a bad `dlt` load)."""
import sys
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
ROOT.joinpath("helper.marker").write_text("ran")
with duckdb.connect(str(ROOT / "warehouse.duckdb")) as con:
    con.execute("UPDATE orders SET amount = -1")
'''

#: a source module whose top level runs its pipeline, through a function (no `.run(` at
#: module level for a reading of the code to see)
RUNS_ITSELF = '''
from pathlib import Path

import dlt
from pydantic import BaseModel


class Contact(BaseModel):
    id: int
    email: str


@dlt.resource(columns=Contact)
def contacts():
    Path(__file__).resolve().parent.parent.joinpath("extracted.marker").write_text("ran")
    yield {"id": 1, "email": "a@example.com"}


@dlt.source
def crm():
    return contacts


def main():
    dlt.pipeline("crm_pipeline", destination="duckdb", dataset_name="crm_data").run(crm())


main()
'''


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _amounts(root: Path) -> list[float]:
    with duckdb.connect(str(root / "warehouse.duckdb")) as con:
        return [row[0] for row in con.execute("SELECT amount FROM orders ORDER BY id").fetchall()]


@pytest.fixture
def mixed(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project with a modelled source, a helper script and a source that runs itself;
    Python writes bytecode caches here and in a child process, whatever the shell says."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    project.module("pipelines.shop", SHOP)
    project.module("scripts.fix_orders", HELPER)
    project.module("pipelines.crm", RUNS_ITSELF)
    project.config("[runtime]\ndlthub_telemetry = false\n")
    with duckdb.connect(str(project.root / "warehouse.duckdb")) as con:
        con.execute("CREATE TABLE orders AS SELECT 1 AS id, 1.5::DOUBLE AS amount")
    return project


def _nothing_ran(project: Project, data_dir: Path) -> None:
    root = project.root
    assert not (root / "helper.marker").exists()
    assert not (root / "extracted.marker").exists()
    assert _amounts(root) == [1.5]
    assert not (root / "crm_pipeline.duckdb").exists()
    # the pipeline never ran, and making it at import left no state in dlt's data dir
    assert not (data_dir / "pipelines" / "crm_pipeline").exists()


@pytest.mark.parametrize("how", ["in_process", "process"])
def test_dry_run_imports_no_helper_runs_no_pipeline_writes_nothing(
    mixed: Project, tmp_path: Path, how: str
) -> None:
    before = _files(mixed.root)
    proc = mixed.cli("init", "--dry-run") if how == "in_process" else mixed.cli_process(
        "init", "--dry-run"
    )
    assert proc.returncode == 0, proc.stderr
    _nothing_ran(mixed, tmp_path / "_dlt_data")
    assert _files(mixed.root) == before  # no file, no `.dlt/config.toml` change, no bytecode
    # the modelled source is found; the one that runs itself is named, with why
    assert '[sources.shop.contract_ops]\nref = "pipelines.shop:shop"' in proc.stdout
    assert "crm" not in proc.stdout
    assert "`pipelines/crm.py` runs a pipeline when imported" in proc.stderr
    assert "fix_orders" not in proc.stderr  # a helper is not a candidate: not even a note


@pytest.mark.parametrize("how", ["in_process", "process"])
def test_init_declares_the_source_and_changes_only_the_config(
    mixed: Project, tmp_path: Path, how: str
) -> None:
    before = _files(mixed.root)
    proc = mixed.cli("init") if how == "in_process" else mixed.cli_process("init")
    assert proc.returncode == 0, proc.stderr
    _nothing_ran(mixed, tmp_path / "_dlt_data")
    after = _files(mixed.root)
    config = after.pop(".dlt/config.toml").decode()
    assert after == {k: v for k, v in before.items() if k != ".dlt/config.toml"}
    assert config.startswith(before[".dlt/config.toml"].decode())
    assert '[sources.shop.contract_ops]\nref = "pipelines.shop:shop"' in config
    assert "crm" not in config
    assert "Wrote 1 table(s)" in proc.stdout


@pytest.mark.parametrize(
    ("code", "defines"),
    [
        ("import dlt\n@dlt.source\ndef s():\n    return []", True),
        ("import dlt as d\n@d.resource(columns=M)\ndef r():\n    yield 1", True),
        ("from dlt import resource as res\n@res\nasync def r():\n    yield 1", True),
        ("from dlt import source\nsrc = source\n@src(name='x')\ndef s():\n    return []", True),
        ("import dlt\norders = dlt.resource([1], name='orders', columns=M)", True),
        ("import dlt\np = dlt.pipeline('p')\nwith p.sql_client() as c:\n    c.execute_sql('x')",
         False),
        ("import dlt  # only mentions it\nfrom x import source\n@source\ndef s():\n    pass",
         False),
        ("import duckdb\nduckdb.connect('x').execute('UPDATE t SET a = 1')  # dlt", False),
    ],
)
def test_defines_sources(code: str, defines: bool) -> None:
    from dlt_contract_ops.sources.scan import defines_sources

    assert defines_sources(code) is defines


#: a source module that makes its pipeline at module level, as scripts often do, in dev mode
#: (dlt then wipes the pipeline's local state when it is made)
MADE_AT_IMPORT = SHOP + '''

pipeline = dlt.pipeline("shop_pipeline", destination="duckdb", dataset_name="shop_data",
                        dev_mode=DEV)

if __name__ == "__main__":
    pipeline.run(shop())
'''


def test_a_pipeline_made_at_import_leaves_the_local_state_alone(
    project: Project, tmp_path: Path
) -> None:
    project.module("pipelines.shop", MADE_AT_IMPORT.replace("DEV", "False"))
    project.config("[runtime]\ndlthub_telemetry = false\n")
    project.python("import runpy\nrunpy.run_module('pipelines.shop', run_name='__main__')")
    project.module("pipelines.shop", MADE_AT_IMPORT.replace("DEV", "True"))
    state = tmp_path / "_dlt_data" / "pipelines" / "shop_pipeline"
    before = _files(state)
    assert "state.json" in before
    assert any(k.startswith("schemas/") for k in before)

    proc = project.cli("init")
    assert proc.returncode == 0, proc.stderr
    assert _files(state) == before
    # the module was imported (making a pipeline is no run) and its pipeline matched
    config = (project.root / ".dlt" / "config.toml").read_text()
    assert 'ref = "pipelines.shop:shop"\npipeline_name = "shop_pipeline"' in config
