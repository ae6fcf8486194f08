"""What a loaded table's data says about its columns, for `models infer`: NULLs, a text
column's few distinct values (a code set), and the observed range.

ONE aggregate per table (rows; per column its non-NULL count, a text column's distinct
count, an ordered column's MIN and MAX), and, only for a table with a text column whose
distinct count qualifies as a code set, ONE query for those columns' values. Built as sqlglot
expressions and run through the adapter's one renderer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlglot import exp

from dlt_contract_ops.destinations.protocol import DestinationAdapter
from dlt_contract_ops.destinations.sql import col
from dlt_contract_ops.infer.fields import ColumnFacts
from dlt_contract_ops.settings.infer import DEFAULT_CODE_SET_MAX_VALUES, DEFAULT_CODE_SET_MIN_ROWS

#: dlt data types whose MIN and MAX every destination orders (the range comment)
ORDERED = frozenset({"bigint", "double", "decimal", "date", "time", "timestamp"})


def facts_query(
    table: exp.Table, columns: Sequence[tuple[str, str | None]], load_column: str | None = None
) -> exp.Select:
    """`COUNT(*)`, `MAX(load_column)` (dlt's `_dlt_load_id` of a root table: the newest
    load; NULL without one), then per (column, dlt data type): `COUNT(c)`, and
    `COUNT(DISTINCT c)` for text, `MIN(c)`, `MAX(c)` for an ordered type (`ORDERED`)."""
    newest = exp.Max(this=col(load_column)) if load_column else exp.null()
    select: list[exp.Expr] = [exp.Count(this=exp.Star()), newest]
    for name, data_type in columns:
        select.append(exp.Count(this=col(name)))
        if data_type == "text":
            select.append(exp.Count(this=exp.Distinct(expressions=[col(name)])))
        if data_type in ORDERED:
            select += [exp.Min(this=col(name)), exp.Max(this=col(name))]
    return exp.select(*select).from_(table)


def values_query(table: exp.Table, columns: Sequence[str]) -> exp.Select | exp.Union:
    """The distinct non-NULL values of `columns`, as text, each row `(column position, value)`:
    one `UNION ALL` over the columns."""
    parts: list[exp.Select] = []
    for i, name in enumerate(columns):
        value = exp.Cast(this=col(name), to=exp.DataType.build("text"))
        parts.append(
            exp.select(exp.Literal.number(i), value).from_(table.copy())
            .where(exp.Not(this=exp.Is(this=col(name), expression=exp.null())))
            .group_by(col(name))
        )
    query: exp.Select | exp.Union = parts[0]
    for part in parts[1:]:
        query = exp.union(query, part, distinct=False)
    return query


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def table_facts(
    adapter: DestinationAdapter,
    table: str,
    columns: Sequence[Mapping[str, Any]],
    *,
    code_set_max_values: int = DEFAULT_CODE_SET_MAX_VALUES,
    code_set_min_rows: int = DEFAULT_CODE_SET_MIN_ROWS,
    load_column: str | None = None,
) -> tuple[dict[str, ColumnFacts], str | None]:
    """Per column of `table` (live names: dlt's stored ones), what its data shows; and the
    newest value of `load_column` (dlt's load id of a root table)."""
    typed = [(str(c["name"]), c.get("data_type")) for c in columns]
    query = facts_query(adapter.table(table), typed, load_column)
    [row] = adapter.run(query, [], "coverage", owned=True)
    values = iter(row)
    rows = int(next(values))
    newest = _text(next(values))
    facts: dict[str, ColumnFacts] = {}
    candidates: list[str] = []
    for name, data_type in typed:
        present = int(next(values))
        distinct = int(next(values)) if data_type == "text" else None
        low = high = None
        if data_type in ORDERED:
            low, high = _text(next(values)), _text(next(values))
        facts[name] = ColumnFacts(rows, rows - present, None, low, high)
        # one value is a constant, not a vocabulary
        if (distinct is not None and 1 < distinct <= code_set_max_values
                and present >= code_set_min_rows):
            candidates.append(name)
    if candidates:
        seen: dict[int, set[str]] = {}
        values_of = values_query(adapter.table(table), candidates)
        for position, value in adapter.run(values_of, [], "coverage", owned=True):
            seen.setdefault(int(position), set()).add(str(value))
        for i, name in enumerate(candidates):
            old = facts[name]
            facts[name] = ColumnFacts(old.rows, old.nulls, tuple(sorted(seen.get(i, ()))),
                                      old.low, old.high)
    return facts, newest
