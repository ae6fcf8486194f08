"""`sweep_reads`' bounds, over a real fsspec filesystem (the local one): a file is copied on
its first open when it is small enough and the sweep's total allows; any other file is read
from the bucket each time; after `release` the copies are gone and opens still read."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from fsspec.implementations.local import LocalFileSystem

from dlt_contract_ops.destinations.lake_reads import release, sweep_reads


def _copies(reads: object) -> int:
    return len(os.listdir(reads.storage[-1]))  # type: ignore[attr-defined]  # fsspec's


def test_small_files_are_copied_once_within_the_budget(tmp_path: Path) -> None:
    sizes = {"a": 10, "b": 10, "c": 10, "big": 50}
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(name.encode() * size)
    reads = sweep_reads(LocalFileSystem(skip_instance_cache=True), per_file=40, budget=20)
    folder = reads.storage[-1]

    def read(name: str) -> bytes:
        with reads.open(str(tmp_path / name), "rb") as fh:
            data: bytes = fh.read()
        return data

    steps = [("a", "first open: copied"), ("a", "the copy read again"),
             ("big", "over `per_file`: not copied"), ("b", "copied"),
             ("c", "the budget (20) is spent: not copied")]
    seen = [(read(name), _copies(reads), why) for name, why in steps]
    assert seen == [
        (b"a" * 10, 1, steps[0][1]), (b"a" * 10, 1, steps[1][1]),
        (b"big" * 50, 1, steps[2][1]), (b"b" * 10, 2, steps[3][1]),
        (b"c" * 10, 2, steps[4][1]),
    ]
    # the copies are what was read: a copied file read after its source changed is the copy
    (tmp_path / "a").write_bytes(b"changed")
    (tmp_path / "c").write_bytes(b"changed")
    assert (read("a"), read("c")) == (b"a" * 10, b"changed")

    release(reads)
    release(reads)  # idempotent
    assert not os.path.exists(folder)
    assert read("a") == b"changed"  # read from the bucket after the sweep


class _FullDisk(LocalFileSystem):  # type: ignore[misc]  # fsspec is untyped
    """The local filesystem, whose copies stop half way as on a full disk."""

    def get_file(self, rpath: str, lpath: str, **kwargs: object) -> None:
        with open(rpath, "rb") as src, open(lpath, "wb") as dst:
            dst.write(src.read(5))
        raise OSError(errno.ENOSPC, "No space left on device", lpath)


def test_a_copy_that_fails_half_way_is_never_read(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_bytes(b'{"id": 1}\n{"id": 2}\n')
    reads = sweep_reads(_FullDisk(skip_instance_cache=True))

    for _ in range(2):  # the failed copy's file is gone: the next open does not take it
        with reads.open(str(tmp_path / "rows.jsonl"), "rb") as fh:
            assert fh.read() == b'{"id": 1}\n{"id": 2}\n'  # read from the bucket
        assert _copies(reads) == 0
    release(reads)


class _Flaky(LocalFileSystem):  # type: ignore[misc]  # fsspec is untyped
    """The local filesystem, whose first copy fails as a dropped connection does."""

    failures = 1

    def get_file(self, rpath: str, lpath: str, **kwargs: object) -> None:
        if _Flaky.failures:
            _Flaky.failures -= 1
            raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
        super().get_file(rpath, lpath, **kwargs)


def test_a_copy_the_bucket_failed_stops_no_later_copy(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).write_bytes(name.encode() * 10)
    reads = sweep_reads(_Flaky(skip_instance_cache=True))

    seen = []
    for name in ("a", "b"):
        with reads.open(str(tmp_path / name), "rb") as fh:
            seen.append((fh.read(), _copies(reads)))
    assert seen == [(b"a" * 10, 0), (b"b" * 10, 1)]  # `a` from the bucket, `b` copied
    release(reads)
