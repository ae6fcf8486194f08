"""The profile store: a local DuckDB file of load profiles, never the destination.

Default `<dlt data dir>/contract_ops/profiles.duckdb`; `[contract_ops] profile_store` picks
another. Rows are keyed by (destination, location, dataset, table, load id); the source that
profiled them is recorded too, so `profiles rebuild -s X` can drop X's profiles. `totals` holds
each table's whole row count as the last sweep saw it: a repeat sweep compares it with the
table's count now less the new loads' rows, which shows a merge, replace, refresh or delete
that changed earlier rows. A `meta` table holds the schema version: a file of another version
is refused, not misread; an older one is migrated in place.

A broken file (garbage, empty, cut short: DuckDB cannot open it, or a read runs past its end
or fails a block checksum) is set aside, never deleted: renamed `<name>.broken-<UTC stamp>`
(with its `.wal`), and a fresh store takes its place, so the next sweep profiles every table
afresh. Each set-aside is logged as a WARNING naming both paths and kept in `notes`.

Each open attaches the file to the process's in-memory DuckDB (`profiles.attach`) and
detaches it at the end. Concurrent sweeps: every open of the file holds `statefile.locked`
(DuckDB lets one process write at a time), and each sweep's new loads go in ONE transaction,
so a crash never leaves a load with only some of its columns. The statements are constants
with bound parameters (`profiles.statements`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile, SummedLoads
from dlt_contract_ops.errors import StateFileError
from dlt_contract_ops.profiles.attach import attached
from dlt_contract_ops.profiles.broken import is_broken, set_aside
from dlt_contract_ops.profiles.staging import Staging as _Staging
from dlt_contract_ops.profiles.statements import (
    DELETE_LOADS,
    DELETE_TABLES,
    DELETE_TOTALS,
    FROM_STAGED,
    KEY,
    MIGRATIONS,
    READ,
    SCHEMA,
    STAGED_LOADS,
    TABLES,
    TOTALS,
    names,
)
from dlt_contract_ops.statefile import locked, state_dir

log = logging.getLogger("dlt_contract_ops")
T = TypeVar("T")

SCHEMA_VERSION = "4"
STORE_NAME = "profiles.duckdb"

def default_store(data_dir: str | None = None) -> Path:
    """`<dlt data dir>/contract_ops/profiles.duckdb` (`data_dir` None: the current run
    context's)."""
    return state_dir(data_dir) / STORE_NAME


@dataclass(frozen=True)
class Scope:
    """Where profiled tables live: the destination type, its location, the dataset."""

    destination: str
    location: str
    dataset: str


@dataclass(frozen=True)
class TableUpdate:
    """A table's new loads from one sweep; `full`: they replace every stored load of it;
    `total`: the table's whole row count the sweep saw (None: keep the stored one);
    `dropped`: ids of stored loads the sweep found gone (every row re-stamped or deleted)."""

    table: str
    loads: Sequence[LoadProfile] = field(default_factory=tuple)
    full: bool = False
    total: int | None = None
    dropped: Sequence[str] = ()


@dataclass(frozen=True)
class Thin:
    """Which loads `ProfileStore.read` hands over without their columns: those of `tables`
    before `before` (load id text; later ones, which a sweep may read again, come whole).
    Their columns are summed in the store over the loads from `since` on: removal's baseline
    window, when `before` is its recent window's start (`profiles.sweep`)."""

    tables: frozenset[str]
    since: str
    before: str


@dataclass
class Stored:
    """What the store holds of some tables: each one's loads (oldest first), its whole row
    count at the last sweep (absent when never counted), and for a thin read
    (`Thin`) what the store summed of the loads it handed over without their columns."""

    histories: dict[str, list[LoadProfile]]
    totals: dict[str, int]
    sums: dict[str, SummedLoads] = field(default_factory=dict)


class ProfileStore:
    """The store at `path`; every method opens, locks and closes the file."""

    def __init__(self, path: Path, lock_timeout: float = 30.0) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        #: one line per broken file this store set aside (both paths), for the run's notes
        self.notes: list[str] = []

    def _session(self, work: Callable[[Any], T]) -> T:
        """`work(con)` on the open store, under its lock. A broken file is set aside and
        `work` runs once more on a fresh store: whether the file fails to open or a read
        runs into the damage."""
        with locked(self.path, self.lock_timeout):
            try:
                return self._attempt(work)
            except Exception as exc:
                if not is_broken(exc):
                    raise
                self._set_aside(exc)
            return self._attempt(work)

    def _attempt(self, work: Callable[[Any], T]) -> T:
        import duckdb

        from dlt_contract_ops.destinations.duckdb import quiet_progress_bar

        with ExitStack() as opened:
            try:
                con = opened.enter_context(attached(self.path))
            except duckdb.Error as exc:
                if is_broken(exc):
                    raise
                raise StateFileError(
                    f"cannot open the profile store `{self.path}`: {exc}") from exc
            quiet_progress_bar(con)
            for statement in SCHEMA:
                con.execute(statement)
            found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if found is None:
                con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
            elif found[0] in MIGRATIONS:
                _migrate(con, found[0])
            elif found[0] != SCHEMA_VERSION:
                raise StateFileError(
                    f"the profile store `{self.path}` has schema version {found[0]}, this "
                    f"version reads {SCHEMA_VERSION}: move it away (profiles are rebuilt "
                    "from the destination on the next sweep)."
                )
            return work(con)

    def _set_aside(self, exc: BaseException) -> None:
        note = set_aside(self.path, exc)
        log.warning("%s", note)
        self.notes.append(note)

    def history(self, scope: Scope, table: str) -> list[LoadProfile]:
        """Every stored load of `table`, oldest first."""
        return self.histories(scope, [table])[table]

    def histories(self, scope: Scope, tables: Sequence[str]) -> dict[str, list[LoadProfile]]:
        """Every stored load of each of `tables` (oldest first)."""
        return self.read(scope, tables).histories

    def read(self, scope: Scope, tables: Sequence[str], thin: Thin | None = None) -> Stored:
        """Every stored load and the row total of each of `tables`, read in one open of the
        file: one query per store table for the sources' tables, not one per table. With
        `thin`, the loads of its tables before `thin.before` come without their columns, which
        the store sums instead (`Stored.sums`): one row per column, not one per load and
        column."""
        out: dict[str, list[LoadProfile]] = {t: [] for t in tables}
        totals: dict[str, int] = {}
        thinned = [t for t in tables if thin is not None and t in thin.tables]
        sums = {t: SummedLoads(frozenset(), thin.since) for t in thinned if thin is not None}
        if not tables or not self.path.exists():
            return Stored(out, totals, sums)
        key = [scope.destination, scope.location, scope.dataset]
        before = thin.before if thin is not None else ""
        cut: list[Any] = [names(tables), names(thinned), before]

        def fetch(con: Any) -> tuple[list[Any], ...]:
            found = tuple(con.execute(sql, [*key, *params]).fetchall() for sql, params in (
                (READ["totals"], cut[:1]), (READ["loads"], cut[:1]),
                (READ["columns"], cut), (READ["categories"], cut),
            ))
            summed = con.execute(READ["sums"], [*key, names(thinned), thin.since, thin.before]
                                 ).fetchall() if thin is not None and thinned else []
            return (*found, summed)

        counted, loads, cols, cats, summed = self._session(fetch)
        totals = {tbl: int(n) for tbl, n in counted}
        values: dict[tuple[str, str, str], dict[str, int]] = {}
        for tbl, load_id, column, value, n in cats:
            values.setdefault((tbl, load_id, column), {})[value] = int(n)
        by_load: dict[tuple[str, str], dict[str, ColumnProfile]] = {}
        for tbl, load_id, column, non_null, distinct, low, high, has, complete in cols:
            by_load.setdefault((tbl, load_id), {})[column] = ColumnProfile(
                column, int(non_null), None if distinct is None else int(distinct), low, high,
                values.get((tbl, load_id, column), {}) if has else None, bool(complete),
            )
        for tbl, load_id, n, detailed in loads:
            out[tbl].append(LoadProfile(load_id, int(n), by_load.get((tbl, load_id), {}),
                                        detailed is not False))
        per_column: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
        for tbl, column, non_null, profiled in summed:
            counts, loaded = per_column.setdefault(tbl, ({}, {}))
            counts[column], loaded[column] = int(non_null), int(profiled)
        for tbl, s in sums.items():
            counts, loaded = per_column.get(tbl, ({}, {}))
            ids = frozenset(p.load_id for p in out[tbl] if p.load_id < before)
            sums[tbl] = SummedLoads(ids, s.since, counts, loaded)
        return Stored(out, totals, sums)

    def counts(self, scope: Scope, wanted: Mapping[str, tuple[Sequence[str], Sequence[str]]]
               ) -> dict[str, dict[str, dict[str, int]]]:
        """The stored non-NULL values of some columns in some loads, in one read (`wanted`:
        table -> its columns and load ids): table -> load id -> column -> count (a column
        the load was profiled without is absent)."""
        ids = {(t, i) for t, (_, loads) in wanted.items() for i in loads}
        if not ids or not self.path.exists():
            return {}
        # one range of load ids for all (the loads asked are a window's), the rest in Python
        columns = sorted({c for cs, _ in wanted.values() for c in cs})
        params = [scope.destination, scope.location, scope.dataset, names(wanted), names(columns),
                  min(i for _, i in ids), max(i for _, i in ids)]
        out: dict[str, dict[str, dict[str, int]]] = {}
        for tbl, load_id, column, non_null in self._session(
                lambda con: con.execute(READ["counts"], params).fetchall()):
            if (tbl, load_id) in ids and column in wanted[tbl][0]:
                out.setdefault(tbl, {}).setdefault(load_id, {})[column] = int(non_null)
        return out

    def whole(
        self, scope: Scope, thin: Mapping[str, tuple[Sequence[LoadProfile], SummedLoads]]
    ) -> dict[str, list[LoadProfile]]:
        """Each table's history (`thin`: table -> its history and what a thin read summed)
        with the loads the read left without their columns read whole, in one read. A load
        gone from the store since stays as it was."""
        tables = [t for t, (_, s) in thin.items() if s.loads]
        whole = self.read(scope, tables).histories if tables else {}
        out = {}
        for t, (history, summed) in thin.items():
            found = {p.load_id: p for p in whole.get(t, ())}
            out[t] = [found.get(p.load_id, p) if p.load_id in summed.loads else p
                      for p in history]
        return out

    def write(
        self, scope: Scope, source: str, updates: Sequence[TableUpdate], *,
        prune_before: float | None = None,
    ) -> None:
        """Store one sweep's new (or re-profiled) loads in ONE transaction, in bulk (one
        statement per store table, not one per row); loads older than `prune_before` (epoch
        seconds) go in the same transaction."""
        self._session(lambda con: self._write(con, scope, source, updates, prune_before))

    def _write(
        self, con: Any, scope: Scope, source: str, updates: Sequence[TableUpdate],
        prune_before: float | None,
    ) -> None:
        with _Staging(self.path) as staging:
            staged: list[dict[str, Any]] = []
            doomed: list[list[Any]] = []
            totals: list[list[Any]] = []
            for update in updates:
                key = [scope.destination, scope.location, scope.dataset, update.table]
                if update.total is not None:
                    totals.append([*key, source, update.total])
                doomed += [[*key, p.load_id] for p in update.loads]
                doomed += [[*key, load_id] for load_id in update.dropped]
                staged += [_staged(update.table, p) for p in update.loads
                           if prune_before is None or p.load_time >= prune_before]
            con.execute("BEGIN TRANSACTION")
            try:
                afresh = [[scope.destination, scope.location, scope.dataset, u.table]
                          for u in updates if u.full]
                if afresh:
                    staging.load(con, "afresh", tuple((k, "VARCHAR") for k in KEY[:-1]),
                                 afresh)
                    for name in TABLES:
                        con.execute(DELETE_TABLES[name])
                if prune_before is not None:
                    doomed += [list(k) for k in con.execute(
                        "SELECT destination, location, dataset, tbl, load_id FROM loads"
                        " WHERE load_time < ?", [prune_before]).fetchall()]
                if doomed:
                    staging.load(con, "doomed", tuple((k, "VARCHAR") for k in KEY), doomed)
                    for name in TABLES:
                        con.execute(DELETE_LOADS[name])
                if staged:
                    staging.load_records(con, "staged_loads", STAGED_LOADS, staged)
                    where = [scope.destination, scope.location, scope.dataset]
                    for name in ("loads", "columns", "categories"):
                        _insert_staged(con, name, [*where, source] if name == "loads" else where)
                if totals:
                    staging.load(con, "fresh_totals", TOTALS, totals)
                    con.execute(DELETE_TOTALS)
                    con.execute("INSERT INTO totals SELECT * FROM fresh_totals")
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def drop_source(self, source: str) -> int:
        """Drop every profile the source `source` wrote; how many loads went."""
        if not self.path.exists():
            return 0

        def drop(con: Any) -> int:
            con.execute("BEGIN TRANSACTION")
            con.execute("CREATE OR REPLACE TEMP TABLE doomed AS SELECT destination, location,"
                        " dataset, tbl, load_id FROM loads WHERE source = ?", [source])
            found = con.execute("SELECT COUNT(*) FROM doomed").fetchone()
            for name in TABLES:
                con.execute(DELETE_LOADS[name])
            con.execute("DELETE FROM totals WHERE source = ?", [source])
            con.execute("COMMIT")
            return int(found[0]) if found else 0

        return self._session(drop)


def _migrate(con: Any, version: str) -> None:
    """Bring a store of an older schema version to this one, in one transaction."""
    con.execute("BEGIN TRANSACTION")
    while version in MIGRATIONS:
        for statement in MIGRATIONS[version]:
            con.execute(statement)
        version = str(int(version) + 1)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [version])
    con.execute("COMMIT")


def _insert_staged(con: Any, name: str, params: list[Any]) -> None:
    """Fill the store table `name` from the staged loads (`FROM_STAGED`)."""
    con.execute(FROM_STAGED[name], params)


def _staged(table: str, profile: LoadProfile) -> dict[str, Any]:
    """One load's record for `STAGED_LOADS`: its columns and their categories as parallel
    lists (the categories' left out where it has none). A `ColumnProfile` is a tuple of its
    fields, so the columns' lists are one transpose."""
    record: dict[str, Any] = {
        "tbl": table, "load_id": profile.load_id, "load_time": profile.load_time,
        "n_rows": profile.rows, "detailed": profile.detailed,
    }
    if not profile.columns:
        return record
    columns, non_null, distinct, low, high, categories, complete = zip(
        *profile.columns.values(), strict=True)
    record.update(col=columns, non_null=non_null, complete=complete,
                  has_categories=[c is not None for c in categories])
    # a counts-only load has none of these: a list left out unnests as NULLs beside the others
    for key, values in (("distinct_count", distinct), ("min_value", low), ("max_value", high)):
        if any(v is not None for v in values):
            record[key] = values
    if any(c is not None for c in categories):
        pairs = [(n, c) for n, c in zip(columns, categories, strict=True) if c is not None]
        record["cat_col"] = [name for name, values in pairs for _ in values]
        record["cat_value"] = [v for _, values in pairs for v in values]
        record["cat_n"] = [n for _, values in pairs for n in values.values()]
    return record
