"""Additive drift: live columns the model does not know, with samples and first sighting."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, cast

from dlt_contract_ops.core.additive import AdditiveDrift, detect_additive
from dlt_contract_ops.core.columns import ROW_ID, ExpectedTable, TimeAxis
from dlt_contract_ops.destinations.batch import Query
from dlt_contract_ops.destinations.jsonable import jsonable
from dlt_contract_ops.detection.detector import DetectorRun
from dlt_contract_ops.detectors.queries import (
    SAMPLES_PER_COLUMN,
    axis_bound,
    axis_time,
    sample_query,
)
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult

if TYPE_CHECKING:
    from dlt_contract_ops.destinations.execution import SqlClientAdapter


@dataclass
class _Plan:
    """One drifted table: its drift and the sample query that goes with its finding."""

    expected: ExpectedTable
    drift: AdditiveDrift
    axis: TimeAxis | None
    query: Query
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
        query = sample_query(table, drift.columns, axis, tiebreak=tiebreak, since=by_time,
                             max_rows=settings.sample_rows)
        since = _day_start(ctx.clock() - timedelta(seconds=settings.sample_window))
        params = [axis_bound(since, axis)] if by_time and axis is not None else []
        # the finding's `reproduce` is this very query: from the one render that runs, where
        # the adapter renders so (`destinations.rendered`), else rendered first, then handed
        # over to run (rendered in place, not copied again)
        ready, reproduce = (
            cast("SqlClientAdapter", ctx.adapter).with_reproduce(query, params)
            if ctx.adapter.capabilities.prepared_queries
            else (query, ctx.adapter.reproduce(query, params)))
        plans.append(_Plan(expected, drift, axis, ready, params, reproduce))

    # one sample query per drifted table, independent: the adapter renders each while the
    # one before it runs (or runs them on its pool)
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


def _day_start(moment: datetime) -> datetime:
    """Midnight UTC of `moment`'s day: the sample bound (and so the finding's `reproduce`)
    stays the same for a whole day instead of changing with every run."""
    return moment.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
