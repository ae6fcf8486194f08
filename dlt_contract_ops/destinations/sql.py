"""SQL built as sqlglot expressions and rendered per dialect through one function.

Every identifier is quoted here (`ident`), every value is a bound parameter or, for the
copy-pasteable `reproduce` text, a literal rendered by sqlglot. No SQL text is built by hand.
`render` is the single gate every query passes: it refuses anything but a SELECT, so a
write can never reach a driver, whatever a caller builds. Two narrow renderers take no
expression at all, only names and numbers: `render_session_settings` (the timeouts an
adapter sets on a new MySQL/MariaDB connection) and `render_kill_query` (how `cancel()` stops
a MySQL/MariaDB statement).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any, ClassVar, Literal, cast

from sqlglot import exp
from sqlglot.dialects.bigquery import BigQuery

from dlt_contract_ops.errors import UnsafeQueryError

ParamStyle = Literal["qmark", "format", "named"]
"""How a driver takes bound parameters: `?`; `%s` (literal `%` doubled); `:name`
(SQLAlchemy `text()`, literal `:` escaped)."""

#: statements, and clauses inside a SELECT, that write, lock or change session state
_FORBIDDEN: tuple[type[Any], ...] = (
    exp.DML,  # INSERT, UPDATE, DELETE, MERGE, COPY
    exp.DDL,  # CREATE (and INSERT again)
    exp.Drop,
    exp.Alter,
    exp.TruncateTable,
    exp.Command,  # anything sqlglot only passes through as text
    exp.Into,  # SELECT ... INTO creates a table
    exp.Lock,  # SELECT ... FOR UPDATE takes row locks
    exp.Pragma,
    exp.Set,
    exp.Grant,
    exp.Revoke,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Use,
    exp.Attach,
    exp.Detach,
    exp.Analyze,
    exp.Cache,
    exp.Uncache,
    exp.Refresh,
    exp.Comment,
    exp.Kill,
    exp.Execute,
    exp.LoadData,
    exp.Export,
    exp.Declare,
)


class _BigQueryDialect(BigQuery):
    """BigQuery, with quoted identifiers escaped the way BigQuery's lexer reads them.

    sqlglot doubles a backtick inside a quoted identifier; BigQuery takes a backslash escape
    (`` `a\\`b` ``), as dlt's own `escape_bigquery_identifier` writes it. The tokenizer
    reads that escape back, so rendered text parses again.
    """

    class Tokenizer(BigQuery.Tokenizer):
        IDENTIFIER_ESCAPES: ClassVar[list[str]] = ["\\"]

    # sqlglot declares Generator as a class attribute; mypy cannot see it as a base class
    class Generator(BigQuery.Generator):  # type: ignore[valid-type,misc]
        def identifier_sql(self, expression: exp.Identifier) -> str:
            if not expression.quoted:
                return str(super().identifier_sql(expression))
            text = expression.name.replace("\\", "\\\\").replace("`", "\\`")
            return f"`{text}`"


_DIALECTS: dict[str, Any] = {"bigquery": _BigQueryDialect()}


def dialect_for(name: str) -> Any:
    """The sqlglot dialect (name or instance) SQL for destination dialect `name` renders
    with; parse rendered text with it to read it back."""
    return _DIALECTS.get(name, name)


#: the comparisons `prepare` coerces a parameter in (against the column on the other side)
COMPARISONS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ)


def compared_column(node: exp.Expr) -> tuple[exp.Column, exp.Placeholder] | None:
    """The column and the parameter a comparison holds (either way round), else None.

    >>> compared_column(exp.GTE(this=exp.column("a"), expression=param())) is not None
    True
    """
    if not isinstance(node, COMPARISONS):
        return None
    left, right = node.this, node.expression
    if isinstance(left, exp.Placeholder):
        left, right = right, left
    if isinstance(left, exp.Column) and isinstance(right, exp.Placeholder):
        return left, right
    return None


def ident(name: str) -> exp.Identifier:
    """A quoted identifier: odd names (dashes, quotes, unicode, mixed case) are data."""
    return exp.to_identifier(name, quoted=True)


def col(name: str, table: str | None = None) -> exp.Column:
    """A quoted column reference, optionally qualified by a quoted table name."""
    return exp.Column(this=ident(name), table=ident(table) if table else None)


def table_ref(table: str, dataset: str | None, catalog: str | None = None) -> exp.Table:
    """`catalog.dataset.table`, each part quoted."""
    return exp.Table(
        this=ident(table),
        db=ident(dataset) if dataset else None,
        catalog=ident(catalog) if catalog else None,
    )


def param() -> exp.Placeholder:
    """A positional bound parameter."""
    return exp.Placeholder()


def check_read_only(query: exp.Expression) -> None:
    """Raise UnsafeQueryError unless `query` is a SELECT (or set operation of SELECTs) that
    neither writes, locks nor changes session state anywhere inside it."""
    root = query
    while isinstance(root, exp.With | exp.Subquery | exp.Paren):
        root = root.this
    if not isinstance(root, exp.Select | exp.SetOperation):
        raise UnsafeQueryError(
            f"Refusing to run a {type(query).__name__} statement: the reconciler only reads "
            "(SELECT)."
        )
    for node in query.walk():
        if isinstance(node, _FORBIDDEN):
            raise UnsafeQueryError(
                f"Refusing to run a query containing {type(node).__name__}: the reconciler only "
                "reads (SELECT)."
            )


def render(query: exp.Expression, dialect: str, *, owned: bool = False) -> str:
    """Render a read-only query for `dialect`; refuse anything but a SELECT.

    `owned`: `query` is a copy the caller discards after (`prepare` made it), so rendering
    may alter it instead of copying it first.

    >>> from sqlglot import exp
    >>> render(exp.select("1"), "duckdb")
    'SELECT 1'
    >>> render(exp.delete("t"), "duckdb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dlt_contract_ops.errors.UnsafeQueryError: Refusing to run a Delete statement: ...
    """
    check_read_only(query)
    return _generate(query, dialect, owned=owned)


def _generate(query: exp.Expression, dialect: str, *, owned: bool = False) -> str:
    """SQL text of an already checked query: callers go through `render` or `render_bound`.
    sqlglot's generator copies the tree it is given (it rewrites it); an `owned` tree is a
    throwaway copy already, rewritten in place."""
    return str(query.sql(dialect=dialect_for(dialect), copy=not owned))


def render_bound(
    query: exp.Expression,
    dialect: str,
    paramstyle: ParamStyle,
    n_params: int,
    *,
    owned: bool = False,
) -> str:
    """Render `query` for a driver: placeholders in the driver's `paramstyle`, and the
    characters that style gives a meaning to escaped everywhere else in the text.

    `owned`: `query` is a copy the caller discards after (`prepare` made it): it is marked
    and rendered in place instead of copied again.

    >>> from sqlglot import exp
    >>> q = exp.select("'50%'").where(exp.EQ(this=exp.column("a"), expression=param()))
    >>> render_bound(q, "postgres", "format", 1)
    "SELECT '50%%' WHERE a = %s"
    >>> render_bound(q, "sqlite", "named", 1)
    "SELECT '50%' WHERE a = :p0"
    """
    text, marks = render_marked(query, dialect, owned=owned)
    return bind_marks(text, marks, paramstyle, n_params)


def render_marked(
    query: exp.Expression, dialect: str, *, owned: bool = False
) -> tuple[str, list[str]]:
    """The checked query's text with each placeholder a unique mark (in order), and the marks:
    what `bind_marks` turns into a driver's paramstyle (and `shapes` fills in per table)."""
    nonce = secrets.token_hex(6)
    marks: list[str] = []

    def _mark(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Placeholder):
            marks.append(f"co{nonce}p{len(marks)}x")
            return exp.var(marks[-1])
        return node

    check_read_only(query)  # on the caller's tree, before placeholders become text
    # at most one copy, marked and rendered in place; the check above covered this tree
    tree = query if owned else query.copy()
    return _generate(tree.transform(_mark, copy=False), dialect, owned=True), marks


def bind_marks(text: str, marks: Sequence[str], paramstyle: ParamStyle, n_params: int) -> str:
    """`render_marked`'s text for a driver: marks in `paramstyle`, and the characters that
    style gives a meaning to escaped everywhere else."""
    if len(marks) != n_params:
        raise ValueError(
            f"The query has {len(marks)} placeholder(s) but {n_params} parameter(s) were given."
        )
    if paramstyle == "format" and marks:
        # drivers apply `%` formatting only when parameters are passed
        text = text.replace("%", "%%")
    elif paramstyle == "named":
        # SQLAlchemy text(): `:word` is a bind anywhere, `\:` a literal colon
        text = text.replace(":", "\\:")
    for i, mark in enumerate(marks):
        target = {"qmark": "?", "format": "%s", "named": f":p{i}"}[paramstyle]
        text = text.replace(mark, target, 1)
    return text


def inline_params(
    query: exp.Expression, params: Sequence[Any], *, owned: bool = False
) -> exp.Expression:
    """Replace placeholders, in order, by literals: for the `reproduce` text a user pastes.
    A copy of `query`, or (`owned`: a throwaway copy already) `query` itself, changed."""
    values = iter(params)

    def _swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Placeholder):
            return literal(next(values))
        return node

    return query.transform(_swap, copy=not owned)


def literal(value: Any) -> exp.Expression:
    """A typed SQL literal for `value`; timestamps keep their type so comparisons stay typed.

    >>> from datetime import datetime, timezone
    >>> literal(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)).sql("postgres")
    "CAST('2026-01-02 03:04:05+00:00' AS TIMESTAMPTZ)"
    """
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float | Decimal):
        return exp.Literal.number(value)
    if isinstance(value, datetime):
        kind = "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP"
        return exp.cast(exp.Literal.string(value.isoformat(" ")), exp.DataType.build(kind))
    if isinstance(value, date):
        return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.build("DATE"))
    return exp.Literal.string(str(value))


def any_not_null(columns: Sequence[str]) -> exp.Expression:
    """`c1 IS NOT NULL OR c2 IS NOT NULL ...` over quoted columns."""
    conds: list[exp.Expression] = [exp.Not(this=exp.Is(this=col(c), expression=exp.null()))
                                   for c in columns]
    return cast(exp.Expression, exp.or_(*conds, copy=False)) if len(conds) > 1 else conds[0]


_SESSION_VARIABLE = re.compile(r"[a-z_]+")


def render_session_settings(settings: Mapping[str, int | float], dialect: str) -> str:
    """`SET SESSION a = 1, b = 2`: the session setup (timeouts) an adapter runs once per new
    connection. Only variable names and numbers go in, so it can set nothing else; `render`,
    the gate every query passes, refuses SET.

    >>> render_session_settings({"max_statement_time": 1.5, "lock_wait_timeout": 2}, "mysql")
    'SET SESSION max_statement_time = 1.5, SESSION lock_wait_timeout = 2'
    """
    items: list[exp.Expression] = []
    for name, value in settings.items():
        if not _SESSION_VARIABLE.fullmatch(name) or isinstance(value, bool):
            raise ValueError(f"Not a session variable setting: {name!r} = {value!r}")
        assignment = exp.EQ(this=exp.var(name), expression=exp.Literal.number(value))
        items.append(exp.SetItem(this=assignment, kind="SESSION"))
    return _generate(exp.Set(expressions=items), dialect)


def render_kill_query(session_id: int, dialect: str) -> str:
    """`KILL QUERY <id>`: how `cancel()` stops a MySQL/MariaDB statement, from a second
    connection. Only an integer goes in: it stops that session's statement, nothing else.

    >>> render_kill_query(42, "mysql")
    'KILL QUERY 42'
    """
    if isinstance(session_id, bool) or not isinstance(session_id, int):
        raise ValueError(f"Not a session id: {session_id!r}")
    return _generate(exp.Kill(this=exp.Literal.number(session_id), kind="QUERY"), dialect)
