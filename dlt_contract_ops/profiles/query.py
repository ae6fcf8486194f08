"""The profile queries, as sqlglot expressions the adapter renders and runs.

Per table and sweep, ONE profile query grouped by `_dlt_load_id`: rows, and per declared
column its non-NULL count, approximate distinct count and (numbers, times) min and max, for
the loads of the recent window and those after the last profiled one, with the distribution
detector the last profiled one too where no newer load came (`profiles.refresh`; a bound
parameter, so a warehouse partitioned or clustered on the load id prunes). A sweep without
the distribution detector reads counts only (what removal sums); the distribution detector
profiles those loads in detail when it first compares them. The same query carries
one more row, `UNION ALL`ed: the whole table's row count. Less the loads' rows it must equal
the count the last sweep saw less their stored rows, else a merge, replace, refresh or delete
changed earlier rows (dlt never adds rows to an earlier load). An
unfiltered `COUNT(*)` reads no column: BigQuery and Snowflake answer it from metadata, DuckDB
from its row groups, where counting the profiled loads by load id read that whole column.

Category shares need the values themselves, grouped by (load, column, value). They cannot
ride in the profile query's `GROUP BY _dlt_load_id` without one `COUNT(CASE ...)` per value
known beforehand, and which columns are categorical is only known after the distinct counts
came back. So a table with categorical columns gets ONE second query: a `UNION ALL` of one
grouped branch per categorical column, each bounded to the loads in which it is categorical
(`_dlt_load_id IN (...)`), so no branch returns more than about `max_categories` rows per load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, Literal

from sqlglot import exp

from dlt_contract_ops.core.columns import LOAD_ID
from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile
from dlt_contract_ops.destinations.sql import col

ColumnKind = Literal["number", "time", "category", "other"]


@dataclass(frozen=True)
class ProfiledColumn:
    """A declared column to profile: its name as stored, what kind of values it holds, and
    its model's code set (`Literal`/`Enum`), if any."""

    name: str
    kind: ColumnKind
    codes: tuple[str, ...] | None = None
    #: False for a table's time axis profiled only for removal's windows (its non-NULL count
    #: and range): not compared by the distribution rule, no distinct count
    monitored: bool = True
    #: the table's time axis (a column of its own): its range is read in every profile, a
    #: counts-only one too, since removal sums its windows from it
    axis: bool = False

    @property
    def range_read(self) -> bool:
        """Whether a counts-only profile still reads its min and max."""
        return self.ranged and (self.axis or not self.monitored)

    @property
    def ranged(self) -> bool:
        return self.kind in ("number", "time")

    @property
    def counted(self) -> bool:
        """Whether its distinct count is read (not for json and binary values)."""
        return self.monitored and (self.kind != "other" or self.codes is not None)


def kind_of(dlt_type: str | None) -> ColumnKind:
    """How a dlt data type is profiled.

    >>> [kind_of(t) for t in ("bigint", "timestamp", "text", "json")]
    ['number', 'time', 'category', 'other']
    """
    if dlt_type in ("bigint", "double", "decimal", "wei"):
        return "number"
    if dlt_type in ("timestamp", "date", "time"):
        return "time"
    if dlt_type in ("text", "bool"):
        return "category"
    return "other"


def approx_distinct(column: str, approximate: bool) -> exp.Expression:
    """The destination's own approximate distinct count where it has one (the adapter's
    `capabilities.approximate_distinct`), else an exact `COUNT(DISTINCT ...)` (PostgreSQL,
    SQLite and MySQL have none)."""
    if approximate:
        return exp.ApproxDistinct(this=col(column))
    return exp.Count(this=exp.Distinct(expressions=[col(column)]))


def _aggregates(
    columns: Sequence[ProfiledColumn], approximate: bool, detailed: bool = True
) -> list[exp.Expression]:
    """`COUNT(*)`, then per column its non-NULL count and, `detailed`, its distinct count
    (counted columns) and min/max (numbers, times). Not `detailed` (counts only: what removal
    needs), a time axis profiled for removal keeps its min/max."""
    out: list[exp.Expression] = [exp.Count(this=exp.Star())]
    for c in columns:
        out.append(exp.Count(this=col(c.name)))
        if detailed and c.counted:
            out.append(approx_distinct(c.name, approximate))
        if c.ranged and (detailed or c.range_read):
            out += [exp.Min(this=col(c.name)), exp.Max(this=col(c.name))]
    return out


Bound = Literal["since", "after", "loads"]


def profile_layout(columns: Sequence[ProfiledColumn]) -> tuple[tuple[bool, bool, bool], ...]:
    """What `profile_query` reads of its columns besides their names (`counted`, `ranged`,
    `range_read`): with the options, the key of its shape (`profiles.sweep`), under which one
    rendered template serves every table whose columns are laid out alike. Reading anything
    else of a column there means adding it here."""
    return tuple((c.counted, c.ranged, c.range_read) for c in columns)


def profile_query(
    table: exp.Table, columns: Sequence[ProfiledColumn], approximate: bool, *,
    bound: Bound, detailed: bool = True, loads: int = 0, count_row: bool = False,
    load_id: str = LOAD_ID,
) -> exp.Expression:
    """The profile query (see the module docstring), grouped by load. `bound` picks the loads:

    - `since`: one parameter, the oldest load id kept (a first or a full profile);
    - `after`: one parameter, the last profiled load id (the loads after it);
    - `loads`: `loads` parameters, the load ids to profile again (in detail).

    With `count_row`, the query carries one more row, `UNION ALL`ed, with a NULL load id: the
    whole table's row count (no parameter), which shows a merge, replace or delete that
    changed rows of earlier loads (see the module docstring).

    Rows: `load id, rows, then per column non-NULL, [distinct], [min, max]` (see
    `_aggregates`). `load_id`: the load id column's name (a shape's sentinel stands in)."""
    # built fresh, so sqlglot's builders edit in place (`copy=False`) instead of copying the
    # growing tree at each step
    select = [col(load_id), *_aggregates(columns, approximate, detailed)]
    q = exp.select(*select, copy=False).from_(table.copy(), copy=False)
    lid = col(load_id)
    if bound == "since":
        cond: exp.Expression = exp.GTE(this=lid, expression=exp.Placeholder())
    elif bound == "after":
        cond = exp.GT(this=lid, expression=exp.Placeholder())
    else:
        cond = exp.In(this=lid, expressions=[exp.Placeholder() for _ in range(loads)])
    q = q.where(cond, copy=False).group_by(col(load_id), copy=False)
    if not count_row:
        return q
    width = len(select) - 2
    total = exp.select(
        exp.Null(), exp.Count(this=exp.Star()), *[exp.Null() for _ in range(width)], copy=False
    ).from_(table.copy(), copy=False)
    return exp.union(q, total, distinct=False, copy=False)


def history_query(
    table: exp.Table, columns: Sequence[ProfiledColumn], approximate: bool
) -> exp.Expression:
    """The profile of each load from a given load id on (one parameter), oldest first: a
    finding's `reproduce`, to paste into the destination's console."""
    return (
        exp.select(col(LOAD_ID), *_aggregates(columns, approximate))
        .from_(table.copy())
        .where(exp.GTE(this=col(LOAD_ID), expression=exp.Placeholder()))
        .group_by(col(LOAD_ID))
        .order_by(col(LOAD_ID))
    )


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def read_profiles(
    rows: Sequence[Sequence[Any]], columns: Sequence[ProfiledColumn], detailed: bool = True
) -> tuple[list[LoadProfile], int | None]:
    """The profiled loads (oldest first) and the whole table's row count (None when the
    query had no count row); `detailed` as the query was built."""
    # where each column's values sit in a row, worked out once per query, not per row
    plan: list[tuple[str, int, int | None, int | None]] = []
    i = 2
    for c in columns:
        at, i = i, i + 1
        distinct = None
        if detailed and c.counted:
            distinct, i = i, i + 1
        low = None
        if c.ranged and (detailed or c.range_read):
            low, i = i, i + 2
        plan.append((c.name, at, distinct, low))
    loads: list[LoadProfile] = []
    before: int | None = None
    for row in rows:
        if row[0] is None:
            before = int(row[1] or 0)
            continue
        profiles = {
            name: ColumnProfile(
                name, int(row[at] or 0),
                None if distinct is None else int(row[distinct] or 0),
                None if low is None else _text(row[low]),
                None if low is None else _text(row[low + 1]),
            )
            for name, at, distinct, low in plan
        }
        loads.append(LoadProfile(str(row[0]), int(row[1] or 0), profiles, detailed))
    return sorted(loads, key=lambda p: p.load_id), before


def category_plan(
    loads: Sequence[LoadProfile], columns: Sequence[ProfiledColumn], max_categories: int
) -> list[tuple[ProfiledColumn, list[str]]]:
    """Per categorical column, the loads whose values are collected: every load for a
    declared code set, else the loads where the column holds at most `max_categories`
    distinct values (approximately; the exact count is checked when reading)."""
    plan = []
    for c in columns:
        if not c.monitored or (c.codes is None and c.kind != "category"):
            continue
        wanted = [
            p.load_id for p in loads
            if (cp := p.columns.get(c.name)) is not None and cp.non_null
            and (c.codes is not None or (cp.distinct or 0) <= max_categories)
        ]
        if wanted:
            plan.append((c, wanted))
    return plan


def category_query(
    table: exp.Table, plan: Sequence[tuple[ProfiledColumn, Sequence[str]]]
) -> tuple[exp.Expression, list[Any]]:
    """The category query: `(column index, load id, value as text, rows)` per (load, column,
    value), one `UNION ALL` branch per planned column; its parameters, in order."""
    branches: list[exp.Select] = []
    params: list[Any] = []
    for i, (c, load_ids) in enumerate(plan):
        value = exp.Cast(this=col(c.name), to=exp.DataType.build("text"))
        branch = (
            exp.select(exp.Literal.number(i), col(LOAD_ID), value, exp.Count(this=exp.Star()))
            .from_(table.copy())
            .where(exp.and_(
                exp.In(this=col(LOAD_ID), expressions=[exp.Placeholder() for _ in load_ids]),
                exp.Not(this=exp.Is(this=col(c.name), expression=exp.null())),
            ))
            .group_by(col(LOAD_ID), col(c.name))
        )
        branches.append(branch)
        params += list(load_ids)
    query: exp.Expression = branches[0]
    for branch in branches[1:]:
        query = exp.union(query, branch, distinct=False)
    return query, params


def read_categories(
    rows: Sequence[Sequence[Any]], plan: Sequence[tuple[ProfiledColumn, Sequence[str]]]
) -> dict[tuple[str, str], dict[str, int]]:
    """(load id, column) -> value -> rows, from the category query's rows."""
    out: dict[tuple[str, str], dict[str, int]] = {
        (load_id, c.name): {} for c, load_ids in plan for load_id in load_ids
    }
    for index, load_id, value, n in rows:
        c = plan[int(index)][0]
        bucket = out.setdefault((str(load_id), c.name), {})
        key = _text(value) or ""
        bucket[key] = bucket.get(key, 0) + int(n or 0)
    return out
