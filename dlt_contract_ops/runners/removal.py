"""Removal drift: one coverage aggregate per table, on the table's time axis."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from sqlglot import exp

from dlt_contract_ops.context import SourceContext
from dlt_contract_ops.core.columns import ExpectedTable, LiveTable, TimeAxis
from dlt_contract_ops.core.removal import WindowCounts, detect_dark_columns
from dlt_contract_ops.findings import Coverage, DriftFinding, ReconcileResult
from dlt_contract_ops.queries import axis_bound, coverage_query, reproduce_coverage_query
from dlt_contract_ops.settings.project import SourceSettings
from dlt_contract_ops.sinks.emitter import Emits


def window_counts(rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> WindowCounts:
    """Read the coverage query's rows (one per window that has rows; see `coverage_query`).

    >>> window_counts([(1, 10, 0), (0, 20, 16)], ["actor_login"])
    WindowCounts(baseline_rows=20, recent_rows=10, baseline_non_null={'actor_login': 16}, \
recent_non_null={'actor_login': 0})
    """
    by_window = {int(row[0]): [int(v or 0) for v in row[1:]] for row in rows}
    empty = [0] * (1 + len(columns))
    recent = by_window.get(1, empty)
    base = by_window.get(0, empty)
    return WindowCounts(
        baseline_rows=base[0],
        recent_rows=recent[0],
        baseline_non_null={c: base[1 + i] for i, c in enumerate(columns)},
        recent_non_null={c: recent[1 + i] for i, c in enumerate(columns)},
    )


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat()


def run_removal(
    ctx: SourceContext, emitter: Emits, settings: SourceSettings
) -> ReconcileResult:
    started = time.perf_counter()
    options = settings.removal
    findings: list[DriftFinding] = []
    notes: list[str] = list(ctx.built.notes) + ctx.time_axis_notes()
    failures: list[str] = []
    now = ctx.now or datetime.now(timezone.utc)
    recent_start = now - options.recent_window
    baseline_start = recent_start - options.baseline_window
    ignored = ctx.ignored()
    plans: list[tuple[ExpectedTable, LiveTable, TimeAxis, exp.Table, list[str], list[Any]]] = []
    for expected, live in ctx.present_tables():
        nested = sorted(t for t in ctx.live if t.startswith(expected.table + "__"))
        if nested:
            notes.append(
                f"nested table(s) {', '.join(f'`{t}`' for t in nested)} of resource "
                f"`{expected.resource}`: not windowed (no `_dlt_load_id`; the model describes "
                "the root table only): skipped"
            )
        axis = ctx.axis(expected.table)
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
            if live.has(c.name) and c.name not in ignored and c.name != axis.column
        )
        if not columns:
            continue
        if expected.write_disposition == "replace":
            notes.append(
                f"table `{expected.table}` is loaded with `replace`: every load drops the "
                "baseline, so removal drift can only show within the latest load"
            )
        table = ctx.adapter.table(expected.table)
        params = [axis_bound(recent_start, axis), axis_bound(baseline_start, axis)]
        plans.append((expected, live, axis, table, columns, params))

    # every table's aggregate is independent: the adapter may run them concurrently
    outcomes = ctx.adapter.run_all(
        [(coverage_query(table, columns, axis), params)
         for _, _, axis, table, columns, params in plans],
        "coverage",
    )
    for (expected, live, axis, table, columns, params), rows in zip(plans, outcomes, strict=True):
        if isinstance(rows, Exception):
            message = f"coverage query for table `{expected.table}` failed: {rows}"
            failures.append(message)
            emitter.error(ctx.error_event(message, rows, expected.resource, "removal"))
            continue
        counts = window_counts(rows, columns)
        dark = detect_dark_columns(
            counts,
            baseline_threshold=options.baseline_threshold,
            recent_threshold=options.recent_threshold,
        )
        if not dark:
            continue
        names = [d.name for d in dark]
        finding = ctx.finding(
            "removal",
            expected,
            names,
            column_types={n: live.columns[n].data_type for n in names},
            samples={},
            first_seen=_iso(recent_start),
            reproduce=ctx.adapter.reproduce(reproduce_coverage_query(table, names, axis), params),
            coverage={
                d.name: Coverage(baseline=round(d.baseline, 6), recent=round(d.recent, 6))
                for d in dark
            },
        )
        findings.append(finding)
        emitter.drift(finding)
    return ctx.result("removal", started, findings, notes, failures)
