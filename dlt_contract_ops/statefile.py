"""Local files that concurrent runs share: locked, and replaced atomically.

One helper for every file this package writes (the alert dedup state, contract snapshots):
an exclusive lock on a sibling `<file>.lock` (`filelock`, which works on POSIX and Windows)
around the whole read-decide-write cycle, and writes that go to a temporary file in the same
folder and replace the target atomically, so a reader never sees half a document and a crash
never leaves one behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import StateFileError

__all__ = ["StateFileError", "locked", "read_json", "write_json", "write_text"]


@contextlib.contextmanager
def locked(path: Path, timeout: float = 10.0) -> Iterator[None]:
    """Hold the exclusive lock of `path` (via `<path>.lock`); StateFileError on timeout."""
    from filelock import FileLock, Timeout

    lock_path = path.with_name(path.name + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(lock_path, timeout=timeout)
        lock.acquire()
    except Timeout:
        raise StateFileError(
            f"`{lock_path}` is held by another process for more than {timeout:g}s"
        ) from None
    except OSError as exc:
        raise StateFileError(f"cannot open lock file `{lock_path}`: {exc}") from exc
    try:
        yield
    finally:
        lock.release()


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


def write_text(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically (temporary file in the same folder + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_json(path: Path, doc: dict[str, Any]) -> None:
    """Replace `path` with `doc` as JSON, atomically."""
    write_text(path, json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True))
