"""Which of a table's columns a profile sweep reads: the declared ones it has, and its time
axis when that is a column of its own."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from dlt_contract_ops.core.columns import DLT_PREFIX, ExpectedTable, LiveTable
from dlt_contract_ops.profiles.query import ProfiledColumn, kind_of

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput


def plan_columns(ctx: SourceInput, expected: ExpectedTable, live: LiveTable
                 ) -> list[ProfiledColumn]:
    """The declared columns the live table has, minus injected and dlt's own; plus the
    table's time axis when it is a column of its own (a configured `load_timestamp_column` or
    a partition column), unmonitored: removal sums its windows from its per-load range."""
    read = ctx.read_type
    ignored = ctx.ignored()
    codes = ctx.built.code_sets(expected)  # from the source cache: no build on a hit
    out = [
        ProfiledColumn(c.name, kind_of(read(live.columns[c.name].data_type)), codes.get(c.name))
        for c in sorted(expected.columns, key=lambda c: c.name)
        if live.has(c.name) and c.name not in ignored and not c.name.startswith(DLT_PREFIX)
    ]
    axis = ctx.axis(expected.table)
    if axis is None or axis.kind == "load_id":
        return out
    declared = next((c for c in out if c.name == axis.column), None)
    if declared is not None:  # a declared column: monitored, its range read in every profile
        return [replace(c, axis=True) if c is declared else c for c in out]
    kind = kind_of(read(live.columns[axis.column].data_type))
    if kind in ("time", "number"):
        out.append(ProfiledColumn(axis.column, kind, None, monitored=False, axis=True))
    return out
