"""What a finding's sample `reproduce` must be, read back from its text: a plain SELECT.

A person reads it and pastes it: the drifted columns, the time axis, the window, newest
first, `LIMIT 5`. No window function, no CASE (the internal sample query has both).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from dlt_contract_ops.destinations.sql import dialect_for


def plain_select(sql: str, dialect: str) -> exp.Select:
    """`sql` (SQLite's `ATTACH ...;` line left aside) parsed in `dialect`, checked to be a
    plain SELECT of at most five rows; the parsed tree, for a caller's own checks."""
    select = sqlglot.parse_one(sql.rpartition(";\n")[2], read=dialect_for(dialect))
    assert isinstance(select, exp.Select), sql
    assert select.find(exp.Window) is None, f"a window function in {sql}"
    assert select.find(exp.Case) is None, f"a CASE in {sql}"
    limit = select.args.get("limit")
    assert limit is not None, sql
    assert limit.expression == exp.Literal.number(5), sql
    return select


def shown_columns(select: exp.Select) -> list[str]:
    """The names the SELECT shows, in order."""
    return [e.alias_or_name for e in select.expressions]
