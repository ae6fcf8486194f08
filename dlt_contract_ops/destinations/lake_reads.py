"""A sweep's reads of a remote bucket: each small file fetched once, not once a look.

A sweep opens every data file of a table many times: its footer for the columns, the views,
then each query (coverage, profile, distribution, samples). Through a plain fsspec client
each open is a GET of its own, and DuckDB reads a remote Python filesystem one request at a
time: 14 GETs for one small Parquet file in one sweep on S3 (seen on a loopback server).
fsspec's `simplecache` keeps a file it fetched in a local folder for the client's lifetime,
so every later open of it reads the local copy: one GET a file a sweep. A dlt load writes
its own files and never changes them in place (the listing cache relies on that too).

Only small files are copied, and only up to a total: a file over `PER_FILE` bytes, or one
that would take the folder past `BUDGET`, is read from the bucket as before (a sweep reads
the footers of large files, not their whole contents). The folder is removed when the sweep's
client closes (or, failing that, when it is collected or the process exits); a killed
sweep's folder (its name carries its process id) is removed by the next sweep that makes
one (`statefile.remove_stale`). A copy is
fetched under a temporary name and renamed when whole; a folder that is full or unwritable
stops the copying, and the files are read from the bucket as before.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from fsspec.implementations.cached import (  # type: ignore[import-untyped]  # no stubs
    SimpleCacheFileSystem,
)

from dlt_contract_ops.statefile import owner_tag, remove_stale

__all__ = ["BUDGET", "FOLDER_PREFIX", "PER_FILE", "SweepReads", "release", "sweep_reads"]

log = logging.getLogger("dlt_contract_ops")

#: the largest file copied whole (dlt's load files are mostly far smaller)
PER_FILE = 16 << 20
#: the most a sweep copies to local disk in all
BUDGET = 512 << 20
#: a sweep's folder in TMPDIR, then `statefile.owner_tag()`
FOLDER_PREFIX = "dlt-contract-ops-reads-"


class SweepReads(SimpleCacheFileSystem):  # type: ignore[misc]  # fsspec is untyped
    """`simplecache` over `fs`, bounded by `PER_FILE` and `BUDGET`; its `protocol` is the
    bucket's (`sweep_reads` makes the class), so DuckDB routes `s3://...` paths to it. An
    attribute fsspec's caching classes do not know is looked up on `fs`: the state here lives
    in the instance, and `release` is a function."""

    def __init__(self, *, per_file: int = PER_FILE, budget: int = BUDGET, **kwargs: Any) -> None:
        remove_stale(Path(tempfile.gettempdir()), FOLDER_PREFIX)  # killed sweeps' copies
        self._folder = tempfile.TemporaryDirectory(prefix=f"{FOLDER_PREFIX}{owner_tag()}-")
        super().__init__(cache_storage=self._folder.name, **kwargs)
        self._per_file, self._budget, self._copied = per_file, budget, 0
        self._released = False

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        if self._released:  # the sweep's client closed: a reopened one reads the bucket
            return self.fs._open(path, mode, **kwargs)
        stripped = self._strip_protocol(path)
        if mode == "rb" and not self._check_file(stripped):
            size = self.fs.size(path)  # from the table folder's listing
            if size is None or size > self._per_file or self._copied + size > self._budget:
                return self.fs._open(path, mode, **kwargs)
            try:
                self._get_cached_file_before_open(stripped)
            except OSError as exc:  # this file is read from the bucket, as without a copy
                log.debug("reading %s from the bucket, not a copy: %s", path, exc)
                if _local(exc, self.storage[-1]):  # the folder is full or unwritable
                    self._budget = self._copied  # copy no more
                return self.fs._open(path, mode, **kwargs)
            self._copied += size
        return super()._open(path, mode, **kwargs)

    def _get_cached_file_before_open(self, path: str, **kwargs: Any) -> None:
        """Fetch `path` under a temporary name, then rename it: a copy that failed half way
        is never taken for the file (a truncated JSONL file would read as fewer rows)."""
        fn = os.path.join(self.storage[-1], self._mapper(path))
        part = f"{fn}.part"
        try:
            self.fs.get_file(path, part)
            os.replace(part, fn)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(part)
            raise


def _local(exc: OSError, folder: str) -> bool:
    """Whether `exc` is the local folder's (full, read-only, not ours to write), not the
    bucket's (a refused or missing object, a dropped connection)."""
    return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) or str(
        exc.filename or "").startswith(folder)


def release(reads: SweepReads) -> None:
    """Remove the local copies (idempotent); later opens read the bucket."""
    reads._released = True
    reads._folder.cleanup()


def sweep_reads(remote: Any, *, per_file: int = PER_FILE, budget: int = BUDGET) -> SweepReads:
    """`remote` (a dlt fsspec client) behind a fresh `SweepReads` of its protocol."""
    cls = type("SweepReads", (SweepReads,), {"protocol": remote.protocol})
    reads: SweepReads = cls(fs=remote, per_file=per_file, budget=budget, skip_instance_cache=True)
    return reads
