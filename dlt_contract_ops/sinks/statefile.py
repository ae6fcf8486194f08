"""A small JSON state file that concurrent processes can share safely.

Readers and writers take an exclusive lock on a sibling `<file>.lock` (flock on POSIX,
msvcrt on Windows) for the whole read-decide-write cycle, and writes go to a temporary file
in the same folder that replaces the state file atomically, so a reader never sees half a
document and a crash never leaves one behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class StateFileError(Exception):
    """The state file cannot be locked, read or written."""


@contextlib.contextmanager
def locked(path: Path, timeout: float = 10.0) -> Iterator[None]:
    """Hold the exclusive lock of `path` (via `<path>.lock`); StateFileError on timeout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StateFileError(f"cannot open lock file `{lock_path}`: {exc}") from exc
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise StateFileError(
                    f"`{lock_path}` is held by another process for more than {timeout:g}s"
                )
            time.sleep(0.01)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def read_json(path: Path) -> dict[str, Any]:
    """The document at `path`; `{}` when the file does not exist; StateFileError when it is
    not a JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StateFileError(f"cannot read `{path}`: {exc}") from exc
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise StateFileError(f"`{path}` is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise StateFileError(f"`{path}` does not hold a JSON object")
    return doc


def write_json(path: Path, doc: dict[str, Any]) -> None:
    """Replace `path` with `doc` atomically (temporary file in the same folder + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
