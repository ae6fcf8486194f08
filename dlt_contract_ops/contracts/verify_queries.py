"""Query builders for `contract verify`, as sqlglot expressions (rendered by the adapter).

Two queries at most per table: ONE aggregate counting the offending rows of every check
(`aggregate_query`), and, only for a table with violations, ONE examples query
(`examples_query`). Values (code sets, bounds, patterns) are bound parameters; every builder
returns the query and its parameters, in the order the rendered text holds their placeholders.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from dlt_contract_ops.contracts.verify import EXAMPLES_PER_VIOLATION, Check
from dlt_contract_ops.core.columns import free_name
from dlt_contract_ops.destinations.sql import col, param


def _one(n: int) -> exp.Expr:
    return exp.Literal.number(n)


def _not_null(column: str) -> exp.Expr:
    return exp.Not(this=exp.Is(this=col(column), expression=exp.null()))


def violation(check: Check, params: list[Any]) -> exp.Expr:
    """The condition a row breaking `check` meets; its values are appended to `params`.

    A NULL breaks only `not_null`: the value rules judge values that are there.
    """
    c = col(check.columns[0])
    if check.rule == "not_null":
        return exp.Is(this=c, expression=exp.null())
    if check.rule == "code_set":
        params.extend(check.values)
        members = exp.In(this=c.copy(), expressions=[param() for _ in check.values])
        return exp.and_(_not_null(check.columns[0]), exp.Not(this=members))
    if check.rule == "range":
        # a value breaks the range when it fails any bound: `n < 0 OR n >= 10` for [0, 10)
        failing = {">=": exp.LT, ">": exp.LTE, "<=": exp.GT, "<": exp.GTE}
        parts: list[exp.Expr] = []
        for op, value in check.bounds:
            params.append(value)
            parts.append(failing[op](this=c.copy(), expression=param()))
        return exp.or_(*parts) if len(parts) > 1 else parts[0]
    if check.rule == "pattern":
        params.append(check.pattern)
        match = exp.RegexpLike(this=c.copy(), expression=param())
        return exp.and_(_not_null(check.columns[0]), exp.Not(this=match))
    raise ValueError(f"{check.rule} is judged over groups, not rows")


def _flag(condition: exp.Expr) -> exp.Case:
    """1 for a row meeting `condition`, else 0 (a NULL condition counts as not met)."""
    return exp.Case(ifs=[exp.If(this=condition, true=_one(1))], default=_one(0))


def aggregate_query(
    table: exp.Table, checks: Sequence[Check], taken: Sequence[str]
) -> tuple[exp.Select, list[Any]]:
    """ONE aggregate over the table: its rows, then the offending rows of each check.

    Without a `unique_key` check: `SELECT COUNT(*), SUM(CASE WHEN <breaks> THEN 1 ELSE 0 END),
    ... FROM t`. With one, the same sums are taken per key value in a subquery grouped by the
    key, and the outer query adds them up; the rows beyond the first of each key value are
    `SUM(rows) - COUNT(*)` (every key value counts once, a NULL key as one value), so
    duplicates cost no second pass. Output columns are labelled `<column> <rule>` so the
    query reads well pasted into a console (`reproduce`).
    """
    params: list[Any] = []
    names = set(taken)
    key = next((c for c in checks if c.rule == "unique_key"), None)
    labels = _labels(checks)
    if key is None:
        select: list[exp.Expr] = [exp.alias_(exp.Count(this=exp.Star()), "rows",
                                                   quoted=True)]
        select += [
            exp.alias_(exp.Sum(this=_flag(violation(c, params))), label, quoted=True)
            for c, label in zip(checks, labels, strict=True)
        ]
        return exp.select(*select).from_(table), params
    n = free_name("_co_rows", names)
    inner: list[exp.Expr] = [col(k) for k in key.columns]
    inner.append(exp.alias_(exp.Count(this=exp.Star()), n, quoted=True))
    sums: dict[Check, str] = {}
    for c in checks:
        if c is key:
            continue
        sums[c] = free_name(f"_co_v{len(sums)}", names)
        inner.append(exp.alias_(exp.Sum(this=_flag(violation(c, params))), sums[c], quoted=True))
    grouped = exp.select(*inner).from_(table).group_by(*[col(k) for k in key.columns])
    rows = exp.Sum(this=col(n))
    outer: list[exp.Expr] = [exp.alias_(rows, "rows", quoted=True)]
    for c, label in zip(checks, labels, strict=True):
        total = exp.Sub(this=rows.copy(), expression=exp.Count(this=exp.Star())) if c is key \
            else exp.Sum(this=col(sums[c]))
        outer.append(exp.alias_(total, label, quoted=True))
    sub = exp.alias_(exp.Subquery(this=grouped), free_name("_co_keys", names))
    return exp.select(*outer).from_(sub), params


def _labels(checks: Sequence[Check]) -> list[str]:
    out: list[str] = []
    for c in checks:
        label = f"{c.column} {c.rule}"
        while label in out or label == "rows":
            label += "'"
        out.append(label)
    return out


def examples_query(
    table: exp.Table,
    checks: Sequence[Check],
    row_id: Sequence[str],
    taken: Sequence[str],
    per_check: int = EXAMPLES_PER_VIOLATION,
) -> tuple[exp.Select, list[Any], list[list[str]]]:
    """ONE query for up to `per_check` distinct offending values of each check, in one scan.

    Innermost, each row gets a 0/1 flag per check (for `unique_key`, the row count of its key
    value, `COUNT(*) OVER (PARTITION BY key)`); then each check ranks its flagged rows'
    distinct values (`DENSE_RANK` over the value, `ROW_NUMBER` within one value to keep one
    row of it); the outer query keeps a row that is among the first `per_check` values of any
    check and says which (`hit` columns: the value's rank, or NULL). Returns the query, its
    parameters, and per check the output columns holding its example (the value; the row's
    `row_id` for `not_null`; the key for `unique_key`). Result columns: the distinct output
    columns, then one hit column per check. `not_null` needs a `row_id`: without one, leave
    it out of `checks`.
    """
    params: list[Any] = []
    names = set(taken)
    outputs = [list(row_id) if c.rule == "not_null" else list(c.columns) for c in checks]
    shown = list(dict.fromkeys(n for out in outputs for n in out))
    key = next((c for c in checks if c.rule == "unique_key"), None)
    flags = [free_name(f"_co_flag_{i}", names) for i in range(len(checks))]
    ranks = [free_name(f"_co_rank_{i}", names) for i in range(len(checks))]
    firsts = [free_name(f"_co_first_{i}", names) for i in range(len(checks))]
    hits = [free_name(f"_co_hit_{i}", names) for i in range(len(checks))]
    key_rows = free_name("_co_key_rows", names)

    base: list[exp.Expr] = [col(n) for n in shown]
    if key is not None:
        partition = [col(k) for k in key.columns]
        base.append(exp.alias_(exp.Window(this=exp.Count(this=exp.Star()),
                                          partition_by=partition), key_rows, quoted=True))
    for c, flag in zip(checks, flags, strict=True):
        if c is not key:
            base.append(exp.alias_(_flag(violation(c, params)), flag, quoted=True))
    s1 = exp.select(*base).from_(table)

    ranked: list[exp.Expr] = [col(n) for n in shown]
    for c, flag, out, rank, first in zip(checks, flags, outputs, ranks, firsts, strict=True):
        flagged: exp.Expr = col(flag)
        if c is key:
            flagged = _flag(exp.GT(this=col(key_rows), expression=_one(1)))
            ranked.append(exp.alias_(flagged.copy(), flag, quoted=True))
        else:
            ranked.append(col(flag))
        order = exp.Order(expressions=[exp.Ordered(this=col(n)) for n in out])
        ranked.append(exp.alias_(
            exp.Window(this=exp.DenseRank(), partition_by=[flagged.copy()],
                       order=order.copy()), rank, quoted=True))
        ranked.append(exp.alias_(
            exp.Window(this=exp.RowNumber(), partition_by=[flagged.copy(), *map(col, out)],
                       order=order.copy()), first, quoted=True))
    any_flag = [
        exp.GT(this=col(key_rows), expression=_one(1)) if c is key
        else exp.EQ(this=col(flag), expression=_one(1))
        for c, flag in zip(checks, flags, strict=True)
    ]
    s2 = exp.select(*ranked).from_(
        exp.alias_(exp.Subquery(this=s1), free_name("_co_rows", names))
    ).where(exp.or_(*any_flag))

    final: list[exp.Expr] = [col(n) for n in shown]
    keep: list[exp.Expr] = []
    for flag, rank, first, hit in zip(flags, ranks, firsts, hits, strict=True):
        kept = exp.and_(
            exp.EQ(this=col(flag), expression=_one(1)),
            exp.LTE(this=col(rank), expression=_one(per_check)),
            exp.EQ(this=col(first), expression=_one(1)),
        )
        final.append(exp.alias_(exp.Case(ifs=[exp.If(this=kept, true=col(rank))]), hit,
                                quoted=True))
        keep.append(kept.copy())
    q = exp.select(*final).from_(
        exp.alias_(exp.Subquery(this=s2), free_name("_co_ranked", names))
    ).where(exp.or_(*keep))
    return q, params, outputs


def read_examples(
    rows: Sequence[Sequence[Any]], checks: Sequence[Check], outputs: Sequence[Sequence[str]]
) -> dict[Check, list[tuple[Any, ...]]]:
    """Each check's example rows (its output columns' values), lowest rank first."""
    shown = list(dict.fromkeys(n for out in outputs for n in out))
    at = {n: i for i, n in enumerate(shown)}
    found: dict[Check, list[tuple[int, tuple[Any, ...]]]] = {c: [] for c in checks}
    for row in rows:
        for i, c in enumerate(checks):
            rank = row[len(shown) + i]
            if rank is not None:
                found[c].append((int(rank), tuple(row[at[n]] for n in outputs[i])))
    return {c: [values for _, values in sorted(hits, key=lambda h: h[0])]
            for c, hits in found.items()}
