"""The profile sweep (removal, distribution) on dlt's `filesystem` destination: real loads of
Parquet files into a local bucket, `reconcile` through the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.engine.sweep_stats import observe_sweeps
from tests.lakehouse import sweeps
from tests.projects import Project


@pytest.fixture
def shop(project: Project, tmp_path: Path) -> Project:
    sweeps.setup(project, tmp_path / "bucket")
    return project


def test_removal_and_distribution_on_parquet_files(shop: Project) -> None:
    sweeps.load(shop, *sweeps.STEADY, sweeps.DRIFTED)
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
    assert shifted["note", "null_rate", None]["current"] == 1.0


@pytest.fixture
def stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The profile store the sweeps use; `fresh()` points at a new, empty one."""
    used = [tmp_path / "profiles-0.duckdb"]
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(used[0]))
    return used


def _fresh(stores: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    stores.append(stores[0].with_name(f"profiles-{len(stores)}.duckdb"))
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(stores[-1]))


def _observed(project: Project) -> tuple[dict[tuple[str, str], dict[str, Any]], list[str]]:
    """One sweep: its findings, and the `orders` files its queries scanned."""
    with observe_sweeps() as seen:
        code, doc, stderr = sweeps.sweep(project)
    assert code == 0, stderr
    read = sorted({f for s in seen for f in s.files_read if "/orders/" in f})
    return sweeps.findings(doc), read


def test_a_repeat_sweep_reads_only_the_new_loads_files(
    shop: Project, tmp_path: Path, stores: list[Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    bucket = tmp_path / "bucket"
    sweeps.load(shop, *sweeps.STEADY)
    sweeps.backdate(bucket)
    first, read = _observed(shop)
    assert first == {}
    steady = sweeps.data_files(bucket)
    assert len(steady) == 6
    assert read == steady

    sweeps.load(shop, sweeps.DRIFTED)
    [new] = sorted(set(sweeps.data_files(bucket)) - set(steady))
    repeat, read = _observed(shop)
    assert read == [new]  # the drifted load's file, not the six before it
    assert sorted(repeat) == [("distribution", "orders"), ("removal", "orders")]

    _fresh(stores, monkeypatch)  # the same bucket, swept from scratch
    full, read = _observed(shop)
    assert read == sorted([*steady, new])
    assert repeat == full


@pytest.mark.parametrize("change", ["replace", "vanished"])
def test_a_rewritten_table_is_profiled_afresh(
    shop: Project, tmp_path: Path, stores: list[Path], monkeypatch: pytest.MonkeyPatch,
    change: str,
) -> None:
    bucket = tmp_path / "bucket"
    sweeps.load(shop, *sweeps.STEADY, {"batch": 6})
    sweeps.backdate(bucket)
    _observed(shop)
    before = sweeps.data_files(bucket)
    if change == "replace":  # dlt deletes the table's files and writes the new load's
        sweeps.load(shop, {**sweeps.DRIFTED, "disposition": "replace"})
        assert not set(before) & set(sweeps.data_files(bucket))
    else:  # a file of an old load gone from the bucket, no load since
        Path(before[2]).unlink()
    repeat, read = _observed(shop)
    assert read == sweeps.data_files(bucket)  # the table read again, all of it

    _fresh(stores, monkeypatch)
    full, _ = _observed(shop)
    assert repeat == full


def test_a_merge_on_a_delta_table_is_profiled_afresh(
    shop: Project, stores: list[Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Delta table is read whole through its current version (its files are not named by
    load); a merge that moves rows of earlier loads to the new one is still noticed."""
    delta = {"table_format": "delta", "disposition": "merge"}
    sweeps.load(shop, *[{**b, **delta} for b in sweeps.STEADY])
    first, _ = _observed(shop)
    # half of the last steady batch again, drifted: upserted rows move to the new load
    sweeps.load(shop, {**sweeps.DRIFTED, **delta, "n": 50, "first": -1000})
    repeat, _ = _observed(shop)
    _fresh(stores, monkeypatch)
    full, _ = _observed(shop)
    assert repeat == full
    assert repeat != first
