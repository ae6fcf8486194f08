"""A reconcile asks a source's destination for its capabilities once: the adapter's dlt
client computes them, and the source is named for that destination (identifier lengths)
with the same ones, not with a second computation. Seen through a destination written as
destination authors write one: dlt's DuckDB factory subclassed, its capabilities counted."""

from __future__ import annotations

import json

from tests.integration.shop import DATASET, PIPELINE
from tests.projects import Project

COUNTED = '''
"""dlt's DuckDB destination, each computation of its capabilities written to a log."""

from pathlib import Path

import dlt

_LOG = Path(__file__).resolve().parent / "capabilities.log"


class duckdb(dlt.destinations.duckdb):  # noqa: N801 (dlt's own factories are lowercase)
    def _raw_capabilities(self):
        with _LOG.open("a") as f:
            f.write("capabilities\\n")
        return super()._raw_capabilities()
'''


def test_a_source_asks_its_destination_for_capabilities_once(shop_project: Project) -> None:
    shop_project.module("counted_destination", COUNTED)
    shop_project.source("counted", "pipelines.shop:shop", pipeline_name=PIPELINE,
                        destination="counted_destination.duckdb", dataset_name=DATASET)

    proc = shop_project.cli("reconcile", "-s", "counted", "--dry-run", "--format", "json")

    assert proc.returncode in (0, 1), proc.stderr
    [result] = [r for r in json.loads(proc.stdout)["results"] if r["detector"] == "additive"]
    assert result["findings"], result  # the sweep read the drifted tables through it
    log = shop_project.root / "capabilities.log"
    assert log.read_text().splitlines() == ["capabilities"]
