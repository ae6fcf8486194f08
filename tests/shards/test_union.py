"""N shards find what one sweep finds: real dlt loads into DuckDB (`tests/shards/warehouse.py`),
swept whole and in N shards (N = 1, 3, 7) in process, through `run(shard=...)`.

The union of the N shards' findings (by finding id) is the unsharded sweep's, no finding is
made twice, a rename stays one finding, a child table's drift is found by its root table's
shard, a source that cannot be built is an error in every shard and an alert of one, and a
shard with none of a source's tables sends that source no query.
"""

from __future__ import annotations

from collections import Counter

import pytest

from dlt_contract_ops.core.shard import Shard, shard_of
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.engine.sweep_stats import observe_sweeps
from dlt_contract_ops.model.findings import ReconcileResult
from dlt_contract_ops.sinks.memory import MemorySink
from tests.projects import Project
from tests.shards.warehouse import CHILD, DETECTORS, TABLES


def _sweep(project: Project, shard: str | None = None,
           sink: MemorySink | None = None) -> list[ReconcileResult]:
    return run(None, detectors=DETECTORS, project_dir=project.root, shard=shard,
               alert_sinks=[sink] if sink is not None else (), dedup=False)


def _root(source: str, table: str) -> str:
    return CHILD[2] if (source, table) == CHILD[:2] else table


@pytest.mark.parametrize("count", [1, 3, 7])
def test_the_shards_find_what_one_sweep_finds(wh: Project, count: int) -> None:
    whole = {f.id: f for r in _sweep(wh) for f in r.findings}
    # the warehouse's drift, all of it: a guard that the comparison below is not vacuous
    assert sorted((f.source, f.table, f.drift_type) for f in whole.values()) == sorted([
        ("shop", "orders", "rename"), ("shop", "customers", "additive"),
        ("shop", "refunds", "additive"), ("shop", "stores", "additive"),
        ("app", "users__labels", "additive"), ("app", "events", "additive"),
        ("app", "devices", "additive")])
    made: Counter[str] = Counter()
    for i in range(1, count + 1):
        found = [f for r in _sweep(wh, f"{i}/{count}") for f in r.findings]
        made.update(f.id for f in found)
        for f in found:  # each shard finds drift of its own tables only
            assert shard_of(f.source, _root(f.source, f.table), count) == i, f
            assert f.model_dump() == whole[f.id].model_dump()  # the same finding, whole
    assert set(made) == set(whole)
    assert set(made.values()) == {1}  # never made twice


def test_a_rename_and_a_child_table_stay_with_their_table(wh: Project) -> None:
    for count in (3, 7):
        for i in range(1, count + 1):
            results = _sweep(wh, f"{i}/{count}")
            tables = {f.table for r in results for f in r.findings}
            renames = [f for r in results for f in r.findings if f.drift_type == "rename"]
            if Shard(i, count).owns("shop", "orders"):
                [rename] = renames
                assert (rename.renamed_from, rename.renamed_to) == ("order_date", "sale_date")
            else:
                assert renames == []
                assert "orders" not in tables  # nor its parts, as a removal or an addition
            owns_users = Shard(i, count).owns("app", "users")
            assert ("users__labels" in tables) == owns_users


@pytest.mark.parametrize("count", [1, 3, 7])
def test_a_source_that_cannot_be_built_is_an_error_everywhere_and_one_alert(
    wh: Project, count: int
) -> None:
    sink = MemorySink()
    owner = shard_of("broken", None, count)
    for i in range(1, count + 1):
        [error] = [r for r in _sweep(wh, f"{i}/{count}", sink) if r.source == "broken"]
        assert error.error is not None
        assert "no_such_source" in error.error
        if i != owner and count > 1:
            assert f"shard {owner}/{count} sends the alert" in error.error
    assert [e.source for e in sink.errors] == ["broken"]
    assert "no_such_source" in sink.errors[0].message
    assert "shard" not in sink.errors[0].message  # the alert says what broke, as unsharded


def test_a_shard_with_nothing_of_a_source_sends_it_no_query(wh: Project) -> None:
    count = 7
    empty = [i for i in range(1, count + 1)
             if not any(shard_of(s, t, count) == i for s, ts in TABLES.items() for t in ts)
             and not any(shard_of(s, None, count) == i for s in TABLES)]
    assert empty  # the warehouse has a shard of 7 with nothing in it
    with observe_sweeps() as seen:
        results = _sweep(wh, f"{empty[0]}/{count}")
    [stats] = seen
    assert sum(stats.queries.values()) == 0
    assert {r.source for r in results} == {"broken"}  # its error, shown by every shard


GONE = """
[sources.gone.contract_ops]
ref = "wh_sources:shop"
pipeline_name = "shop_pipe"
destination = "duckdb"
dataset_name = "gone_data"
"""


@pytest.mark.parametrize("count", [3, 7])
def test_a_missing_dataset_is_one_alert_even_from_a_shard_without_its_tables(
    wh: Project, count: int
) -> None:
    """`gone` declares a dataset nothing loaded: each shard with tables of it cannot check
    them (an error), and the shard of its name lists the dataset even with none of its
    tables, so the one alert never depends on where the tables fell."""
    wh.config((wh.root / ".dlt" / "config.toml").read_text() + GONE)
    sink = MemorySink()
    owner = shard_of("gone", None, count)
    errors = {}
    for i in range(1, count + 1):
        for r in _sweep(wh, f"{i}/{count}", sink):
            if r.source == "gone":
                errors[i] = r.error
    with_tables = {shard_of("gone", t, count) for t in TABLES["shop"]}
    assert set(errors) == with_tables | {owner}
    assert all(e is not None and "Dataset `gone_data`" in e and "has no tables" in e
               for e in errors.values())
    assert [e.source for e in sink.errors if e.source == "gone"] == ["gone"]
