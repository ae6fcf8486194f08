"""Snapshot folders on a real file system: immutability, odd names, version listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_contract_ops.contracts.canonical import to_document
from dlt_contract_ops.contracts.model import Version
from dlt_contract_ops.contracts.store import (
    read_release,
    released_versions,
    resource_filename,
    write_release,
)
from dlt_contract_ops.errors import SnapshotError
from tests.contracts.builders import col, release, res

ODD = 'Bestellungen "EU" / Stück'
V1 = release("1.0.0", res(col("id"), resource="orders"),
             res(col("Menge €", "double", unit="EUR"), resource=ODD))


def test_written_release_reads_back(tmp_path: Path) -> None:
    files = write_release(tmp_path, V1)
    assert {f.status for f in files} == {"written"}
    folder = tmp_path / "erp" / "1.0.0"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [resource_filename("orders"), resource_filename(ODD)]
    )
    assert read_release(folder) == V1
    # a single file is a release of one resource
    single = read_release(folder / resource_filename(ODD))
    assert [r.resource for r in single.resources] == [ODD]


def test_snapshotting_unchanged_contracts_twice_is_byte_identical(tmp_path: Path) -> None:
    write_release(tmp_path, V1)
    before = {p: p.read_bytes() for p in (tmp_path / "erp" / "1.0.0").iterdir()}
    files = write_release(tmp_path, V1)
    assert {f.status for f in files} == {"unchanged"}
    assert {p: p.read_bytes() for p in before} == before


def test_a_released_version_is_immutable_unless_forced(tmp_path: Path) -> None:
    write_release(tmp_path, V1)
    changed = release("1.0.0", res(col("id", "text"), resource="orders"))
    with pytest.raises(SnapshotError) as err:
        write_release(tmp_path, changed)
    message = str(err.value)
    assert "Release 1.0.0 of `erp` is already snapshotted" in message
    assert f"{resource_filename('orders')}` differs" in message
    assert "has no resource any more" in message
    files = write_release(tmp_path, changed, force=True)
    assert sorted(f.status for f in files) == ["removed", "replaced"]
    assert read_release(tmp_path / "erp" / "1.0.0") == changed


def test_released_versions_sort_numerically_and_skip_other_entries(tmp_path: Path) -> None:
    for v in ("1.10.0", "1.2.0", "1.9.1"):
        write_release(tmp_path, release(v, res(col("id"))))
    (tmp_path / "erp" / "drafts").mkdir()
    (tmp_path / "erp" / "waivers.toml").write_text("")
    assert released_versions(tmp_path, "erp") == [
        Version(1, 2, 0), Version(1, 9, 1), Version(1, 10, 0),
    ]
    assert released_versions(tmp_path, "nope") == []


def _put(path: Path, version: str, resource: str, source: str = "erp") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_document(res(col("id"), resource=resource, source=source),
                                Version.parse(version)))


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "holds no snapshot"),
        ({"a.json": ("1.0.0", "a", "erp"), "b.json": ("1.0.1", "b", "erp")},
         "is version 1.0.1, the rest of"),
        ({"a.json": ("1.0.0", "a", "erp"), "b.json": ("1.0.0", "b", "crm")},
         "belongs to source `crm`"),
        ({"a.json": ("1.0.0", "a", "erp"), "b.json": ("1.0.0", "a", "erp")},
         "both hold resource `a`"),
    ],
    ids=["empty", "mixed-versions", "mixed-sources", "duplicate-resource"],
)
def test_inconsistent_release_folders_are_refused(
    tmp_path: Path, files: dict[str, tuple[str, str, str]], message: str
) -> None:
    folder = tmp_path / "1.0.0"
    folder.mkdir()
    for name, (version, resource, source) in files.items():
        _put(folder / name, version, resource, source)
    with pytest.raises(SnapshotError, match=message):
        read_release(folder)


def test_folder_named_as_another_version_is_refused(tmp_path: Path) -> None:
    _put(tmp_path / "2.0.0" / "a.json", "1.0.0", "a")
    with pytest.raises(SnapshotError, match=r"is named 2\.0\.0 but its snapshots say version 1"):
        read_release(tmp_path / "2.0.0")


def test_missing_path_is_named(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match=r"nope` does not exist"):
        read_release(tmp_path / "nope")


def test_case_insensitive_file_name_clash_is_refused(tmp_path: Path) -> None:
    clash = release("1.0.0", res(col("id"), resource="Orders"), res(col("id"), resource="orders"))
    with pytest.raises(SnapshotError, match="same snapshot file name"):
        write_release(tmp_path, clash)
