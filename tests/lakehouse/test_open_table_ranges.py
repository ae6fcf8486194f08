"""Which files of a Delta or Iceberg table can hold which loads (`lake_tables`): real tables
written by `deltalake` and `pyiceberg` into temp folders, and the cases where the table's
own statistics are not exact, so a query of some loads reads the whole current version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from dlt_contract_ops.destinations.lake_files import TableFiles
from dlt_contract_ops.destinations.lake_loads import range_files
from dlt_contract_ops.destinations.lake_tables import (
    _delta_ranges,
    _iceberg_ranges,
    _plain_files,
    _plain_iceberg,
)

IDS = ["1796000000.123456", "1796086400.5"]


def _rows(load_id: str) -> Any:
    return pa.table({"_dlt_load_id": pa.array([load_id] * 3),
                     "x": pa.array([1, 2, None], pa.int64())})


def _delta(path: Path, ids: list[str], **kwargs: Any) -> Any:
    from deltalake import DeltaTable, write_deltalake

    for load_id in ids:
        write_deltalake(str(path), _rows(load_id), mode="append", **kwargs)
    return DeltaTable(str(path))


def test_a_delta_tables_files_by_their_load_id_range(tmp_path: Path) -> None:
    delta = _delta(tmp_path / "t", IDS)
    uris = tuple(delta.file_uris())
    ranges = _delta_ranges(delta, uris)
    assert _plain_files(delta)
    assert ranges is not None
    assert sorted(ranges) == [(i, i) for i in IDS]
    table = TableFiles("t", "delta", uris, str(tmp_path / "t"), ranges)
    [newest] = range_files(table, [IDS[1]])
    assert dict(zip(uris, ranges, strict=True))[newest] == (IDS[1], IDS[1])
    assert range_files(table, ["1700000000.1"]) == ()


def test_a_delta_table_whose_statistics_are_not_exact_is_read_whole(tmp_path: Path) -> None:
    # a partition column lives in the log, not the files: not read as plain files
    assert not _plain_files(_delta(tmp_path / "p", IDS, partition_by=["x"]))
    # a bound of 32 characters or more may have been cut short by its writer
    long = _delta(tmp_path / "l", [IDS[0] + "0" * 20])
    assert _delta_ranges(long, tuple(long.file_uris())) is None


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    made = SqlCatalog("default", uri=f"sqlite:///{tmp_path / 'catalog.db'}",
                      warehouse=(tmp_path / "warehouse").as_uri())
    made.create_namespace("lake")
    return made


def test_an_iceberg_tables_files_by_their_manifest_bounds(catalog: Any) -> None:
    table = catalog.create_table("lake.t", schema=_rows(IDS[0]).schema)
    for load_id in IDS:
        table.append(_rows(load_id))
    tasks = list(table.scan().plan_files())
    ranges = _iceberg_ranges(table, tasks)
    assert _plain_iceberg(table, tasks)
    assert ranges is not None
    paths = tuple(t.file.file_path for t in tasks)
    files = TableFiles("t", "iceberg", paths, "", ranges)
    # bounds truncated to 16 characters still hold the ids: each load finds its file alone
    picked = [range_files(files, [i]) for i in IDS]
    assert sorted(len(p) for p in picked) == [1, 1]
    assert picked[0] != picked[1]


def test_an_iceberg_table_with_a_renamed_column_is_read_whole(catalog: Any) -> None:
    table = catalog.create_table("lake.r", schema=_rows(IDS[0]).schema)
    table.append(_rows(IDS[0]))
    with table.update_schema() as update:
        update.rename_column("x", "y")
    table = catalog.load_table("lake.r")
    # the file's `x` is the table's `y`: read by name, it would be another column
    assert not _plain_iceberg(table, list(table.scan().plan_files()))
