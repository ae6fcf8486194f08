"""Samples: up to five recent non-NULL values per drifted column, from one query per table."""

from __future__ import annotations

import duckdb
import pytest

from dlt_contract_ops import reconcile_source
from tests.projects import Project

SOURCE = """
from datetime import datetime, timedelta, timezone

import dlt
from pydantic import BaseModel


class Reading(BaseModel):
    id: int


T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


@dlt.resource(columns=Reading, schema_contract={"columns": "evolve"})
def readings():
    for i in range(60):
        yield {"id": i, "loaded_at": T0 + timedelta(minutes=i)}


@dlt.source(name="meter")
def meter():
    return readings
"""


@pytest.fixture
def meter(project: Project) -> Project:
    project.module("pipes.meter", SOURCE)
    project.config('[contract_ops]\nload_timestamp_column = "loaded_at"\n')
    project.source("meter", "pipes.meter:meter", pipeline_name="meter_pipe",
                   dataset_name="meter_data")
    project.python(
        """
        import dlt
        from pipes.meter import meter
        dlt.pipeline("meter_pipe", destination="duckdb", dataset_name="meter_data").run(meter())
        """
    )
    return project


def _drift(project: Project, *statements: str) -> None:
    with duckdb.connect(str(project.root / "meter_pipe.duckdb")) as con:
        for sql in statements:
            con.execute(sql)


def test_samples_are_the_newest_non_null_values(meter: Project) -> None:
    _drift(
        meter,
        "ALTER TABLE meter_data.readings ADD COLUMN volts DOUBLE",
        "UPDATE meter_data.readings SET volts = id / 2 WHERE id % 7 = 0",
    )
    result = reconcile_source("meter", dry_run=True, project_dir=meter.root)
    (finding,) = result.findings
    newest = sorted((i for i in range(60) if i % 7 == 0), reverse=True)[:5]
    assert finding.samples == {"volts": [i / 2 for i in newest]}
    assert finding.first_seen == "2026-11-01T00:00:00+00:00"


def test_a_sparse_column_still_gets_its_samples(meter: Project) -> None:
    _drift(
        meter,
        "ALTER TABLE meter_data.readings ADD COLUMN busy VARCHAR",
        "UPDATE meter_data.readings SET busy = 'b' || id",
        "ALTER TABLE meter_data.readings ADD COLUMN rare VARCHAR",
        "UPDATE meter_data.readings SET rare = 'first' WHERE id = 0",
    )
    result = reconcile_source("meter", dry_run=True, project_dir=meter.root)
    (finding,) = result.findings
    assert finding.columns == ["busy", "rare"]
    assert finding.samples["busy"] == ["b59", "b58", "b57", "b56", "b55"]
    assert finding.samples["rare"] == ["first"]


def test_rows_of_one_load_rank_the_same_way_and_values_never_leak(
    meter: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # without the load timestamp, every row sits on one `_dlt_load_id`: all rows tie on the
    # axis and only `_dlt_id` orders them
    (meter.root / ".dlt" / "config.toml").write_text(
        (meter.root / ".dlt" / "config.toml").read_text().replace(
            'load_timestamp_column = "loaded_at"', "injected_columns = [\"loaded_at\"]"
        )
    )
    _drift(
        meter,
        "ALTER TABLE meter_data.readings ADD COLUMN busy VARCHAR",
        "UPDATE meter_data.readings SET busy = 'b' || id",
        "ALTER TABLE meter_data.readings ADD COLUMN rare VARCHAR",
        "UPDATE meter_data.readings SET rare = 'r' || id WHERE id % 20 = 0",
    )
    with duckdb.connect(str(meter.root / "meter_pipe.duckdb")) as con:
        by_id = [r[0] for r in con.execute(
            "SELECT busy FROM meter_data.readings ORDER BY _dlt_id LIMIT 5"
        ).fetchall()]
    first = reconcile_source("meter", dry_run=True, project_dir=meter.root)
    (finding,) = first.findings
    assert finding.columns == ["busy", "rare"]
    assert sorted(finding.samples["busy"]) == sorted(by_id)
    assert sorted(finding.samples["rare"]) == ["r0", "r20", "r40"]
    # the reproduce returns the sampled rows, newest first: the busy column's samples, and
    # the newest of the sparse column's (those on the same five rows), run after run
    with duckdb.connect(str(meter.root / "meter_pipe.duckdb"), read_only=True) as con:
        rows = con.execute(finding.reproduce).fetchall()
    assert [r[0] for r in rows] == finding.samples["busy"]
    rare = [r[1] for r in rows if r[1] is not None]
    assert rare == finding.samples["rare"][:len(rare)]
    again = reconcile_source("meter", dry_run=True, project_dir=meter.root)
    assert again.findings[0].samples == finding.samples
