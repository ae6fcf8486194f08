"""The profile sweep (removal, distribution) on dlt's `filesystem` destination: real loads of
Parquet files into a local bucket, `reconcile` through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lakehouse import sweeps
from tests.projects import Project


@pytest.fixture(scope="module")
def iceberg_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("iceberg-home")


@pytest.fixture
def bucket(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The test's local bucket; an Iceberg test's is the module's one path (its loads are
    shared there: `sweeps.same_path_bucket`)."""
    params = getattr(request.node, "callspec", None)
    if params is not None and params.params.get("table_format") == "iceberg":
        return sweeps.same_path_bucket(request.getfixturevalue("iceberg_home"))
    return tmp_path / "bucket"


@pytest.fixture
def shop(project: Project, bucket: Path) -> Project:
    sweeps.setup(project, bucket)
    return project


def test_removal_and_distribution_on_parquet_files(shop: Project, tmp_path: Path) -> None:
    sweeps.steady(shop, tmp_path / "bucket", sweeps.STEADY)  # loaded, then backdated
    sweeps.load(shop, sweeps.DRIFTED)
    code, doc, stderr = sweeps.sweep(shop)
    assert code == 0, stderr
    found = sweeps.findings(doc)
    assert sorted(found) == [("distribution", "orders"), ("removal", "orders")]
    dark = found[("removal", "orders")]
    assert dark["columns"] == ["note"]
    assert dark["coverage"]["note"] == {"baseline": 0.9, "recent": 0.0}
    shifted = {(m["column"], m["metric"], m["category"]): m
               for m in found[("distribution", "orders")]["metrics"]}
    other = shifted["status", "category_share", "other"]
    assert (other["baseline"], other["current"]) == (0.0, 0.25)
    # the dark column's NULL rate is folded into its removal finding: one event, one finding
    assert ("note", "null_rate", None) not in shifted
    [null] = dark["metrics"]
    assert (null["column"], null["metric"], null["current"]) == ("note", "null_rate", 1.0)


def test_a_repeat_sweep_reads_only_the_new_loads_files(
    shop: Project, tmp_path: Path, stores: list[Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    bucket = tmp_path / "bucket"
    sweeps.steady(shop, bucket, sweeps.STEADY)  # loaded, then backdated
    first, read = sweeps.observed(shop)
    assert first == {}
    steady = sweeps.data_files(bucket)
    assert len(steady) == 6
    assert read == steady

    sweeps.load(shop, sweeps.DRIFTED)
    [new] = sorted(set(sweeps.data_files(bucket)) - set(steady))
    repeat, read = sweeps.observed(shop)
    assert read == [new]  # the drifted load's file, not the six before it
    assert sorted(repeat) == [("distribution", "orders"), ("removal", "orders")]

    sweeps.fresh(stores, monkeypatch)  # the same bucket, swept from scratch
    full, read = sweeps.observed(shop)
    assert read == sorted([*steady, new])
    assert repeat == full


@pytest.mark.parametrize("change", ["replace", "vanished"])
def test_a_rewritten_table_is_profiled_afresh(
    shop: Project, tmp_path: Path, stores: list[Path], monkeypatch: pytest.MonkeyPatch,
    change: str,
) -> None:
    bucket = tmp_path / "bucket"
    sweeps.steady(shop, bucket, sweeps.STEADY)  # loaded, then backdated
    sweeps.load(shop, {"batch": 6})
    sweeps.observed(shop)
    before = sweeps.data_files(bucket)
    if change == "replace":  # dlt deletes the table's files and writes the new load's
        sweeps.load(shop, {**sweeps.DRIFTED, "disposition": "replace"})
        assert not set(before) & set(sweeps.data_files(bucket))
    else:  # a file of an old load gone from the bucket, no load since
        Path(before[2]).unlink()
    repeat, read = sweeps.observed(shop)
    assert read == sweeps.data_files(bucket)  # the table read again, all of it

    sweeps.fresh(stores, monkeypatch)
    full, _ = sweeps.observed(shop)
    assert repeat == full


def test_a_merge_on_a_delta_table_is_profiled_afresh(
    shop: Project, tmp_path: Path, stores: list[Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Delta table is read whole through its current version (its files are not named by
    load); a merge that moves rows of earlier loads to the new one is still noticed."""
    delta = {"table_format": "delta", "disposition": "merge"}
    # the steady Delta loads the repeat-sweep tests share (appends, loaded, then backdated)
    sweeps.steady(shop, tmp_path / "bucket",
                  [{**b, "table_format": "delta"} for b in sweeps.STEADY])
    first, _ = sweeps.observed(shop)
    # half of the last steady batch again, drifted: upserted rows move to the new load
    sweeps.load(shop, {**sweeps.DRIFTED, **delta, "n": 50, "first": -1000})
    repeat, _ = sweeps.observed(shop)
    sweeps.fresh(stores, monkeypatch)
    full, _ = sweeps.observed(shop)
    assert repeat == full
    assert repeat != first


@pytest.mark.parametrize(("table_format", "change"), [
    ("delta", "append"), ("iceberg", "append"), ("delta", "replace"), ("iceberg", "replace"),
    ("delta", "merge"), ("delta", "optimize"),
])
def test_a_repeat_sweep_of_an_open_table_reads_only_the_new_loads_files(
    shop: Project, bucket: Path, stores: list[Path], monkeypatch: pytest.MonkeyPatch,
    table_format: str, change: str,
) -> None:
    """Delta and Iceberg tables: a repeat sweep after an append reads the files whose load id
    range (the table's own statistics) can hold the new load; after a replace or merge that
    moved rows of earlier loads, the whole current version. Findings equal a fresh sweep."""
    opened = {"table_format": table_format}
    if table_format == "iceberg":  # its metadata names absolute paths: shared at one path
        def build() -> None:  # loaded with backdated load ids
            sweeps.load(shop, *[{**b, **opened} for b in sweeps.STEADY], backdated=20)

        sweeps.shared(shop, bucket, sweeps.PIPELINE,
                      [sweeps.SOURCE, sweeps.STEADY, table_format, str(bucket), 20], build)
    else:  # loaded, then backdated
        sweeps.steady(shop, bucket, [{**b, **opened} for b in sweeps.STEADY])
    first, read = sweeps.observed(shop)
    assert first == {}
    steady = sweeps.open_files(bucket, table_format)
    assert len(steady) == 6  # one file per load
    assert read == steady

    sweeps.load(shop, {"batch": 6, "days_ago": 3, **opened})  # one more steady load
    [new] = sorted(set(sweeps.open_files(bucket, table_format)) - set(steady))
    again, read = sweeps.observed(shop)
    assert (again, read) == ({}, [new])  # its file alone, not the six before it

    drifted = {**sweeps.DRIFTED, "batch": 7, **opened}
    if change == "replace":
        drifted["disposition"] = "replace"
    elif change == "merge":  # half of a backdated load again, drifted: its rows move
        drifted.update(disposition="merge", n=50, first=-2000)
        # a load of 50 rows is judged once the noise floor is under it (default 100)
        shop.config("[contract_ops.distribution]\nmin_rows = 50\n")
    elif change == "optimize":  # every file compacted into one: no load's rows change
        from deltalake import DeltaTable

        DeltaTable(str(bucket / sweeps.DATASET / "orders")).optimize.compact()
        assert len(sweeps.open_files(bucket, table_format)) == 1
    sweeps.load(shop, drifted)
    current = sweeps.open_files(bucket, table_format)
    repeat, read = sweeps.observed(shop)
    if change == "append":  # its file, and the last one's: within removal's recent window
        assert read == sorted({*current} - {*steady})
        assert len(read) == 2
    elif change == "optimize":  # the compacted file holds the last load, then the new one
        assert len(read) == 2
        assert read == current
    else:  # rows of loads profiled earlier changed: the table is profiled afresh
        assert read == current
    # the drifted load against the steady ones (a replace leaves no baseline)
    assert (("distribution", "orders") in repeat) == (change != "replace")

    sweeps.fresh(stores, monkeypatch)  # the same bucket, swept from scratch
    full, _ = sweeps.observed(shop)
    assert repeat == full
