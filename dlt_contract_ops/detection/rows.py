"""Where a per-table query reads a table's rows: the table itself, or for a child table its
rows joined to their root row's time axis (`nested_rows`). A sqlglot expression, rendered by
the adapter like every query."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from dlt_contract_ops.core.columns import ROW_ID
from dlt_contract_ops.destinations.sql import col

#: where a per-table query reads its rows: the table, or a child table's `nested_rows`
Rows = exp.Table | exp.Subquery

NESTED_ALIAS, ROOT_ALIAS = "c", "r"


def nested_rows(child: exp.Table, root: exp.Table, link: str, root_columns: Sequence[str]
                ) -> exp.Subquery:
    """A child table's rows with its root row's `root_columns` beside them (dlt's
    `_dlt_load_id`, or the root's time column): a child table has no load id of its own, so
    it is windowed through `link` (`_dlt_root_id`, or `_dlt_parent_id` one level down) to the
    root row's `_dlt_id`. Read like a table by every per-table query (coverage, samples).

    >>> from dlt_contract_ops.destinations.sql import ident
    >>> nested_rows(exp.Table(this=ident("o__items")), exp.Table(this=ident("o")),
    ...             "_dlt_root_id", ["_dlt_load_id"]).sql("duckdb")
    '(SELECT c.*, "r"."_dlt_load_id" AS "_dlt_load_id" FROM "o__items" AS c JOIN "o" AS r ON \
"c"."_dlt_root_id" = "r"."_dlt_id") AS t'
    """
    columns: list[exp.Expr] = [exp.Column(this=exp.Star(), table=exp.to_identifier(NESTED_ALIAS))]
    columns += [exp.alias_(col(c, ROOT_ALIAS), c, quoted=True) for c in root_columns]
    joined = (
        exp.select(*columns, copy=False)
        .from_(exp.alias_(child.copy(), NESTED_ALIAS), copy=False)
        .join(exp.alias_(root.copy(), ROOT_ALIAS), copy=False, on=exp.EQ(
            this=col(link, NESTED_ALIAS), expression=col(ROW_ID, ROOT_ALIAS)))
    )
    return joined.subquery("t", copy=False)
