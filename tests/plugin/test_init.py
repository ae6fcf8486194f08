"""`dlt-contract-ops init` on a loaded project: the TOML it prints, what it writes, what it
keeps, and what it refuses to import."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.plugin import project as shop
from tests.plugin.conftest import Loaded

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: what init declares for the loaded project, by dlt source name
EXPECTED: dict[str, dict[str, str]] = {
    "shop": {
        "ref": "pipelines.shop:shop",
        "pipeline_name": shop.SHOP_PIPELINE,
        "destination": "duckdb",
        "dataset_name": shop.SHOP_DATASET,
    },
    # a standalone resource: its pipeline is found by its table
    "events": {
        "ref": "pipelines.shop:events",
        "pipeline_name": shop.EVENTS_PIPELINE,
        "destination": "duckdb",
        "dataset_name": shop.EVENTS_DATASET,
    },
    # never loaded on this machine: declared without a pipeline
    "ghost": {"ref": "pipelines.shop:ghost"},
}

EXISTING = """\
# the team's settings: init must leave every byte of this as it is
[runtime]
dlthub_telemetry = false

[sources.shop]
page_size = 100 # a source setting, next to where init adds a table
"""


def _declared(toml: str) -> dict[str, Any]:
    doc = tomllib.loads(toml)
    return {name: table["contract_ops"] for name, table in doc.get("sources", {}).items()
            if "contract_ops" in table}


def test_dry_run_prints_the_tables_and_writes_nothing(loaded: Loaded) -> None:
    config = loaded.root / ".dlt" / "config.toml"
    config.write_text(EXISTING)
    proc = loaded.ops("init", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert _declared(proc.stdout) == EXPECTED  # stdout is only TOML
    assert config.read_text() == EXISTING
    # what it skipped, and why, on stderr
    assert "`pipelines.shop:needs_token` needs arguments (token)" in proc.stderr
    assert "`pipelines/run_on_import.py` calls `.run(...)` when imported: skipped" in (
        proc.stderr
    )
    assert "`pipelines.shop:no_models`: no resource declares a Pydantic model" in proc.stderr
    assert "source `ghost`: no local pipeline holds its schema" in proc.stderr
    # the script that runs a pipeline on import was never imported
    assert not (loaded.root / shop.MARKER).exists()


def test_writes_after_the_existing_content_and_reconcile_uses_it(loaded: Loaded) -> None:
    config = loaded.root / ".dlt" / "config.toml"
    config.write_text(EXISTING)
    proc = loaded.ops("init")
    assert proc.returncode == 0, proc.stderr
    assert "Wrote 3 table(s)" in proc.stdout
    text = config.read_text()
    assert text.startswith(EXISTING)
    assert _declared(text) == EXPECTED
    assert tomllib.loads(text)["sources"]["shop"]["page_size"] == 100

    run = loaded.ops("reconcile", "-s", "shop", "-s", "events", "--dry-run", "--fail-on-drift")
    assert run.returncode == 3, run.stderr
    assert shop.DRIFTED in run.stdout


def test_never_overwrites_a_declared_source(loaded: Loaded) -> None:
    config = loaded.root / ".dlt" / "config.toml"
    mine = (
        EXISTING
        + '\n[sources.shop.contract_ops]\nref = "pipelines.shop:shop" # mine\n'
        + 'pipeline_name = "my_own_pipeline"\n'
    )
    config.write_text(mine)
    first = loaded.ops("init")
    assert first.returncode == 0, first.stderr
    assert ("kept [sources.shop.contract_ops]: declared already (.dlt/config.toml), not "
            "overwritten") in first.stdout
    text = config.read_text()
    assert text.startswith(mine)
    declared = _declared(text)
    assert declared["shop"] == {"ref": "pipelines.shop:shop", "pipeline_name": "my_own_pipeline"}
    assert declared["events"] == EXPECTED["events"]

    again = loaded.ops("init")
    assert again.returncode == 0, again.stderr
    assert "Nothing to add" in again.stdout
    assert config.read_text() == text


def test_a_source_declared_in_the_environment_is_kept(loaded: Loaded) -> None:
    proc = loaded.ops("init", "--dry-run", SOURCES__SHOP__CONTRACT_OPS__REF="pipelines.shop:shop")
    assert proc.returncode == 0, proc.stderr
    assert set(_declared(proc.stdout)) == {"events", "ghost"}
    assert "kept [sources.shop.contract_ops]: declared already (the environment)" in proc.stderr


def test_refuses_a_file_it_cannot_extend(loaded: Loaded) -> None:
    # `sources` as an inline table: no `[sources.x.contract_ops]` table may follow it
    config = loaded.root / ".dlt" / "config.toml"
    inline = 'sources = { shop = { page_size = 100 } }\n'
    config.write_text(inline)
    proc = loaded.ops("init")
    assert proc.returncode == 2
    assert "would not parse" in proc.stderr
    assert "--dry-run" in proc.stderr
    assert config.read_text() == inline


@pytest.mark.parametrize(
    ("code", "call"),
    [
        ("import dlt\ndlt.pipeline('p').run([1])", "run"),
        ("import dlt\np = dlt.pipeline('p')\nwith p.sql_client():\n    p.extract([1])", "extract"),
        ("import asyncio\nasyncio.run(main())", "run"),  # conservative: any `.run(` call
        ("import dlt\nif __name__ == '__main__':\n    dlt.pipeline('p').run([1])", None),
        ("import dlt\ndef main():\n    dlt.pipeline('p').run([1])", None),
        ("import dlt\nclass Job:\n    def go(self):\n        self.p.run([1])", None),
        ("import dlt\nsource = dlt.source(lambda: [])", None),
    ],
)
def test_runs_on_import(code: str, call: str | None) -> None:
    from dlt_contract_ops.sources.scan import runs_on_import

    assert runs_on_import(code) == call


def test_two_resources_sharing_a_name_are_not_dropped_silently(tmp_path: Any) -> None:
    """Two standalone resources with one dlt `name` (two modules' `orders`): the first is
    declared, and the other is named with why it was not and what to do."""
    from dlt_contract_ops.sources.init import init_project
    from tests.projects import Project

    project = Project(tmp_path / "twins")
    code = '''
    import dlt
    from pydantic import BaseModel


    class Order(BaseModel):
        id: int


    @dlt.resource(name="orders", table_name="{table}", columns=Order)
    def orders():
        yield {{"id": 1}}
    '''
    project.module("pipelines.eu", code.format(table="eu_orders"))
    project.module("pipelines.us", code.format(table="us_orders"))
    project.config("[runtime]\ndlthub_telemetry = false\n")
    report = init_project(str(project.root), dry_run=True)
    assert [s.ref for s in report.sources] == ["pipelines.eu:orders"]
    [note] = [n for n in report.notes if "pipelines.us:orders" in n]
    assert "`pipelines.eu:orders`" in note
    assert "`orders`" in note
    assert "by hand" in note
