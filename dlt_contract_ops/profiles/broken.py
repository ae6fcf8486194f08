"""A broken profile store file: told apart from a locked or full one, and set aside (kept)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from dlt_contract_ops.errors import StateFileError

#: what DuckDB says of a file that is not, or no longer, a whole database of its own
_BROKEN = ("not a valid DuckDB database file", "Could not read enough bytes",
           "Corrupt database file", "checksum")


def is_broken(exc: BaseException) -> bool:
    """Whether DuckDB failed because the file itself is damaged (garbage, empty, cut short,
    a failed block checksum), not because it is locked, unreadable or the disk is full."""
    import duckdb

    return isinstance(exc, duckdb.Error) and any(m in str(exc) for m in _BROKEN)


def set_aside(path: Path, exc: BaseException, now: dt.datetime | None = None) -> str:
    """Rename the broken store `path` (and its write-ahead log, which DuckDB would replay
    into a fresh file) to `<name>.broken-<UTC stamp>`; the note saying so, naming both paths.
    Call it holding the store's lock. StateFileError when the file cannot be moved.

    >>> import tempfile
    >>> store = Path(tempfile.mkdtemp()) / "p.duckdb"
    >>> _ = store.write_bytes(b"junk")
    >>> at = dt.datetime(2026, 12, 2, 19, tzinfo=dt.timezone.utc)
    >>> set_aside(store, OSError("not a database"), at).endswith(
    ...     "p.duckdb.broken-20261202T190000Z`, and a fresh store was started (every table "
    ...     "is profiled afresh)")
    True
    >>> sorted(p.name for p in store.parent.iterdir())
    ['p.duckdb.broken-20261202T190000Z']
    """
    stamp = (now or dt.datetime.now(dt.timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.broken-{stamp}")
    n = 1
    while aside.exists():  # set aside twice within a second
        n += 1
        aside = path.with_name(f"{path.name}.broken-{stamp}-{n}")
    why = (str(exc).splitlines() or [type(exc).__name__])[0]
    try:
        path.replace(aside)
        wal = path.with_name(path.name + ".wal")
        if wal.exists():
            wal.replace(aside.with_name(aside.name + ".wal"))
    except OSError as err:
        raise StateFileError(
            f"the profile store `{path}` is broken ({why}) and cannot be moved aside: {err}. "
            "Move it away; profiles are rebuilt from the destination on the next sweep."
        ) from exc
    return (f"the profile store `{path}` was broken ({why}): kept as `{aside}`, and a fresh "
            "store was started (every table is profiled afresh)")
