"""Local files that concurrent runs share: locked, and replaced atomically.

One helper for every file this package writes (the alert dedup state, contract snapshots):
an exclusive lock on a sibling `<file>.lock` (`filelock`, which works on POSIX and Windows)
around the whole read-decide-write cycle, and writes that go to a temporary file in the same
folder and replace the target atomically, so a reader never sees half a document and a crash
never leaves one behind.

Reading back: a JSON document with a byte that is not UTF-8 is as unreadable as one cut short
(`read_json` raises StateFileError naming the file and line; each caller decides what that
costs); a line file (`read_lines`) skips such a line with a warning and keeps the others.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import StateFileError

__all__ = ["StateFileError", "locked", "read_json", "read_lines", "write_json", "write_text"]

log = logging.getLogger("dlt_contract_ops")


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
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StateFileError(f"cannot read `{path}`: {exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # a ValueError: callers that repair must see it as ours
        line = data.count(b"\n", 0, exc.start) + 1
        raise StateFileError(f"`{path}` line {line} is not UTF-8 text") from exc
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise StateFileError(f"`{path}` is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise StateFileError(f"`{path}` does not hold a JSON object")
    return doc


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of the line file `path` (none when it does not
    exist). A line that is not UTF-8 (a flipped byte, a foreign write) is skipped with one
    WARNING naming the file and its line numbers, so the other lines still count: whether a
    line means anything is for the caller to decide (a line a crash cut short usually does
    not parse). Reads lazily: a caller may stop early."""
    bad: list[int] = []
    try:
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, 1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    bad.append(number)
                    continue
                yield number, text
    except FileNotFoundError:
        return
    finally:
        if bad:
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            log.warning("`%s` line %d%s is not UTF-8 text: skipped, the other lines are kept",
                        path, bad[0], more)


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
