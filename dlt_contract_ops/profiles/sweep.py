"""Profile a source's root tables: new loads and the recent window's, rewrites re-profiled.

Per table: ONE profile query (the loads of the recent window and the new ones, read again on
every sweep (`profiles.refresh`), in a detailed sweep the newest stored load too unless a newer
load of the source came, plus the whole table's row count; one more where the newer loads
brought the table no rows: `_current_too`), ONE category
query when it has categorical columns, and, only for a table whose earlier loads were
rewritten (merge, replace, refresh, a delete), ONE profile query of every load within
retention (+ its category query). Every table's new loads and row total are stored in one
transaction at the end. Nothing is written to the destination: every query goes through the
adapter's read-only renderer.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from dlt_contract_ops.core.columns import LOAD_ID, ExpectedTable
from dlt_contract_ops.core.distribution import DistributionRule, window
from dlt_contract_ops.core.load_profile import LoadProfile, SummedLoads
from dlt_contract_ops.core.timeaxis import Windows, load_id_text
from dlt_contract_ops.destinations.execution import shaped
from dlt_contract_ops.destinations.shapes import Shape, ShapedQuery
from dlt_contract_ops.profiles.loads import MAX_LISTED, completed_loads
from dlt_contract_ops.profiles.plan import plan_columns
from dlt_contract_ops.profiles.query import (
    Bound,
    ProfiledColumn,
    category_plan,
    category_query,
    profile_layout,
    profile_query,
    read_categories,
    read_profiles,
)
from dlt_contract_ops.profiles.refresh import Reread, covered_rows, refresh, reread
from dlt_contract_ops.profiles.store import ProfileStore, Scope, TableUpdate, Thin, default_store

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput
    from dlt_contract_ops.settings.project import SourceSettings

log = logging.getLogger("dlt_contract_ops")
#: a declared code set's values collected per load at most (beyond: the most frequent)
MAX_DECLARED_VALUES = 1000


@dataclass
class TableProfiles:
    """One root table after a sweep: every stored load (oldest first), what was queried."""

    expected: ExpectedTable
    table: exp.Table
    columns: list[ProfiledColumn]
    history: list[LoadProfile] = field(default_factory=list)
    #: the table's whole row count: as the last sweep saw it, then as this one did
    total: int | None = None
    new_loads: int = 0
    rewritten: bool = False
    error: Exception | None = None
    #: the loads this sweep read from the warehouse (the others are the store's); None
    #: before a sweep
    read: Reread | None = None
    #: stored loads that lost rows since the last sweep (load id -> rows gone): a merge's
    #: upserts, a delete or a re-stamp moved them (`profiles.refresh`)
    shrunk: dict[str, int] = field(default_factory=dict)
    #: loads in the history without their columns, which the store summed (`thin`); None: none
    summed: SummedLoads | None = None

    @property
    def codes(self) -> dict[str, tuple[str, ...]]:
        return {c.name: c.codes for c in self.columns if c.codes is not None}

    @property
    def monitored(self) -> list[LoadProfile]:
        """The history without the columns profiled only for removal's windows (the time
        axis): what the distribution rule compares and `profile` shows."""
        hidden = {c.name for c in self.columns if not c.monitored}
        if not hidden:
            return self.history
        return [replace(p, columns={k: v for k, v in p.columns.items() if k not in hidden})
                for p in self.history]


def store_of(settings: SourceSettings, lock_timeout: float = 30.0) -> ProfileStore:
    """The configured profile store, else the default one in dlt's data dir."""
    path = settings.profile_store or default_store()
    return ProfileStore(path, lock_timeout)


def scope_of(ctx: SourceInput) -> Scope:
    return Scope(ctx.target.destination_type, ctx.adapter.location, ctx.adapter.dataset)


def _with_categories(
    ctx: SourceInput, t: TableProfiles, loads: list[LoadProfile], max_categories: int
) -> list[LoadProfile]:
    plan = category_plan(loads, t.columns, max_categories)
    if not plan:
        return loads
    query, params = category_query(t.table, plan)
    values = read_categories(ctx.adapter.run(query, params, "profile", owned=True), plan)
    out = []
    for p in loads:
        cols = dict(p.columns)
        for c, load_ids in plan:
            if p.load_id not in load_ids:
                continue
            counts = values.get((p.load_id, c.name), {})
            limit = MAX_DECLARED_VALUES if c.codes is not None else max_categories
            complete = len(counts) <= limit
            if not complete and c.codes is None:
                continue  # more values than the approximate count said: not categorical here
            top = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])
            cols[c.name] = cols[c.name]._replace(categories=top, complete=complete)
        out.append(replace(p, columns=cols))
    return out


#: sweeps holding the cycle collector off now (threads of one process), and whether it ran
#: before the first of them
_PAUSED = {"sweeps": 0, "was": False}
_PAUSE_LOCK = threading.Lock()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector held off while a sweep makes its profiles, then set back as
    it was before the first such sweep of the process began. A first sweep of hourly loads
    makes one `ColumnProfile` per (load, column), 288,000 at 50 tables, none of them in a
    cycle; meanwhile the collector ran about 600 times, three of them over the whole heap
    (dlt, sqlglot and Pydantic included): about 0.5 s of a 4 s sweep. What the sweep leaves
    in cycles is collected after it."""
    with _PAUSE_LOCK:
        if _PAUSED["sweeps"] == 0:
            _PAUSED["was"] = gc.isenabled()
            gc.disable()
        _PAUSED["sweeps"] += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _PAUSED["sweeps"] -= 1
            if _PAUSED["sweeps"] == 0 and _PAUSED["was"]:
                gc.enable()


def profile_source(
    ctx: SourceInput, settings: SourceSettings, store: ProfileStore | None = None, *,
    detailed: bool = True, skip: frozenset[str] = frozenset(), notes: list[str] | None = None,
    thin: frozenset[str] = frozenset(),
) -> list[TableProfiles]:
    """Profile every root table of the source with a `_dlt_load_id`; store the new loads.

    The first sweep of a table profiles the loads within `profile_retention`, and so does a
    sweep of a table whose row total the store lacks (a store of an older version); later
    sweeps the loads of removal's recent window and the new ones (`profiles.refresh`), a
    `detailed` one the newest load too (`_current_too`), plus the table's row count, which shows a
    rewrite: the count less the loads read differs from the stored total less their stored
    rows.

    Not `detailed`: counts only (what removal sums); `detailed` (the distribution detector):
    distinct counts, ranges and categories too, and loads an earlier counts-only sweep stored
    are profiled in detail where the rule will compare them. The tables in `skip` (removal
    scans them: `core.profile_choice`) are neither queried nor stored. What the store had to
    say (a broken store set aside: `ProfileStore.notes`) goes to `notes`. Not `detailed`, the
    stored loads before the recent window of the tables in `thin` (removal on `_dlt_load_id`)
    come without their columns, which the store sums (`TableProfiles.summed`)."""
    with _collector_paused():
        return _profile_source(ctx, settings, store, detailed, skip, notes, thin)


def _profile_source(
    ctx: SourceInput, settings: SourceSettings, store: ProfileStore | None, detailed: bool,
    skip: frozenset[str], notes: list[str] | None, thin: frozenset[str],
) -> list[TableProfiles]:
    store = store or store_of(settings)
    scope = scope_of(ctx)
    rule = settings.distribution
    windows = Windows.of(ctx.clock(), settings.removal)
    cutoff = windows.now.timestamp() - settings.profile_retention
    since = load_id_text(cutoff)
    fresh_from = max(since, windows.recent_load_id)
    tables: list[TableProfiles] = []
    for expected, live in ctx.present_tables():
        if not live.has(LOAD_ID) or expected.table in skip:
            continue
        columns = plan_columns(ctx, expected, live)
        tables.append(TableProfiles(expected, ctx.adapter.table(expected.table), columns))
    lean = None if detailed else Thin(thin, windows.baseline_load_id, fresh_from)
    stored = store.read(scope, [t.expected.table for t in tables], lean)
    for t in tables:
        t.history = stored.histories[t.expected.table]
        t.total = stored.totals.get(t.expected.table)
        t.summed = stored.sums.get(t.expected.table)

    def incremental(t: TableProfiles) -> bool:
        return bool(t.history) and t.total is not None

    whole_loads(store, scope, [t for t in tables if not incremental(t)])  # profiled afresh

    # a repeat sweep reads its loads by id (`profiles.loads`): one query for every table
    completed = completed_loads(ctx, since) if any(map(incremental, tables)) else None
    ids = None if completed is None else list(completed)
    own = [i for i, schema in (completed or {}).items() if schema == ctx.built.schema_name]

    def bounds(t: TableProfiles) -> Reread:
        if not incremental(t):
            return Reread("since", since)
        # a detailed sweep reads the newest stored load again whatever its age (the
        # distribution rule's current load) unless a newer load of the source's schema is
        # listed; where that one brought the table no rows, `_current_too` reads it after
        last = t.history[-1].load_id
        read = reread(t.history, fresh_from, newest=detailed and not any(i > last for i in own))
        listed = read if ids is None else read.among(ids)
        return listed if len(listed.ids or ()) <= MAX_LISTED else read

    def query_of(
        t: TableProfiles, read: Reread
    ) -> tuple[exp.Expression | ShapedQuery, list[Any]]:
        # every table is counted, append too: the disposition a run used is not in the model
        # (dlt takes it from `run(write_disposition=...)` as well), a refresh may drop loads
        if read.ids is not None:
            return _profile(ctx, t, bound="loads", detailed=detailed, loads=len(read.ids),
                            count_row=True), list(read.ids)
        return _profile(ctx, t, bound=read.bound, detailed=detailed, count_row=True), [read.param]

    # every query is built for this run alone: handed over, rendered in place. A shaped
    # query goes only to an adapter that renders shapes (`_profile`). A table with no load to
    # read again (counts only, none in the recent window, none new) is not queried: its
    # stored total stands (a rewrite comes with a load)
    reads = [bounds(t) for t in tables]
    asked = [(t, read) for t, read in zip(tables, reads, strict=True) if read.ids != ()]
    done = iter(ctx.adapter.run_all(
        [query_of(t, read) for t, read in asked], "profile", owned=True))  # type: ignore[misc]
    outcomes = [next(done) if read.ids != () else [(None, t.total)]
                for t, read in zip(tables, reads, strict=True)]
    updates: dict[str, TableUpdate] = {}
    for t, read, rows in zip(tables, reads, outcomes, strict=True):
        full = not incremental(t) and bool(t.history)  # stored loads but no total: afresh
        try:
            if isinstance(rows, Exception):
                raise rows
            loads, total = read_profiles(rows, t.columns, detailed)
            before = (t.total or 0) - covered_rows(t.history, read)
            if incremental(t) and (total or 0) - sum(p.rows for p in loads) != before:
                # rows of loads before those read changed (merge, replace, refresh, delete,
                # re-stamp): afresh
                t.rewritten = full = True
                read = Reread("since", since)
                whole_loads(store, scope, [t])
                query, params = query_of(t, read)
                rerun = ctx.adapter.run(query, params, "profile", owned=True)  # type: ignore[arg-type]
                loads, total = read_profiles(rerun, t.columns, detailed)
            if detailed:
                if incremental(t) and not full:
                    loads, read = _current_too(ctx, t, loads, read)
                loads = _with_categories(ctx, t, loads, rule.max_categories)
        except Exception as exc:  # this table only: the others are profiled
            t.error = exc
            continue
        known = {p.load_id for p in t.history}
        t.new_loads = sum(p.load_id not in known for p in loads)
        merged = refresh(t.history, loads, read)
        t.read, t.shrunk, t.history = read, merged.shrunk, merged.history
        # afresh: every load within retention is written again (the stored ones are deleted)
        written = [p for p in merged.history if read.covers(p.load_id)] if full \
            else merged.changed
        if written or merged.dropped or full or total != t.total:
            updates[t.expected.table] = TableUpdate(t.expected.table, written, full, total,
                                                    merged.dropped)
        t.total = total
    if detailed:
        detail_loads(ctx, settings, tables, updates)
    store.write(scope, ctx.name, list(updates.values()), prune_before=cutoff)
    if notes is not None:
        notes.extend(store.notes)
    for t in tables:
        t.history = [p for p in t.history if p.load_time >= cutoff]
    return tables


def whole_loads(store: ProfileStore, scope: Scope, tables: Sequence[TableProfiles]) -> None:
    """The loads a thin read left without their columns, read whole (`ProfileStore.whole`):
    what `refresh` merges with the loads read again, and what a reader of columns needs."""
    whole = store.whole(scope, {t.expected.table: (t.history, t.summed) for t in tables
                                if t.summed is not None})
    for t in tables:
        t.history, t.summed = whole.get(t.expected.table, t.history), None


def _current_too(
    ctx: SourceInput, t: TableProfiles, loads: list[LoadProfile], read: Reread
) -> tuple[list[LoadProfile], Reread]:
    """The loads a detailed sweep read, and what it read, with the newest stored load read
    again where the sweep neither read it nor found a newer load of the table (the source's
    new loads brought it no rows): it is still the distribution rule's current load. One
    more profile query, for such a table alone."""
    last = t.history[-1].load_id
    if read.covers(last) or any(p.load_id > last for p in loads):
        return loads, read
    query = _profile(ctx, t, bound="loads", loads=1)
    again, _ = read_profiles(ctx.adapter.run(query, [last], "profile", owned=True),  # type: ignore[arg-type]
                             t.columns)
    ids = None if read.ids is None else (last, *read.ids)
    return sorted([*loads, *again], key=lambda p: p.load_id), Reread("since", last, ids)


def _profile(
    ctx: SourceInput, t: TableProfiles, *, bound: Bound, detailed: bool = True,
    loads: int = 0, count_row: bool = False,
) -> exp.Expression | ShapedQuery:
    """The table's profile query (`profile_query`): a shaped query where the adapter renders
    shapes, so tables whose columns are laid out alike share one rendered template
    (`destinations.shapes`). Its names: the load id column, then the profiled columns."""
    caps = ctx.adapter.capabilities
    columns = t.columns

    def build(table: exp.Table, names: Sequence[str]) -> exp.Expression:
        named = [replace(c, name=n) for c, n in zip(columns, names[1:], strict=True)]
        return profile_query(table, named, caps.approximate_distinct, bound=bound,
                             detailed=detailed, loads=loads, count_row=count_row,
                             load_id=names[0])

    key = ("profile", caps.dialect, bound, detailed, loads, count_row, profile_layout(columns))
    return shaped(ctx.adapter, Shape(key, build), t.expected.table,
                  (LOAD_ID, *(c.name for c in columns)))


def _undetailed(t: TableProfiles, rule: DistributionRule, current: bool = False
                ) -> list[LoadProfile]:
    """The loads of `t` the distribution rule compares (`compare.window`) that were profiled
    with counts only; with `current`, its current load whatever it holds (a counts-only
    sweep did not read it again, or kept the stored detail where the counts matched)."""
    w = window(t.history, rule)
    if w is None:
        return []
    return [p for p in (*w.baseline, w.current) if not p.detailed or (current and p is w.current)]


def detail_loads(
    ctx: SourceInput, settings: SourceSettings, tables: Sequence[TableProfiles],
    updates: dict[str, TableUpdate], current: bool = False,
) -> None:
    """Profile in detail the loads a counts-only sweep stored that the distribution rule
    compares (`current`: and its current load, after a counts-only sweep): one profile query
    per table over those loads (`_dlt_load_id IN (...)`), one category query. Their updates
    join `updates` (one store write for the sweep)."""
    rule = settings.distribution
    todo = [(t, stale) for t in tables
            if t.error is None and (stale := _undetailed(t, rule, current))]
    if not todo:
        return
    batch = [
        (_profile(ctx, t, bound="loads", loads=len(stale)), [p.load_id for p in stale])
        for t, stale in todo
    ]
    outcomes = ctx.adapter.run_all(batch, "profile", owned=True)  # type: ignore[arg-type]
    for (t, _), rows in zip(todo, outcomes, strict=True):
        try:
            if isinstance(rows, Exception):
                raise rows
            loads, _ = read_profiles(rows, t.columns)
            loads = _with_categories(ctx, t, loads, rule.max_categories)
        except Exception as exc:  # this table only
            t.error = exc
            continue
        fresh = {p.load_id: p for p in loads}
        t.history = [fresh.get(p.load_id, p) for p in t.history]
        known = updates.get(t.expected.table)
        if known is None:
            updates[t.expected.table] = TableUpdate(t.expected.table, loads)
        else:
            merged = {p.load_id: p for p in known.loads} | fresh
            updates[t.expected.table] = TableUpdate(
                t.expected.table, sorted(merged.values(), key=lambda p: p.load_id), known.full,
                known.total)

