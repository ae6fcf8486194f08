"""Removal drift: per table, non-NULL coverage of each declared column in a recent window
against a baseline window, on the table's time axis.

The windows are summed from the load profiles (`profiles.sweep`) where they answer exactly, so
a repeat sweep reads only the loads profiled since; else, and with `from_profiles = false`, ONE
coverage aggregate per table counts both windows.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from sqlglot import exp

from dlt_contract_ops.core.columns import LOAD_ID, ExpectedTable, LiveTable, TimeAxis
from dlt_contract_ops.core.profile_choice import served_by
from dlt_contract_ops.core.removal import (
    LoadCount,
    WindowCounts,
    detect_dark_columns,
    went_dark,
)
from dlt_contract_ops.core.timeaxis import Windows, load_id_iso
from dlt_contract_ops.destinations.execution import shaped
from dlt_contract_ops.destinations.shapes import Shape, ShapedQuery
from dlt_contract_ops.destinations.sql import col
from dlt_contract_ops.detection.detector import DetectorRun
from dlt_contract_ops.detection.rows import Rows
from dlt_contract_ops.detection.source_input import SourceInput
from dlt_contract_ops.detectors.queries import (
    axis_bound,
    coverage_query,
    reproduce_coverage_query,
)
from dlt_contract_ops.detectors.removal_windows import by_axis_range, by_load_id
from dlt_contract_ops.detectors.young import oldest_profiled, oldest_queried, young_note
from dlt_contract_ops.model.findings import Coverage, DriftFinding, ReconcileResult
from dlt_contract_ops.settings.project import SourceSettings


def window_counts(rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> WindowCounts:
    """Read the coverage query's rows (one per window, or per window and load, that has
    rows; see `coverage_query`).

    >>> window_counts([(1, 10, 0), (0, 20, 16)], ["actor_login"])
    WindowCounts(baseline_rows=20, recent_rows=10, baseline_non_null={'actor_login': 16}, \
recent_non_null={'actor_login': 0})
    """
    recent = [0] * (1 + len(columns))
    base = [0] * (1 + len(columns))
    for row in rows:  # a row per window, or per window and load (a `_dlt_load_id` axis)
        into = recent if int(row[0]) == 1 else base
        for i, v in enumerate(row[1:2 + len(columns)]):
            into[i] += int(v or 0)
    return WindowCounts(
        baseline_rows=base[0],
        recent_rows=recent[0],
        baseline_non_null={c: base[1 + i] for i, c in enumerate(columns)},
        recent_non_null={c: recent[1 + i] for i, c in enumerate(columns)},
    )


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat()


def _loads_queried(rows: Any, columns: Sequence[str]) -> dict[str, tuple[int, dict[str, int]]]:
    """Per load, from a coverage query grouped by load (its id in the last column)."""
    if isinstance(rows, Exception):
        return {}
    out: dict[str, tuple[int, dict[str, int]]] = {}
    for row in rows:
        rows_before, counts = out.get(str(row[-1]), (0, {}))
        out[str(row[-1])] = (rows_before + int(row[1] or 0), {
            c: counts.get(c, 0) + int(row[2 + i] or 0) for i, c in enumerate(columns)})
    return out


@dataclass
class _Plan:
    """One table's removal check: its columns, and how its windows are counted."""

    expected: ExpectedTable
    live: LiveTable
    axis: TimeAxis
    table: Rows
    columns: list[str]
    params: list[Any]
    #: counts summed from load profiles (None: every row comes from `query`)
    summed: WindowCounts | None = None
    #: the coverage aggregate still to run: the whole table, or only the loads that straddle a
    #: window's start (`summed` holds the rest); None when the profiles answered alone
    query: exp.Expression | ShapedQuery | None = None
    #: the oldest moment the load profiles know in the windows (a young table's note)
    oldest: datetime | None = None
    #: per load in the windows: (load id, rows, non-NULL per column), where the column went dark
    loads: dict[str, tuple[int, dict[str, int]]] | None = None


def _coverage_shape(axis: TimeAxis) -> Shape:
    """Every table's coverage aggregate on an axis of this kind: names are the axis column,
    then the counted columns (`destinations.shapes`: rendered once, filled in per table)."""
    return Shape(
        ("coverage", axis.kind),
        lambda table, names: coverage_query(table, names[1:], replace(axis, column=names[0])),
    )




def run_removal(run: DetectorRun) -> ReconcileResult:
    ctx, emitter, settings = run.ctx, run.emitter, run.source
    started = time.perf_counter()
    options = run.settings
    findings: list[DriftFinding] = []
    notes: list[str] = list(ctx.built.notes) + ctx.time_axis_notes()
    failures: list[str] = []
    windows = Windows.of(ctx.clock(), options)
    recent_start, baseline_start = windows.recent_start, windows.baseline_start
    ignored = ctx.ignored()
    plans: list[_Plan] = []
    for expected, live in ctx.present_tables():
        notes.extend(ctx.unmodelled_nested_notes(expected, "removal"))
        axis = ctx.axis(expected.table)
        if axis is None and expected.root:
            notes.append(
                f"nested table `{expected.table}`: no `_dlt_root_id` or `_dlt_parent_id` ties "
                f"its rows to a time axis of root table `{expected.root}`: removal skipped"
            )
            continue
        if axis is None:
            notes.append(
                f"table `{expected.table}`: no time column (no `load_timestamp_column`, no "
                "partition column, no `_dlt_load_id`): removal skipped. Set "
                "`load_timestamp_column` to enable it."
            )
            continue
        columns = sorted(
            c.name
            for c in expected.columns
            # a deprecated field is expected to go dark (`reconcile --suggest` marks one)
            if live.has(c.name) and c.name not in ignored and c.name != axis.column
            and not c.deprecated
        )
        if not columns:
            continue
        if expected.write_disposition == "replace":
            notes.append(
                f"table `{expected.table}` is loaded with `replace`: every load drops the "
                "baseline, so removal drift can only show within the latest load"
            )
        table = ctx.rows(expected.table)
        params = [axis_bound(recent_start, axis), axis_bound(baseline_start, axis)]
        # a child table's rows come joined to its root (not a table a template fills in)
        query = coverage_query(table, columns, axis) if expected.root else shaped(
            ctx.adapter, _coverage_shape(axis), expected.table, (axis.column, *columns))
        plans.append(_Plan(expected, live, axis, table, columns, params, query=query))

    if options.from_profiles and any(p.live.has(LOAD_ID) for p in plans):
        _sum_from_profiles(ctx, settings, plans, windows, notes, options.profiles_min_rows,
                           others=ctx.profiles_wanted(besides=run.detector))

    # every table's aggregate is independent: the adapter may run them concurrently; each
    # was built for this run alone, so it is handed over (rendered in place, not copied)
    pending = [p for p in plans if p.query is not None]
    outcomes = ctx.adapter.run_all(
        [(p.query, p.params) for p in pending], "coverage", owned=True  # type: ignore[misc]
    ) if pending else []
    queried = {id(p): rows for p, rows in zip(pending, outcomes, strict=True)}
    for plan in plans:
        expected, live, axis, table, columns, params = (
            plan.expected, plan.live, plan.axis, plan.table, plan.columns, plan.params)
        rows = queried.get(id(plan), [])
        if isinstance(rows, Exception):
            message = f"coverage query for table `{expected.table}` failed: {rows}"
            failures.append(message)
            emitter.error(ctx.error_event(message, rows, expected.resource, "removal"))
            continue
        counts = window_counts(rows, columns)
        if plan.summed is not None:
            counts = counts.plus(plan.summed)
        # (a `replace` table never has a baseline: its own note above says so)
        young = expected.write_disposition != "replace"
        if young and counts.baseline_rows == 0 and counts.recent_rows > 0:
            oldest = min((m for m in (plan.oldest, oldest_queried(rows, axis)) if m),
                         default=None)
            notes.append(young_note(expected.table, oldest, options.recent_window))
        dark = detect_dark_columns(
            counts,
            baseline_threshold=options.baseline_threshold,
            recent_threshold=options.recent_threshold,
        )
        if not dark:
            continue
        names = [d.name for d in dark]
        loads = dict(plan.loads or {})
        if axis.kind == "load_id":
            loads.update(_loads_queried(rows, columns))
        dark_since = {n: load_id_iso(went_dark(
            [LoadCount(load, total, counts.get(n, 0)) for load, (total, counts) in loads.items()],
            options.recent_threshold)) for n in names}
        known = sorted(v for v in dark_since.values() if v)
        finding = ctx.finding(
            "removal",
            expected,
            names,
            column_types={n: live.columns[n].data_type for n in names},
            samples={},
            # where it went dark (stable from run to run); without per-load counts (a time
            # column of the table's own and no load profiles) the recent window's start
            first_seen=known[0] if known else _iso(recent_start),
            column_first_seen={n: v for n, v in dark_since.items() if v} or None,
            reproduce=ctx.adapter.reproduce(reproduce_coverage_query(table, names, axis), params),
            coverage={
                d.name: Coverage(baseline=round(d.baseline, 6), recent=round(d.recent, 6))
                for d in dark
            },
        )
        findings.append(finding)
        emitter.drift(finding)
    return ctx.result("removal", started, findings, notes, failures)


def _sum_from_profiles(
    ctx: SourceInput, settings: SourceSettings, plans: Sequence[_Plan],
    windows: Windows, notes: list[str], min_rows: int | None = None, *, others: bool = False,
) -> None:
    """Sum each table's windows from its load profiles, so a repeat sweep reads only the
    loads not profiled yet. A table whose profiles cannot answer exactly keeps its full
    coverage query: profiling failed, a load in the windows lacks a column (the model gained
    it later), or retention is shorter than the windows. On a time axis of its own, a load
    whose range straddles a window's start is counted by a coverage query over those loads.
    A table on the `_dlt_load_id` axis too small for profiles to pay (`core.profile_choice`)
    keeps its coverage query and is not profiled this run, unless `others` (another detector
    of the run reads the profiles: they are swept anyway)."""
    from dlt_contract_ops.profiles.shared import shared_profiles, store_notes

    if windows.baseline_start.timestamp() < windows.now.timestamp() - settings.profile_retention:
        notes.append(
            "`profile_retention` is shorter than removal's windows: removal scans both windows "
            "of every table (`from_profiles` needs retention >= recent + baseline window)"
        )
        return
    scan = _scanned(ctx, plans, min_rows, others)
    if all(p.expected.table in scan for p in plans):
        return  # no profile query, no store read or write
    try:
        profiled = {t.expected.table: t
                    for t in shared_profiles(ctx, settings, detailed=False, skip=scan)}
    except Exception as exc:  # the store failed (lock, file): scan as without profiles
        notes.append(f"load profiles unavailable ({exc}): removal scanned both windows")
        return
    notes += store_notes(ctx)
    for plan in plans:
        t = profiled.get(plan.expected.table)
        if t is None or t.error is not None:
            continue  # no load ids, or its profile query failed: the full coverage query
        if t.shrunk and plan.expected.write_disposition != "replace":
            notes.append(overwritten_note(plan.expected, t.shrunk))
        if plan.axis.kind == "load_id":
            split = by_load_id(t.history, plan.columns, windows.recent_load_id,
                               windows.baseline_load_id)
        else:
            split = by_axis_range(t.history, plan.columns, plan.axis.column,
                                  windows.recent_start, windows.baseline_start,
                                  None if t.read is None else t.read.covers)
        if split is None:
            continue
        plan.summed, straddling = split
        plan.oldest = oldest_profiled(t.history, plan.axis, windows.baseline_start)
        since = windows.baseline_load_id
        plan.loads = {load.load_id: (load.rows, {c: load.columns[c].non_null for c in
                                                 plan.columns if c in load.columns})
                      for load in t.history if load.load_id >= since}
        if not straddling:
            plan.query = None
            continue
        assert plan.query is not None
        if isinstance(plan.query, ShapedQuery):
            plan.query = plan.query.expression(ctx.adapter)  # type: ignore[arg-type]
        plan.query = plan.query.where(  # type: ignore[attr-defined]
            exp.In(this=col(LOAD_ID), expressions=[exp.Placeholder() for _ in straddling]),
            copy=True,
        )
        plan.params = [*plan.params, *straddling]


def _scanned(
    ctx: SourceInput, plans: Sequence[_Plan], min_rows: int | None, needed: bool
) -> frozenset[str]:
    """The tables a scan serves cheaper than profiles (`core.profile_choice`): on the
    `_dlt_load_id` axis only, where the scan groups by load and so gives the same findings
    (`dark_since` included); a time column of the table's own keeps its profiles. `needed`:
    another detector of the run reads the profiles."""
    prune = ctx.adapter.capabilities.load_prune_rows
    return frozenset(
        p.expected.table for p in plans
        if p.axis.kind == "load_id" and served_by(
            p.live.estimated_rows, min_rows=min_rows, prune_rows=prune,
            profiles_needed=needed) == "scan")


def overwritten_note(expected: ExpectedTable, shrunk: Mapping[str, int]) -> str:
    """What rows of earlier loads gone since the last sweep mean for removal (`shrunk`: load
    id -> rows lost)."""
    lost = f"{len(shrunk)} earlier load(s) lost {sum(shrunk.values())} row(s) since the last sweep"
    if expected.write_disposition == "merge":
        return (
            f"table `{expected.table}` (merge): {lost}, overwritten by upserts of the same keys "
            "(each row is kept under the load that wrote it last): removal compares only the "
            "rows that remain, so the baseline holds only keys not loaded since, and a column "
            "that went dark in overwritten rows is not seen"
        )
    # the disposition a run used is not in the model (`run(write_disposition=...)`)
    return (
        f"table `{expected.table}`: {lost} (a merge's upserts overwrote the same keys, or rows "
        "were deleted or re-stamped outside dlt): removal compares only the rows that remain, "
        "so a column that went dark in the rows that are gone is not seen"
    )
