"""Removal drift: one coverage aggregate per table, on the table's time axis."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlglot import exp

from dlt_contract_ops.context import SourceContext
from dlt_contract_ops.core.columns import ExpectedTable, LiveTable, TimeAxis
from dlt_contract_ops.core.removal import (
    DEFAULT_BASELINE_THRESHOLD,
    DEFAULT_BASELINE_WINDOW,
    DEFAULT_RECENT_THRESHOLD,
    DEFAULT_RECENT_WINDOW,
    WindowCounts,
    detect_dark_columns,
)
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.findings import Coverage, DriftFinding, ReconcileResult
from dlt_contract_ops.queries import axis_bound, coverage_query, reproduce_coverage_query
from dlt_contract_ops.sinks.emitter import Emitter

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_window(value: Any, key: str) -> timedelta:
    """`"6h"`, `"90m"`, `"7d"`, `"1w"`, `"30s"`, or a number of seconds.

    >>> parse_window("6h", "k")
    datetime.timedelta(seconds=21600)
    """
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return timedelta(seconds=float(value))
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", str(value))
    if not m or float(m.group(1)) <= 0:
        raise ConfigError(
            f"`{key}` = {value!r} is not a window: write a positive number with a unit, "
            'e.g. "6h", "90m", "7d" or "1w" (or a number of seconds).'
        )
    return timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2)])


def parse_threshold(value: Any, key: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if not 0.0 <= number <= 1.0:
        raise ConfigError(f"`{key}` = {value!r} must be a fraction between 0 and 1, e.g. 0.2.")
    return number


@dataclass(frozen=True)
class RemovalOptions:
    """Windows and thresholds of removal detection (defaults are the `DEFAULT_*` constants)."""

    recent_window: timedelta = DEFAULT_RECENT_WINDOW
    baseline_window: timedelta = DEFAULT_BASELINE_WINDOW
    baseline_threshold: float = DEFAULT_BASELINE_THRESHOLD
    recent_threshold: float = DEFAULT_RECENT_THRESHOLD
    now: datetime | None = None

    def merged(self, table: Mapping[str, Any], where: str) -> RemovalOptions:
        """Apply a `[...removal]` config table on top of these options."""
        allowed = {"recent_window", "baseline_window", "baseline_threshold", "recent_threshold"}
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise ConfigError(
                f"Unknown key(s) {', '.join(f'`{k}`' for k in unknown)} in `{where}`; "
                f"allowed: {', '.join(sorted(allowed))}."
            )
        def window(key: str, current: timedelta) -> timedelta:
            return parse_window(table[key], f"{where}.{key}") if key in table else current

        def threshold(key: str, current: float) -> float:
            return parse_threshold(table[key], f"{where}.{key}") if key in table else current

        return replace(
            self,
            recent_window=window("recent_window", self.recent_window),
            baseline_window=window("baseline_window", self.baseline_window),
            baseline_threshold=threshold("baseline_threshold", self.baseline_threshold),
            recent_threshold=threshold("recent_threshold", self.recent_threshold),
        )


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


def run_removal(ctx: SourceContext, emitter: Emitter, options: RemovalOptions) -> ReconcileResult:
    started = time.perf_counter()
    findings: list[DriftFinding] = []
    notes: list[str] = list(ctx.built.notes)
    now = options.now or datetime.now(timezone.utc)
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
            notes.append(message)
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
    return ctx.result("removal", started, findings, notes)
