"""Local files that concurrent runs share: locked, and replaced atomically.

One helper for every file this package writes (the alert dedup state, contract snapshots):
an exclusive lock on a sibling `<file>.lock` (`filelock`, which works on POSIX and Windows)
around the whole read-decide-write cycle, and writes that go to a temporary file in the same
folder and replace the target atomically, so a reader never sees half a document and a crash
never leaves one behind. Working files a run makes and removes itself carry their owner in
their name, so a later run can remove those a killed one left (`remove_stale`).

Reading back: a JSON document with a byte that is not UTF-8 is as unreadable as one cut short
(`read_json` raises StateFileError naming the file and line; each caller decides what that
costs); a line file (`read_lines`) skips such a line with a warning and keeps the others.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import ContractOpsError, StateFileError

__all__ = [
    "STALE_AFTER", "StateFileError", "locked", "owner_tag", "pid_alive", "project_key",
    "read_json", "read_lines", "read_utf8", "remove_stale", "state_dir", "write_json",
    "write_text",
]

log = logging.getLogger("dlt_contract_ops")


def state_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """`<dlt data dir>/contract_ops`: the one folder of the files this package keeps in dlt's
    data dir (load profiles, alert state, the finding index, locks, quarantine, the source
    cache). `data_dir` None: the current dlt run context's (call it inside the project's).

    >>> state_dir("/d").as_posix()
    '/d/contract_ops'
    """
    if data_dir is None:
        import dlt

        data_dir = dlt.current.run_context().data_dir
    return Path(data_dir) / "contract_ops"


def project_key(project_dir: str | os.PathLike[str], also: str | None = None,
                digits: int = 12) -> str:
    """`<project folder name>-<hash>`: a project's file name under `state_dir`, readable and
    unique per absolute project path (and `also`, e.g. a source name).

    >>> project_key("/work/my shop")
    'my_shop-b064d237f929'
    """
    absolute = os.path.abspath(os.fspath(project_dir))
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", os.path.basename(absolute)) or "project"
    hashed = absolute if also is None else f"{absolute}\0{also}"
    return f"{slug}-{hashlib.sha256(hashed.encode()).hexdigest()[:digits]}"


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
        # a byte that is not UTF-8 must be a StateFileError too: callers that repair catch it
        text = read_utf8(path, StateFileError)
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


def read_utf8(path: Path, error: type[ContractOpsError], advice: str = "") -> str:
    """The text of `path`; `error` naming the line of a byte that is not UTF-8, followed by
    `advice` (OSError as `open` raises it)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"`{path}` line {line} is not UTF-8 text{advice}") from exc


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


# -- working files a killed run leaves -------------------------------------------------------
# A run removes its own working files when it ends (the profile store's bulk-insert staging
# files beside the store, a remote sweep's local copies in TMPDIR), but a run that is killed
# (SIGKILL, the OOM killer, a container stopped) ends no `finally` and leaves them for ever.
# Each such name carries `owner_tag()`, `<pid>.<host>` (the host as 8 hex digits of its name),
# and each creator first calls `remove_stale` on its folder: an entry is removed when its
# owner process on this host is gone, or when it is older than `STALE_AFTER` (another host's,
# one from before names carried an owner, or a live process id that was reused). A live run's
# entries are kept: only the owner removes them before the bound.

#: an entry of a process that cannot be checked (another host's) is removed after this long
STALE_AFTER = 24 * 3600.0

_HOST = hashlib.sha1(socket.gethostname().encode(), usedforsecurity=False).hexdigest()[:8]
_TAG = re.compile(r"(\d+)\.([0-9a-f]{8})-")


def owner_tag() -> str:
    """`<pid>.<host>`: the part of a working file's name that says whose it is."""
    return f"{os.getpid()}.{_HOST}"


def pid_alive(pid: int) -> bool:
    """Whether process `pid` runs on this host (another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    except (OSError, OverflowError):  # no such process id at all
        return False
    return True


def _owner(name: str, prefix: str) -> tuple[int, str] | None:
    found = _TAG.match(name, len(prefix))
    return (int(found[1]), found[2]) if found else None


def _stale(name: str, prefix: str, age: float, stale_after: float) -> bool:
    owner = _owner(name, prefix)
    if owner is None or owner[1] != _HOST:  # not checkable here: only the bound tells
        return age > stale_after
    pid = owner[0]
    if pid == os.getpid():
        return False  # this run's own
    return not pid_alive(pid) or age > stale_after  # a live id that old was reused


def remove_stale(
    folder: Path, prefix: str, *, stale_after: float = STALE_AFTER, now: float | None = None,
) -> list[Path]:
    """Remove the entries of `folder` named `prefix...` that their owner left (see the module
    doc); the paths removed. Never fails: an entry that cannot be removed (another user's, in
    a shared TMPDIR) is left, and a missing folder holds none."""
    moment = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        try:
            age = moment - entry.stat(follow_symlinks=False).st_mtime
            if not _stale(entry.name, prefix, age, stale_after):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError as exc:  # gone meanwhile (its owner ended), or not ours to remove
            log.debug("leftover `%s` not removed: %s", entry.path, exc)
            continue
        log.debug("removed `%s`, left by a run that ended without removing it", entry.path)
        removed.append(Path(entry.path))
    return removed
