"""Query builders for the detectors, as sqlglot expressions (rendered by the adapter)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlglot import exp

from dlt_contract_ops.core.columns import TimeAxis, free_name
from dlt_contract_ops.core.timeaxis import load_id_iso, load_id_text
from dlt_contract_ops.destinations.sql import any_not_null, col
from dlt_contract_ops.detection.rows import Rows

SAMPLES_PER_COLUMN = 5
"""Sample values a finding carries per drifted column."""

FIRST_SEEN_ALIAS = "_co_first_seen"
_RANK_PREFIX = "_co_rank_"


def _is_null_last(column: str) -> exp.Expression:
    """0 for a value, 1 for NULL: sorts a column's non-NULL rows first, in any dialect."""
    return exp.Case(
        ifs=[exp.If(this=exp.Is(this=col(column), expression=exp.null()),
                    true=exp.Literal.number(1))],
        default=exp.Literal.number(0),
    )


def sample_query(
    table: Rows,
    columns: Sequence[str],
    axis: TimeAxis | None,
    per_column: int = SAMPLES_PER_COLUMN,
    tiebreak: str | None = None,
    *,
    since: bool = False,
    max_rows: int | None = None,
) -> exp.Select:
    """The newest `per_column` non-NULL values of each drifted column, and when one first
    held a value: ONE query per drifted table.

    Each column's values are numbered by a running count of its non-NULL values, newest row
    first (then `tiebreak` — dlt's unique `_dlt_id` — so rows of one load rank the same way
    every run), and the outer query blanks a value beyond its column's count: a sparse column
    still finds its values beside a busy one, and a row kept for one column never leaks
    another column's older value. Every column counts over the same window order, so the
    database sorts the rows once for all of them (one sort per column, with the whole wide
    row in it, spilled to disk: 300 drifted columns x 3,000 rows took 40 s on PostgreSQL).
    Without an axis or a tiebreak there is no order to share: each column is ranked on its
    own then. Per column, `MIN(CASE WHEN column IS NOT NULL THEN axis END) OVER ()` runs over
    every row where any drifted column holds a value, so each column's `first_seen` is exact
    (a column added later than another is not dated by the other's first value). Result: the
    drifted columns, then (with an axis) the axis value and each column's `first_seen`, newest
    row first. It stays internal: the finding's `reproduce` is `reproduce_samples_query`.

    Bounds (the scan must not grow with the table): `since` adds one parameter, a lower bound
    on the axis (rows older than it are not read; `first_seen` is then the first sighting
    within the bound); `max_rows` reads only the newest that many rows holding a value (the
    slice the columns are picked from, and `first_seen`'s horizon).
    """
    inner: list[exp.Expr] = [col(c) for c in columns]
    outer: list[exp.Expr] = []
    keep: list[exp.Expr] = []
    # the helper aliases share the subquery's output with the table's own columns: a column
    # that happens to be called like one must not shadow it
    taken = {*columns, *(c for c in (axis.column if axis else None, tiebreak) if c)}
    first_seen: list[str] = []
    if axis is not None:
        inner.append(col(axis.column))
        for i, c in enumerate(columns):
            # each column's own first value: one window over the same (empty) frame for all
            first_seen.append(free_name(f"{FIRST_SEEN_ALIAS}_{i}", taken))
            earliest = exp.Min(this=exp.Case(ifs=[exp.If(
                this=exp.Not(this=exp.Is(this=col(c), expression=exp.null())),
                true=col(axis.column))]))
            inner.append(exp.alias_(exp.Window(this=earliest), first_seen[-1], quoted=True,
                                    copy=False))
    if tiebreak is not None:
        inner.append(col(tiebreak))
    for i, c in enumerate(columns):
        rank_name = free_name(f"{_RANK_PREFIX}{i}", taken)
        inner.append(exp.alias_(_pick(c, axis, tiebreak), rank_name, quoted=True, copy=False))
        in_rank = exp.LTE(this=col(rank_name), expression=exp.Literal.number(per_column))
        outer.append(exp.alias_(exp.Case(ifs=[exp.If(this=in_rank, true=col(c))]), c,
                                quoted=True, copy=False))
        keep.append(exp.and_(exp.Not(this=exp.Is(this=col(c), expression=exp.null())),
                             in_rank.copy(), copy=False))
    if axis is not None:
        outer += [col(axis.column), *[col(f) for f in first_seen]]
    # every node below is built fresh for this query, so sqlglot's builders attach them in
    # place (`copy=False`) instead of copying the growing tree at each step
    source: exp.Expr = table.copy()
    condition: exp.Expr = any_not_null(columns)
    if since and axis is not None:
        condition = exp.and_(condition, exp.GTE(this=col(axis.column),
                                                expression=exp.Placeholder()), copy=False)
    if max_rows is not None:
        # the newest rows holding a value, then ranked: the window functions never see more
        picked = [col(c) for c in columns]
        picked += [col(c) for c in (axis.column if axis else None, tiebreak) if c]
        bounded = exp.select(*picked, copy=False).from_(table.copy(), copy=False).where(
            condition, copy=False)
        newest = _newest(axis, tiebreak)
        if newest:
            bounded = bounded.order_by(*newest, copy=False)
        source = exp.alias_(exp.Subquery(this=bounded.limit(max_rows, copy=False)), "b",
                            copy=False)
        condition = any_not_null(columns)
    sub = exp.select(*inner, copy=False).from_(source, copy=False).where(condition, copy=False)
    q = exp.select(*outer, copy=False).from_(
        exp.alias_(exp.Subquery(this=sub), "s", copy=False), copy=False).where(
        exp.or_(*keep, copy=False), copy=False)
    newest_first = _newest(axis, tiebreak)
    return q.order_by(*newest_first, copy=False) if newest_first else q


def reproduce_samples_query(
    table: Rows,
    columns: Sequence[str],
    axis: TimeAxis | None,
    tiebreak: str | None = None,
    *,
    since: bool = False,
    shown: Sequence[str] = (),
    limit: int = SAMPLES_PER_COLUMN,
) -> exp.Select:
    """The finding's `reproduce`: a plain SELECT a person reads and pastes, of the drifted
    `columns`, the axis and the `shown` columns (dlt's `_dlt_load_id`), from the rows where a
    drifted column holds a value, within the sample's window (`since`: the same one parameter
    as `sample_query`'s lower bound on the axis), newest first as the sample orders them,
    `limit` rows. No window function, no CASE: `sample_query` stays internal.

    It returns the rows the samples were read from: each column's values in it are the newest
    of the finding's samples for that column (all of them where the drifted columns are filled
    on the same rows; a column filled on a few rows only may show fewer).

    >>> from dlt_contract_ops.destinations.sql import ident
    >>> reproduce_samples_query(exp.Table(this=ident("t")), ["a"], TimeAxis("ts"), "id",
    ...                         shown=["_dlt_load_id"]).sql("duckdb")
    'SELECT "a", "ts", "_dlt_load_id" FROM "t" WHERE NOT "a" IS NULL ORDER BY "ts" DESC, \
"id" NULLS FIRST LIMIT 5'
    """
    picked = list(columns)
    for extra in (axis.column if axis is not None else None, *shown):
        if extra is not None and extra not in picked:
            picked.append(extra)
    condition: exp.Expr = any_not_null(columns)
    if since and axis is not None:
        condition = exp.and_(condition, exp.GTE(this=col(axis.column),
                                                expression=exp.Placeholder()), copy=False)
    # every node is built fresh here: attached in place, never copied step by step
    query = exp.select(*[col(c) for c in picked], copy=False).from_(
        table.copy(), copy=False).where(condition, copy=False)
    newest = _newest(axis, tiebreak)
    if newest:
        query = query.order_by(*newest, copy=False)
    return query.limit(limit, copy=False)


def _newest(axis: TimeAxis | None, tiebreak: str | None) -> list[exp.Ordered]:
    """Newest row first: the axis descending, then the tiebreak, NULLs first.

    NULLs first: the order the pick's window frame shares with the slice, and MySQL,
    BigQuery and SQL Server cannot say `NULLS LAST` in a window with a frame (their own
    default is first). dlt's `_dlt_id` is never NULL anyway.
    """
    order: list[exp.Ordered] = []
    if axis is not None:
        order.append(exp.Ordered(this=col(axis.column), desc=True))
    if tiebreak is not None:
        order.append(exp.Ordered(this=col(tiebreak), nulls_first=True))
    return order


def _pick(column: str, axis: TimeAxis | None, tiebreak: str | None) -> exp.Window:
    """The number of `column`'s value among its non-NULL values, newest first.

    A running `COUNT(column)` over the rows newest first (ROWS: each row its own step, ties
    of the axis included) numbers the non-NULL values 1, 2, ... exactly as a `ROW_NUMBER()`
    ordered by "non-NULL first, newest first" would, but over one order that every column
    shares. Without an order key, `ROW_NUMBER()` on "non-NULL first" (one sort per column).
    """
    newest = _newest(axis, tiebreak)
    if not newest:
        order = exp.Order(expressions=[exp.Ordered(this=_is_null_last(column))])
        return exp.Window(this=exp.RowNumber(), order=order)
    frame = exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING",
                           end="CURRENT ROW")
    return exp.Window(this=exp.Count(this=col(column)), order=exp.Order(expressions=newest),
                      spec=frame)


def axis_time(value: Any, axis: TimeAxis) -> str | None:
    """An axis value as ISO-8601 text (UTC for `_dlt_load_id` epochs)."""
    if value is None:
        return None
    if axis.kind == "load_id":
        return load_id_iso(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def axis_bound(moment: datetime, axis: TimeAxis) -> Any:
    """A parameter comparable with the axis column: a timestamp, or an epoch string."""
    if axis.kind == "load_id":
        return load_id_text(moment)
    return moment


RECENT_FLAG = "_co_recent"


def coverage_query(table: Rows, columns: Sequence[str], axis: TimeAxis) -> exp.Select:
    """ONE aggregate over a table: rows and non-NULL counts per column, one row per window.

    Parameters, in order: start of the recent window, start of the baseline window. The
    lower bound on the axis lets partitioned destinations prune. Result rows (a window with
    no rows has no row): `window flag (1 recent, 0 baseline), rows, non-NULL count per column,
    oldest axis value`.
    Grouping by the window flag keeps the query small (one `COUNT` per column) and lets
    the warehouse aggregate in a single pass. On dlt's `_dlt_load_id` axis it also groups by
    the load (a row per load, its id the last column): the same pass then says in which load
    a column went dark, exactly as the load profiles do.
    """
    flag = exp.Case(
        ifs=[exp.If(this=exp.GTE(this=col(axis.column), expression=exp.Placeholder()),
                    true=exp.Literal.number(1))],
        default=exp.Literal.number(0),
    )
    select: list[exp.Expr] = [
        exp.alias_(flag, RECENT_FLAG, quoted=True),
        exp.Count(this=exp.Star()),
        *[exp.Count(this=col(c)) for c in columns],
        exp.Min(this=col(axis.column)),  # the window's oldest row: when a young table's
    ]  # first rows leave the recent window (a baseline exists from then on)
    query = (
        exp.select(*select, copy=False)
        .from_(table.copy(), copy=False)
        .where(exp.GTE(this=col(axis.column), expression=exp.Placeholder()), copy=False)
        .group_by(exp.Literal.number(1), copy=False)  # by position: the CASE holds a parameter
    )
    return query.group_by(col(axis.column), copy=False) if axis.kind == "load_id" else query


def reproduce_coverage_query(
    table: Rows, columns: Sequence[str], axis: TimeAxis
) -> exp.Select:
    """A readable coverage breakdown per window, for a user's SQL console.

    Parameters, in order: start of the recent window, start of the baseline window.
    """
    window = exp.Case(
        ifs=[exp.If(this=exp.GTE(this=col(axis.column), expression=exp.Placeholder()),
                    true=exp.Literal.string("recent"))],
        default=exp.Literal.string("baseline"),
    )
    select: list[exp.Expr] = [
        exp.alias_(window, "window", quoted=True, copy=False),
        exp.alias_(exp.Count(this=exp.Star()), "rows", quoted=True, copy=False),
    ]
    select += [exp.alias_(exp.Count(this=col(c)), f"{c} non-null", quoted=True, copy=False)
               for c in columns]
    # built fresh here (the caller's table copied once): attached in place, not step by step
    return (
        exp.select(*select, copy=False)
        .from_(table.copy(), copy=False)
        .where(exp.GTE(this=col(axis.column), expression=exp.Placeholder()), copy=False)
        .group_by(exp.Literal.number(1), copy=False)  # by position: the CASE holds a parameter
    )


def select_columns(table: exp.Table, columns: Sequence[str], limit: int) -> exp.Select:
    """`SELECT cols FROM table LIMIT n`: a reproduce for declared-side drift."""
    return exp.select(*[col(c) for c in columns]).from_(table).limit(limit)


def handoff_query(table: exp.Table, columns: Sequence[str], axis_column: str) -> exp.Select:
    """Rows and non-NULL counts of `columns` per load (`axis_column`, dlt's `_dlt_load_id`),
    oldest first, from a lower bound on the axis (one parameter): ONE query per table with a
    rename candidate, to see where one column stopped carrying values and another began."""
    return (
        exp.select(
            col(axis_column),
            exp.Count(this=exp.Star()),
            *[exp.Count(this=col(c)) for c in columns],
        )
        .from_(table)
        .where(exp.GTE(this=col(axis_column), expression=exp.Placeholder()))
        .group_by(col(axis_column))
        .order_by(col(axis_column))
    )


