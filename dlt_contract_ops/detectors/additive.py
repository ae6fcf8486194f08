"""Additive drift: live columns the model does not know, with samples and first sighting."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlglot import exp

from dlt_contract_ops.core.additive import AdditiveDrift, detect_additive
from dlt_contract_ops.core.columns import LOAD_ID, ROW_ID, ExpectedTable, TimeAxis
from dlt_contract_ops.destinations.execution import shaped
from dlt_contract_ops.destinations.jsonable import jsonable
from dlt_contract_ops.destinations.shapes import Shape, ShapedQuery
from dlt_contract_ops.detection.detector import DetectorRun
from dlt_contract_ops.detection.source_input import SourceInput
from dlt_contract_ops.detectors.queries import (
    SAMPLES_PER_COLUMN,
    axis_bound,
    axis_time,
    reproduce_samples_query,
    sample_query,
)
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult


@dataclass
class _Plan:
    """One drifted table: its drift, the sample query that goes with its finding, and the
    finding's `reproduce` (a plain SELECT of the sampled rows, not the sample query)."""

    expected: ExpectedTable
    drift: AdditiveDrift
    axis: TimeAxis | None
    query: exp.Expression | ShapedQuery
    params: list[Any]
    reproduce: str


def run_additive(run: DetectorRun) -> ReconcileResult:
    ctx, emitter, settings = run.ctx, run.emitter, run.source
    started = time.perf_counter()
    findings: list[DriftFinding] = []
    notes = list(ctx.notes) + ctx.time_axis_notes()
    failures: list[str] = []
    ignored = ctx.ignored()
    plans: list[_Plan] = []
    for expected, live in ctx.present_tables():
        notes.extend(ctx.unmodelled_nested_notes(expected, "additive"))
        drift = detect_additive(expected, live, ignored=ignored)
        if drift is None:
            continue
        axis = ctx.axis(expected.table)
        table = ctx.rows(expected.table)
        tiebreak = ROW_ID if live.has(ROW_ID) else None
        # bounded: the scan never grows with the table (the newest n rows; on dlt's load ids
        # and partitions also only rows this recent, which lets warehouses prune). A
        # configured timestamp column carries the producer's times, which may be old: it is
        # bounded by rows only, so an old backfill still shows its samples.
        by_time = axis is not None and axis.kind != "timestamp"
        query = _sample(ctx, expected, drift.columns, axis, tiebreak, by_time,
                        settings.sample_rows)
        since = _day_start(ctx.clock() - timedelta(seconds=settings.sample_window))
        params = [axis_bound(since, axis)] if by_time and axis is not None else []
        # what a person pastes: the sampled rows, read plainly (the same window and order)
        shown = reproduce_samples_query(
            table, drift.columns, axis, tiebreak, since=by_time,
            shown=[LOAD_ID] if live.has(LOAD_ID) else [],
            limit=min(SAMPLES_PER_COLUMN, settings.sample_rows))
        reproduce = ctx.adapter.reproduce(shown, params)
        plans.append(_Plan(expected, drift, axis, query, params, reproduce))

    # one sample query per drifted table, independent: the adapter renders each (once, in
    # place: built for this run alone) while the one before it runs (or runs them on its pool)
    outcomes = ctx.adapter.run_all(
        [(p.query, p.params) for p in plans], "sample", owned=True  # type: ignore[misc]
    ) if plans else []
    for plan, rows in zip(plans, outcomes, strict=True):
        expected, drift, axis = plan.expected, plan.drift, plan.axis
        samples: dict[str, list[Any]] = {c: [] for c in drift.columns}
        first_seen: dict[str, str] = {}
        sample_error: str | None = None
        if isinstance(rows, Exception):
            # the finding still ships, without samples; the failure goes to the error path
            sample_error = f"sample query for table `{expected.table}` failed: {rows}"
            failures.append(sample_error)
            emitter.error(ctx.error_event(sample_error, rows, expected.resource, "additive"))
        else:
            for row in rows:  # newest first
                for i, c in enumerate(drift.columns):
                    if row[i] is not None and len(samples[c]) < SAMPLES_PER_COLUMN:
                        samples[c].append(jsonable(row[i]))
            if rows and axis is not None:
                firsts = rows[0][len(drift.columns) + 1:]
                first_seen = {c: t for c, v in zip(drift.columns, firsts, strict=False)
                              for t in [axis_time(v, axis)] if t is not None}
        finding = ctx.finding(
            "additive",
            expected,
            drift.columns,
            column_types=dict(drift.column_types),
            samples=samples,
            first_seen=min(first_seen.values(), default=None),
            column_first_seen=first_seen or None,
            reproduce=plan.reproduce,
            sample_error=sample_error,
        )
        findings.append(finding)
        emitter.drift(finding)
    return ctx.result("additive", started, findings, notes, failures)


def _sample(
    ctx: SourceInput, expected: ExpectedTable, columns: Sequence[str], axis: TimeAxis | None,
    tiebreak: str | None, since: bool, max_rows: int,
) -> exp.Expression | ShapedQuery:
    """The table's sample query (`sample_query`), shaped where the adapter renders shapes:
    tables with as many drifted columns share one rendered template (`destinations.shapes`).
    Its names: the drifted columns, then the axis column and the tiebreak (those present).

    The query names its output columns after the drifted columns, while a template spells
    every name as the catalog does: it is shaped only where each name is spelled as it is
    named (else the two texts would differ). A nested table reads its rows through a join
    (`SourceInput.rows`), and a name that could take a helper alias (`_co_...`) shifts the
    aliases: these get their own tree too."""
    extra = [c for c in (axis.column if axis else None, tiebreak) if c]
    adapter = ctx.adapter
    if (expected.root or any("_co_" in n for n in (*columns, *extra))
            or not adapter.capabilities.prepared_queries
            or any(_spelled(adapter, expected.table, n) != n for n in (*columns, *extra))):
        return sample_query(ctx.rows(expected.table), columns, axis, tiebreak=tiebreak,
                            since=since, max_rows=max_rows)
    k = len(columns)

    def build(table: exp.Table, names: Sequence[str]) -> exp.Expression:
        rest = iter(names[k:])
        return sample_query(
            table, list(names[:k]), replace(axis, column=next(rest)) if axis else None,
            tiebreak=next(rest) if tiebreak else None, since=since, max_rows=max_rows)

    key = ("sample", k, axis.kind if axis else None, tiebreak is not None, since, max_rows)
    return shaped(adapter, Shape(key, build), expected.table, (*columns, *extra))


def _spelled(adapter: Any, table: str, name: str) -> str:
    """`name` as `prepare` spells it in `table` (the catalog's spelling, else `to_live`)."""
    found = adapter.catalog_column([table], name)
    return str(found[0]) if found is not None else str(adapter.to_live(name))


def _day_start(moment: datetime) -> datetime:
    """Midnight UTC of `moment`'s day: the sample bound (and so the finding's `reproduce`)
    stays the same for a whole day instead of changing with every run."""
    return moment.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
