"""What a run sends: one metadata query per dataset, one sample query per drifted table, and
one build of each source. Counted as each sweep counts what it sent (`observe_sweeps`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import duckdb
import pytest

from dlt_contract_ops.detectors.registry import selected
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.engine.sweep_stats import SweepStats, observe_sweeps
from tests.integration import shop
from tests.projects import Project

#: what every reconcile runs
DETECTORS = selected()

ALL_SHOP = ["shop", "shop_extra", "shop_clean"]


@pytest.fixture
def sent() -> Iterator[list[SweepStats]]:
    """The stats of this test's sweeps: queries per kind, as each sweep counts what it sent
    (the counters `make bench` and the query budget read, `observe_sweeps`)."""
    with observe_sweeps() as seen:
        yield seen


def kinds(seen: list[SweepStats]) -> Counter[str]:
    """The queries every sweep so far sent, by kind."""
    return sum((s.queries for s in seen), Counter())


def test_one_metadata_query_and_one_sample_query_per_drifted_table(
    shop_project: Project, sent: list[SweepStats]
) -> None:
    results = run(ALL_SHOP, detectors=("additive",), dry_run=True, project_dir=shop_project.root)
    assert all(r.error is None for r in results)
    drifted = {f.table for r in results for f in r.findings}
    assert drifted == {"order_items", "plain_tbl", "refunds"}
    # three sources, one dataset: one metadata query covers every table of all three; a
    # modelled table absent from the dataset that no local state knows costs one read of the
    # schema dlt stored there (`_dlt_version`), to tell dropped from never loaded
    assert kinds(sent) == {"metadata": 1, "schema": 1, "sample": len(drifted)}
    # each sample query is the one its finding shows to run again, on its own table; clean
    # tables (`clean`, read by two sources) get none
    shown = [f for r in results for f in r.findings]
    assert sorted(f.table for f in shown) == sorted(drifted)
    assert all(f.reproduce and f'"{f.table}"' in f.reproduce for f in shown)


def test_every_default_detector_shares_the_metadata_query(
    shop_project: Project, sent: list[SweepStats]
) -> None:
    results = run(ALL_SHOP, detectors=DETECTORS, dry_run=True, project_dir=shop_project.root)
    assert {r.detector for r in results} == set(DETECTORS)
    assert all(r.error is None for r in results)
    assert kinds(sent)["metadata"] == 1


def test_each_source_is_built_once_per_run(shop_project: Project) -> None:
    results = run(ALL_SHOP, detectors=DETECTORS, dry_run=True, project_dir=shop_project.root)
    assert len(results) == len(ALL_SHOP) * len(DETECTORS)
    assert sorted(shop.calls(shop_project.root)) == [
        "call shop",
        "call shop_clean",
        "call shop_extra",
        "import pipelines.shop",
        "import pipelines.shop_extra",
    ]


TWO_FILES_SOURCE = """
import dlt
from pydantic import BaseModel


class A(BaseModel):
    id: int


class B(BaseModel):
    id: int


@dlt.source(name="first")
def first():
    return dlt.resource([{"id": 1}], name="alpha", columns=A)


@dlt.source(name="second")
def second():
    return dlt.resource([{"id": 2}], name="beta", columns=B)
"""


def test_same_dataset_name_in_two_files_is_two_datasets(
    project: Project, sent: list[SweepStats]
) -> None:
    """Two DuckDB files that both hold a dataset `raw`: each source must see its own."""
    project.module("pipes.two", TWO_FILES_SOURCE)
    for name in ("first", "second"):
        project.source(name, f"pipes.two:{name}", pipeline_name=f"{name}_pipe", dataset_name="raw")
    project.python(
        """
        import dlt
        from pipes.two import first, second
        dlt.pipeline("first_pipe", destination="duckdb", dataset_name="raw").run(first())
        dlt.pipeline("second_pipe", destination="duckdb", dataset_name="raw").run(second())
        """
    )
    for name, table in (("first", "alpha"), ("second", "beta")):
        with duckdb.connect(str(project.root / f"{name}_pipe.duckdb")) as con:
            con.execute(f"ALTER TABLE raw.{table} ADD COLUMN {name}_extra INT")
            con.execute(f"UPDATE raw.{table} SET {name}_extra = 7")

    results = run(["first", "second"], detectors=("additive",), dry_run=True,
                  project_dir=project.root)
    found = {r.source: [(f.table, f.columns) for f in r.findings] for r in results}
    assert found == {
        "first": [("alpha", ["first_extra"])],
        "second": [("beta", ["second_extra"])],
    }
    assert kinds(sent)["metadata"] == 2


def test_a_source_named_twice_is_built_and_reported_once(shop_project: Project) -> None:
    results = run(["shop", "shop"], detectors=("additive",), dry_run=True,
                  project_dir=shop_project.root)
    assert [r.source for r in results] == ["shop"]
    assert shop.calls(shop_project.root).count("call shop") == 1
