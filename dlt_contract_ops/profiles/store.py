"""The profile store: a local DuckDB file of load profiles, never the destination.

Default `<dlt data dir>/contract_ops/profiles.duckdb`; `[contract_ops] profile_store` picks
another. Rows are keyed by (destination, location, dataset, table, load id); the source that
profiled them is recorded too, so `profiles rebuild -s X` can drop X's profiles. A `meta` table
holds the schema version: a file of another version is refused, not misread.

Concurrent sweeps: every open of the file holds `statefile.locked` (DuckDB lets one process
write at a time), and each sweep's new loads go in ONE transaction, so a crash never leaves a
load with only some of its columns. The statements are constants with bound parameters: this
file is ours, so they are not routed through the destination renderer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import StateFileError
from dlt_contract_ops.profiles.model import ColumnProfile, LoadProfile
from dlt_contract_ops.statefile import locked

SCHEMA_VERSION = "1"
STORE_NAME = "profiles.duckdb"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    "CREATE TABLE IF NOT EXISTS loads (destination VARCHAR, location VARCHAR, dataset VARCHAR,"
    " tbl VARCHAR, load_id VARCHAR, load_time DOUBLE, source VARCHAR, n_rows BIGINT,"
    " PRIMARY KEY (destination, location, dataset, tbl, load_id))",
    "CREATE TABLE IF NOT EXISTS columns (destination VARCHAR, location VARCHAR,"
    " dataset VARCHAR, tbl VARCHAR, load_id VARCHAR, col VARCHAR, non_null BIGINT,"
    " distinct_count BIGINT, min_value VARCHAR, max_value VARCHAR, has_categories BOOLEAN,"
    " complete BOOLEAN, PRIMARY KEY (destination, location, dataset, tbl, load_id, col))",
    "CREATE TABLE IF NOT EXISTS categories (destination VARCHAR, location VARCHAR,"
    " dataset VARCHAR, tbl VARCHAR, load_id VARCHAR, col VARCHAR, value VARCHAR, n BIGINT)",
)
_TABLES = ("categories", "columns", "loads")
#: the statements that delete one table's rows, or one load's, from each of `_TABLES`
_DELETE_TABLE = {
    "categories": "DELETE FROM categories"
    " WHERE destination = ? AND location = ? AND dataset = ? AND tbl = ?",
    "columns": "DELETE FROM columns"
    " WHERE destination = ? AND location = ? AND dataset = ? AND tbl = ?",
    "loads": "DELETE FROM loads WHERE destination = ? AND location = ? AND dataset = ? AND tbl = ?",
}
_DELETE_LOAD = {name: statement + " AND load_id = ?" for name, statement in _DELETE_TABLE.items()}


def default_store(data_dir: str) -> Path:
    """`<dlt data dir>/contract_ops/profiles.duckdb`."""
    return Path(data_dir) / "contract_ops" / STORE_NAME


@dataclass(frozen=True)
class Scope:
    """Where profiled tables live: the destination type, its location, the dataset."""

    destination: str
    location: str
    dataset: str


@dataclass(frozen=True)
class TableUpdate:
    """A table's new loads from one sweep; `full`: they replace every stored load of it."""

    table: str
    loads: Sequence[LoadProfile] = field(default_factory=tuple)
    full: bool = False


class ProfileStore:
    """The store at `path`; every method opens, locks and closes the file."""

    def __init__(self, path: Path, lock_timeout: float = 30.0) -> None:
        self.path = path
        self.lock_timeout = lock_timeout

    @contextlib.contextmanager
    def _open(self) -> Iterator[Any]:
        import duckdb

        with locked(self.path, self.lock_timeout):
            try:
                con = duckdb.connect(str(self.path))
            except duckdb.Error as exc:
                raise StateFileError(f"cannot open the profile store `{self.path}`: {exc}") from exc
            try:
                for statement in _SCHEMA:
                    con.execute(statement)
                found = con.execute(
                    "SELECT value FROM meta WHERE key = 'schema_version'"
                ).fetchone()
                if found is None:
                    con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
                elif found[0] != SCHEMA_VERSION:
                    raise StateFileError(
                        f"the profile store `{self.path}` has schema version {found[0]}, this "
                        f"version reads {SCHEMA_VERSION}: move it away (profiles are rebuilt "
                        "from the destination on the next sweep)."
                    )
                yield con
            finally:
                con.close()

    def history(self, scope: Scope, table: str) -> list[LoadProfile]:
        """Every stored load of `table`, oldest first."""
        return self.histories(scope, [table])[table]

    def histories(self, scope: Scope, tables: Sequence[str]) -> dict[str, list[LoadProfile]]:
        """Every stored load of each of `tables` (oldest first), read in one open of the file:
        one query per store table for the whole dataset, not one per profiled table."""
        out: dict[str, list[LoadProfile]] = {t: [] for t in tables}
        if not tables or not self.path.exists():
            return out
        key = [scope.destination, scope.location, scope.dataset]
        with self._open() as con:
            loads = con.execute(
                "SELECT tbl, load_id, n_rows FROM loads WHERE destination = ? AND location = ?"
                " AND dataset = ? ORDER BY tbl, load_id", key
            ).fetchall()
            cols = con.execute(
                "SELECT tbl, load_id, col, non_null, distinct_count, min_value, max_value,"
                " has_categories, complete FROM columns WHERE destination = ? AND location = ?"
                " AND dataset = ?", key
            ).fetchall()
            cats = con.execute(
                "SELECT tbl, load_id, col, value, n FROM categories WHERE destination = ?"
                " AND location = ? AND dataset = ?", key
            ).fetchall()
        values: dict[tuple[str, str, str], dict[str, int]] = {}
        for tbl, load_id, column, value, n in cats:
            values.setdefault((tbl, load_id, column), {})[value] = int(n)
        by_load: dict[tuple[str, str], dict[str, ColumnProfile]] = {}
        for tbl, load_id, column, non_null, distinct, low, high, has, complete in cols:
            by_load.setdefault((tbl, load_id), {})[column] = ColumnProfile(
                column, int(non_null), None if distinct is None else int(distinct), low, high,
                values.get((tbl, load_id, column), {}) if has else None, bool(complete),
            )
        for tbl, load_id, n in loads:
            if tbl in out:
                out[tbl].append(LoadProfile(load_id, int(n), by_load.get((tbl, load_id), {})))
        return out

    def write(
        self, scope: Scope, source: str, updates: Sequence[TableUpdate], *,
        prune_before: float | None = None,
    ) -> None:
        """Store one sweep's new loads in ONE transaction; loads older than `prune_before`
        (epoch seconds) go in the same transaction."""
        with self._open() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                for update in updates:
                    _write_table(con, scope, source, update)
                if prune_before is not None:
                    _prune(con, prune_before)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def drop_source(self, source: str) -> int:
        """Drop every profile the source `source` wrote; how many loads went."""
        if not self.path.exists():
            return 0
        with self._open() as con:
            keys = con.execute(
                "SELECT destination, location, dataset, tbl, load_id FROM loads WHERE source = ?",
                [source],
            ).fetchall()
            con.execute("BEGIN TRANSACTION")
            for name in _TABLES:
                _many(con, _DELETE_LOAD[name], keys)
            con.execute("COMMIT")
        return len(keys)


def _write_table(con: Any, scope: Scope, source: str, update: TableUpdate) -> None:
    key = [scope.destination, scope.location, scope.dataset, update.table]
    for name in _TABLES:
        if update.full:
            con.execute(_DELETE_TABLE[name], key)
        else:
            _many(con, _DELETE_LOAD[name], [[*key, p.load_id] for p in update.loads])
    for profile in update.loads:
        _insert_load(con, key, source, profile)


def _insert_load(con: Any, key: list[str], source: str, profile: LoadProfile) -> None:
    con.execute("INSERT INTO loads VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [*key, profile.load_id, profile.load_time, source, profile.rows])
    _insert_columns(con, key, profile)


def _insert_columns(con: Any, key: list[str], profile: LoadProfile) -> None:
    rows, cats = [], []
    for c in profile.columns.values():
        rows.append([*key, profile.load_id, c.column, c.non_null, c.distinct, c.min_value,
                     c.max_value, c.categories is not None, c.complete])
        cats += [[*key, profile.load_id, c.column, v, n] for v, n in (c.categories or {}).items()]
    if rows:
        _many(con, "INSERT INTO columns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    if cats:
        _many(con, "INSERT INTO categories VALUES (?, ?, ?, ?, ?, ?, ?, ?)", cats)


def _many(con: Any, statement: str, rows: Sequence[Sequence[Any]]) -> None:
    if rows:
        con.executemany(statement, rows)


def _prune(con: Any, before: float) -> None:
    old = con.execute(
        "SELECT destination, location, dataset, tbl, load_id FROM loads WHERE load_time < ?",
        [before],
    ).fetchall()
    for name in _TABLES:
        _many(con, _DELETE_LOAD[name], old)
