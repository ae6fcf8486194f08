"""Adapter tiers: the built-ins register through entry points; a destination dlt supports but
no adapter covers is "core tier" and refused with a message that says what to do, while the
other sources of an `--all` sweep still run."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlglot.dialects.dialect import Dialect

from dlt_contract_ops.destinations.base import DestinationAdapter, SqlClientAdapter
from dlt_contract_ops.destinations.connect import adapter_class
from dlt_contract_ops.errors import UnsupportedDestinationError
from dlt_contract_ops.registry import DESTINATION_GROUP, registered
from tests.destinations import scenario
from tests.destinations.servers import make, unique
from tests.projects import Project

BUILTINS = {
    "duckdb": ("DuckDBAdapter", "duckdb"),
    "postgres": ("PostgresAdapter", "postgres"),
    "sqlalchemy": ("SqlalchemyAdapter", "sqlite"),  # dispatches per backend when it opens
    "bigquery": ("BigQueryAdapter", "bigquery"),
    "snowflake": ("SnowflakeAdapter", "snowflake"),
    "filesystem": ("FilesystemAdapter", "duckdb"),
}

#: destinations dlt loads that no built-in adapter covers
CORE_TIER = ["clickhouse", "mssql", "redshift", "athena", "databricks", "motherduck"]


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_builtin_adapters_are_registered_and_declare_themselves(name: str) -> None:
    cls = adapter_class(name)
    class_name, dialect = BUILTINS[name]
    assert cls.__name__ == class_name
    assert issubclass(cls, SqlClientAdapter)
    assert (cls.name, cls.capabilities.dialect) == (name, dialect)
    Dialect.get_or_raise(cls.capabilities.dialect)  # a dialect sqlglot knows
    # constructible without a driver or a network: it renders, and satisfies the protocol
    offline = cls.offline("raw")
    assert isinstance(offline, DestinationAdapter)
    assert offline.table("events").name


def test_registry_holds_the_builtins() -> None:
    assert set(BUILTINS) <= set(registered(DESTINATION_GROUP))


@pytest.mark.parametrize("name", CORE_TIER)
def test_core_tier_destination_is_refused_with_what_to_do(name: str) -> None:
    from dlt.common.destination import Destination

    assert Destination.from_reference(name) is not None  # dlt does support it
    with pytest.raises(UnsupportedDestinationError) as info:
        adapter_class(name)
    message = str(info.value)
    assert f"`{name}` is core tier" in message
    assert DESTINATION_GROUP in message
    assert "docs/destinations.md" in message


def test_a_near_miss_gets_a_suggestion() -> None:
    with pytest.raises(UnsupportedDestinationError, match="Did you mean `postgres`"):
        adapter_class("postgress")


def test_all_sweep_refuses_core_tier_and_still_runs_the_others(
    project: Project, tmp_path: Path
) -> None:
    duck = make("duckdb", tmp_path)
    dataset = unique("co_tier")
    scenario.setup(project, duck, dataset, source="local")
    project.source("warehouse", "telemetry_src:telemetry", pipeline_name="wh_pipe",
                   destination="clickhouse", dataset_name="analytics")
    scenario.make_history_and_drift(project, duck, dataset)

    code, doc, stderr = scenario.reconcile_json(project, "--all", "--dry-run")

    assert code == 1, stderr
    refused = [r for r in doc["results"] if r["source"] == "warehouse"]
    assert len(refused) == 1
    assert "`clickhouse` is core tier" in refused[0]["error"]
    assert DESTINATION_GROUP in refused[0]["error"]
    local = scenario.by_kind(doc, "local")
    assert local[("additive", "events")]["columns"] == ["payload_size"]
    assert all(r["error"] is None for r in doc["results"] if r["source"] == "local")

    text = project.cli("reconcile", "--all", "--dry-run")
    assert text.returncode == 1
    assert "clickhouse" in text.stdout + text.stderr
    assert "payload_size" in text.stdout
