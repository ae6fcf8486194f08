"""`init` on a source loaded by two pipelines, into DuckDB and PostgreSQL: one table per
pipeline, and `reconcile --all` (and `-s <source>`) sweeps both destinations."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import require_server
from tests.profiles.test_distribution_postgres import _drop
from tests.profiles.test_removal_from_profiles_postgres import DSN, PG_HOST, PG_PORT
from tests.projects import Project

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SOURCE = """\
import dlt
from pydantic import BaseModel


class Order(BaseModel):
    id: int
    amount: float


@dlt.source
def shop():
    @dlt.resource(columns=Order, primary_key="id")
    def orders():
        yield [{"id": 1, "amount": 2.5}, {"id": 2, "amount": 3.0}]

    return orders
"""


@pytest.fixture
def pg_dataset() -> Iterator[str]:
    require_server(PG_HOST, PG_PORT, "PostgreSQL")
    dataset = f"co_init_{uuid.uuid4().hex[:10]}"
    try:
        yield dataset
    finally:
        _drop(dataset)


def _load_both(project: Project, pg_dataset: str) -> None:
    project.module("shop_source", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.secrets(f'[destination.postgres]\ncredentials = "{DSN}"\n')
    project.python(
        f"""
        import dlt
        from shop_source import shop
        dlt.pipeline("shop_duck", destination="duckdb", dataset_name="shop_data").run(shop())
        dlt.pipeline("shop_pg", destination="postgres", dataset_name={pg_dataset!r}).run(shop())
        """
    )


def _plant_coupon(project: Project, pg_dataset: str) -> None:
    """An engineer's column in each destination, outside the model."""
    import duckdb
    import psycopg2

    with duckdb.connect(str(project.root / "shop_duck.duckdb")) as con:
        con.execute("ALTER TABLE shop_data.orders ADD COLUMN coupon TEXT DEFAULT 'C1'")
    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        cur.execute(f'ALTER TABLE "{pg_dataset}".orders ADD COLUMN coupon TEXT DEFAULT \'C1\'')


def _additive(doc: dict[str, Any]) -> dict[str, list[list[str]]]:
    """source -> the columns of each of its additive findings (the results are one per source
    and detector)."""
    out: dict[str, list[list[str]]] = {}
    for result in doc["results"]:
        assert result["error"] is None, result
        out.setdefault(result["source"], []).extend(
            f["columns"] for f in result["findings"] if f["drift_type"] == "additive")
    return out


@pytest.mark.postgres
def test_init_declares_each_pipeline_and_reconcile_sweeps_each(
    project: Project, pg_dataset: str
) -> None:
    _load_both(project, pg_dataset)

    proc = project.cli("init")
    assert proc.returncode == 0, proc.stderr
    assert "another pipeline of source `shop`" in proc.stdout
    declared = {name: table["contract_ops"] for name, table in tomllib.loads(
        (project.root / ".dlt" / "config.toml").read_text())["sources"].items()}
    # the first pipeline (by name) keeps the source's name; the other one has its own table
    assert declared == {
        "shop": {"ref": "shop_source:shop", "pipeline_name": "shop_duck",
                 "destination": "duckdb", "dataset_name": "shop_data"},
        "shop_pg": {"ref": "shop_source:shop", "source_name": "shop",
                    "pipeline_name": "shop_pg", "destination": "postgres",
                    "dataset_name": pg_dataset},
    }

    config = (project.root / ".dlt" / "config.toml").read_text()
    again = project.cli("init")
    assert "Nothing to add" in again.stdout, again.stdout
    assert (project.root / ".dlt" / "config.toml").read_text() == config

    clean = project.cli("reconcile", "--all", "--dry-run", "--format", "json")
    assert clean.returncode == 0, clean.stderr
    assert _additive(json.loads(clean.stdout)) == {"shop": [], "shop_pg": []}

    _plant_coupon(project, pg_dataset)
    for selection in (["--all"], ["-s", "shop"]):
        run = project.cli("reconcile", *selection, "--dry-run", "--format", "json")
        assert run.returncode == 0, run.stderr
        assert _additive(json.loads(run.stdout)) == {"shop": [["coupon"]],
                                                     "shop_pg": [["coupon"]]}

    # one table by its own name selects only that pipeline
    one = project.cli("reconcile", "-s", "shop_pg", "--dry-run", "--format", "json")
    assert _additive(json.loads(one.stdout)) == {"shop_pg": [["coupon"]]}


def test_a_source_name_selects_its_tables(project: Project) -> None:
    """`-s NAME`: the table NAME and every table whose `source_name` is NAME, also when NAME
    has no table of its own (declared by hand); a name selecting nothing stays, for its
    unknown-source error."""
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.sources.onboarding import selected_sources

    project.source("shop", "m:shop", pipeline_name="a")
    project.source("shop_b", "m:shop", pipeline_name="b", source_name="shop")
    project.source("crm_x", "m:crm", pipeline_name="x", source_name="crm")
    project.source("crm_y", "m:crm", pipeline_name="y", source_name="crm")
    with project_context(str(project.root)):
        assert selected_sources(["shop"]) == ["shop", "shop_b"]
        assert selected_sources(["shop_b"]) == ["shop_b"]
        assert selected_sources(["crm", "shop_b", "shop"]) == ["crm_x", "crm_y", "shop_b",
                                                               "shop"]
        assert selected_sources(["nope"]) == ["nope"]


def test_a_command_on_one_table_takes_the_name_or_its_only_table(project: Project) -> None:
    """`selected_sources(one=True)` (`gate check`, `profile`, `contract snapshot`, ...): the
    table NAME when declared, else the one table whose `source_name` is NAME; a name of
    several tables is a ConfigError naming them."""
    from dlt_contract_ops.errors import ConfigError
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.sources.onboarding import selected_sources

    project.source("shop", "m:shop", pipeline_name="a")
    project.source("shop_b", "m:shop", pipeline_name="b", source_name="shop")
    project.source("crm_x", "m:crm", pipeline_name="x", source_name="crm")
    project.source("crm_y", "m:crm", pipeline_name="y", source_name="crm")
    project.source("erp_x", "m:erp", pipeline_name="e", source_name="erp")
    with project_context(str(project.root)):
        assert selected_sources(["shop"], one=True) == ["shop"]
        assert selected_sources(["shop_b"], one=True) == ["shop_b"]
        assert selected_sources(["erp"], one=True) == ["erp_x"]
        assert selected_sources(["nope"], one=True) == ["nope"]
        with pytest.raises(ConfigError) as err:
            selected_sources(["crm"], one=True)
    assert str(err.value) == (
        "`-s crm` selects the 2 declared tables of source `crm` (one per pipeline: crm_x, "
        "crm_y), and this command takes one: name one (`-s crm_x`), or run the command once "
        "for each.")
