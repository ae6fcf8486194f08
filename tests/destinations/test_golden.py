"""Golden SQL for the destinations that cannot run here: BigQuery and Snowflake.

Each case renders through the adapter exactly as a reconcile would (`driver_sql` is the text
`run` hands the driver; `reproduce` the text a user pastes) and is compared byte for byte
with `golden/<dialect>/<case>.sql`. The files were reviewed by hand; after a deliberate
change, regenerate them with `make golden` (`python -m tests.regen_golden`) and review the
diff again. The test run itself never writes them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest
import sqlglot

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.destinations.base import SqlClientAdapter
from dlt_contract_ops.destinations.bigquery import BigQueryAdapter
from dlt_contract_ops.destinations.snowflake import SnowflakeAdapter
from dlt_contract_ops.destinations.sql import dialect_for
from dlt_contract_ops.detection.rows import nested_rows
from dlt_contract_ops.detectors.queries import (
    axis_bound,
    coverage_query,
    reproduce_coverage_query,
    reproduce_samples_query,
    sample_query,
    select_columns,
)

GOLDEN = Path(__file__).parent / "golden"
RECENT = datetime(2026, 7, 16, 12, 0, tzinfo=timezone.utc)
BASELINE = datetime(2026, 7, 9, 12, 0, tzinfo=timezone.utc)
TS = TimeAxis("loaded_at", "timestamp")
LOAD_ID = TimeAxis("_dlt_load_id", "load_id")
ODD = ['Weird "Name"', "ip-address", "größe", "userId", "back`tick\\slash"]


def bigquery() -> SqlClientAdapter:
    return BigQueryAdapter.offline("raw_events", catalog="acme-analytics-42")


def bigquery_partitioned() -> SqlClientAdapter:
    """After a metadata read in which `events` is partitioned on the DATE column `day`."""
    adapter = BigQueryAdapter.offline("raw_events", catalog="acme-analytics-42")
    adapter.read_metadata([
        ("events", "id", "INT64", "NO", "NO"),
        ("events", "actor_login", "STRING", "YES", "NO"),
        ("events", "day", "DATE", "YES", "YES"),
    ])
    return adapter


def snowflake() -> SqlClientAdapter:
    return SnowflakeAdapter.offline("raw_events")


def snowflake_read() -> SqlClientAdapter:
    """After a metadata read: dlt's columns folded upper, one made out of band as "userId"."""
    adapter = SnowflakeAdapter.offline("raw_events")
    adapter.read_metadata([
        ("EVENTS", "ID", "NUMBER", "NO"),
        ("EVENTS", "ACTOR_LOGIN", "TEXT", "YES"),
        ("EVENTS", "userId", "TEXT", "YES"),
        ("EVENTS", "_DLT_LOAD_ID", "TEXT", "NO"),
    ])
    return adapter


def _params(axis: TimeAxis) -> list[object]:
    return [axis_bound(RECENT, axis), axis_bound(BASELINE, axis)]


Case = Callable[[SqlClientAdapter], str]

CASES: dict[str, Case] = {
    "metadata": lambda a: a.driver_sql(a.metadata_query(), len(a.metadata_params()), "metadata"),
    "sample": lambda a: a.driver_sql(
        sample_query(a.table("events"), ["payload_size", "actor_login"], TS), 0, "sample"
    ),
    "sample_load_id": lambda a: a.driver_sql(
        sample_query(a.table("events"), ["payload_size"], LOAD_ID, tiebreak="_dlt_id"),
        0,
        "sample",
    ),
    # what the additive runner sends: bounded by the axis and by the newest rows
    "sample_bounded": lambda a: a.driver_sql(
        sample_query(a.table("events"), ["payload_size"], LOAD_ID, tiebreak="_dlt_id",
                     since=True, max_rows=10_000),
        1,
        "sample",
    ),
    "sample_odd_identifiers": lambda a: a.driver_sql(
        sample_query(a.table("OrderItems"), ODD, None), 0, "sample"
    ),
    # what a finding's `reproduce` shows of its samples: a plain SELECT of the sampled rows
    "reproduce_sample": lambda a: a.reproduce(
        reproduce_samples_query(a.table("events"), ["payload_size"], TS, "_dlt_id",
                                shown=["_dlt_load_id"]), []
    ),
    "reproduce_sample_load_id": lambda a: a.reproduce(
        reproduce_samples_query(a.table("events"), ["payload_size", "actor_login"], LOAD_ID,
                                "_dlt_id", since=True, shown=["_dlt_load_id"]),
        [axis_bound(BASELINE, LOAD_ID)],
    ),
    # a child table's rows, beside their root row's load
    "reproduce_sample_nested": lambda a: a.reproduce(
        reproduce_samples_query(
            nested_rows(a.table("events__tags"), a.table("events"), "_dlt_root_id",
                        ["_dlt_load_id"]),
            ["label"], LOAD_ID, "_dlt_id", since=True),
        [axis_bound(BASELINE, LOAD_ID)],
    ),
    "coverage": lambda a: a.driver_sql(
        coverage_query(a.table("events"), ["actor_login", "score"], TS), 2, "coverage"
    ),
    "coverage_load_id": lambda a: a.driver_sql(
        coverage_query(a.table("events"), ["actor_login"], LOAD_ID), 2, "coverage"
    ),
    "reproduce_coverage": lambda a: a.reproduce(
        reproduce_coverage_query(a.table("events"), ["actor_login"], TS), _params(TS)
    ),
    "reproduce_coverage_load_id": lambda a: a.reproduce(
        reproduce_coverage_query(a.table("events"), ["actor_login"], LOAD_ID), _params(LOAD_ID)
    ),
    "reproduce_missing": lambda a: a.reproduce(
        select_columns(a.table("events"), ["score"], 1), []
    ),
}

ADAPTERS: dict[str, tuple[Callable[[], SqlClientAdapter], tuple[str, ...]]] = {
    "bigquery": (bigquery, tuple(CASES)),
    "snowflake": (snowflake, tuple(CASES)),
    # what metadata changes: a DATE partition column compared with a CAST parameter ...
    "bigquery_partitioned": (bigquery_partitioned, ("coverage_partition",)),
    # ... and Snowflake names spelled exactly as the catalog reported them
    "snowflake_read": (snowflake_read, ("sample_read_names", "coverage_read_names")),
}

EXTRA: dict[str, Case] = {
    "coverage_partition": lambda a: a.driver_sql(
        coverage_query(a.table("events"), ["actor_login"], TimeAxis("day", "partition")),
        2,
        "coverage",
    ),
    "sample_read_names": lambda a: a.driver_sql(
        sample_query(a.table("events"), ["userId", "actor_login"], LOAD_ID), 0, "sample"
    ),
    "coverage_read_names": lambda a: a.driver_sql(
        coverage_query(a.table("events"), ["actor_login", "userId"], LOAD_ID), 2, "coverage"
    ),
}

PARAMS = [
    pytest.param(folder, case, id=f"{folder}/{case}")
    for folder, (_make, cases) in ADAPTERS.items()
    for case in cases
]


def _folder_dialect(folder: str) -> str:
    return folder.split("_")[0]


def rendered(folder: str, case: str) -> str:
    """The SQL golden file `golden/<folder>/<case>.sql` must hold."""
    make, _cases = ADAPTERS[folder]
    return {**CASES, **EXTRA}[case](make()) + "\n"


def golden_files() -> dict[Path, str]:
    """Every golden file and what it must hold (`python -m tests.regen_golden` writes them)."""
    return {GOLDEN / folder / f"{case}.sql": rendered(folder, case)
            for folder, (_make, cases) in ADAPTERS.items() for case in cases}


@pytest.mark.parametrize(("folder", "case"), PARAMS)
def test_sql_matches_golden_file(folder: str, case: str) -> None:
    sql = rendered(folder, case)
    path = GOLDEN / folder / f"{case}.sql"
    assert path.exists(), f"missing golden file {path}: run `make golden`, review it"
    assert sql == path.read_text(encoding="utf-8")


@pytest.mark.parametrize(("folder", "case"), PARAMS)
def test_golden_sql_parses_in_its_dialect(folder: str, case: str) -> None:
    """A golden file that sqlglot cannot read back in its own dialect is not valid SQL."""
    text = (GOLDEN / folder / f"{case}.sql").read_text(encoding="utf-8").strip()
    # the driver's %s placeholders are not SQL: read them as parameters
    parsed = sqlglot.parse_one(
        text.replace("%s", "?").replace("%%", "%"), read=dialect_for(_folder_dialect(folder))
    )
    assert parsed.find(sqlglot.exp.Table) is not None


def test_every_golden_file_has_a_case() -> None:
    expected = {f"{folder}/{case}.sql" for folder, (_m, cases) in ADAPTERS.items()
                for case in cases}
    present = {str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*.sql")}
    assert present == expected
