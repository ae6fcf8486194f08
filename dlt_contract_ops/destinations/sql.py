"""SQL built as sqlglot expressions and rendered per dialect through one function.

Every identifier is quoted here (`ident`), every value is a bound parameter or, for the
copy-pasteable `reproduce` text, a literal rendered by sqlglot. No SQL text is built by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from dlt_contract_ops.errors import UnsafeQueryError

_FORBIDDEN = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Merge,
    exp.Command,
    exp.TruncateTable,
)


def ident(name: str) -> exp.Identifier:
    """A quoted identifier: odd names (dashes, quotes, unicode, mixed case) are data."""
    return exp.to_identifier(name, quoted=True)


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.Column(this=ident(name), table=ident(table) if table else None)


def table_ref(table: str, dataset: str | None, catalog: str | None = None) -> exp.Table:
    return exp.Table(
        this=ident(table),
        db=ident(dataset) if dataset else None,
        catalog=ident(catalog) if catalog else None,
    )


def param() -> exp.Placeholder:
    return exp.Placeholder()


def render(query: exp.Expression, dialect: str) -> str:
    """Render a read-only query for `dialect`; refuse anything but a SELECT.

    >>> from sqlglot import exp
    >>> render(exp.select("1"), "duckdb")
    'SELECT 1'
    >>> render(exp.delete("t"), "duckdb")
    Traceback (most recent call last):
    ...
    dlt_contract_ops.errors.UnsafeQueryError: Refusing to run a Delete statement: ...
    """
    root = query
    while isinstance(root, exp.With | exp.Subquery | exp.Paren):
        root = root.this
    if not isinstance(root, exp.Select | exp.Union):
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
    return query.sql(dialect=dialect)


def inline_params(query: exp.Expression, params: Sequence[Any]) -> exp.Expression:
    """Replace placeholders, in order, by literals: for the `reproduce` text a user pastes."""
    values = iter(params)

    def _swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Placeholder):
            return literal(next(values))
        return node

    return query.copy().transform(_swap)


def literal(value: Any) -> exp.Expression:
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def any_not_null(columns: Sequence[str]) -> exp.Expression:
    conds: list[exp.Expression] = [exp.Not(this=exp.Is(this=col(c), expression=exp.null()))
                                   for c in columns]
    return exp.or_(*conds) if len(conds) > 1 else conds[0]
