"""The loads a repeat sweep reads, picked by their ids from dlt's `_dlt_loads`.

A repeat profile query bounded `_dlt_load_id > last` cannot skip the last profiled load's rows:
DuckDB keeps only the first 8 characters of a text column's min and max per row group, so a
row group of load `1796308000.0000000` may hold any id from `17963080` on, the bound included.
Measured on 4 loads of 500k rows and a new one of 40k: `> last` read 540,000 rows, the same
filter as `_dlt_load_id IN (new id)` 48,480 (a bound parameter prunes as a literal does).

So a repeat sweep first reads the ids of the completed loads (`status = 0`) from `_dlt_loads`,
ONE query per source for every table, and each table's profile query lists the ids it reads
again (`profiles.refresh.Reread.among`). A table with none reads nothing. The schema each
load loaded tells a detailed sweep whether a newer load of the source's own schema came
(else it reads the table's newest stored load again: `profiles.sweep`). Rows of a load not in
`_dlt_loads` yet (a load still running) are not read: the table's row count then differs from
the stored one less the loads read, and the table is profiled afresh, as for any rewrite.
Without a `_dlt_loads` table (tables not loaded by dlt), or with more than `MAX_LISTED` loads
to read, the bound stays a range.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sqlglot import exp

from dlt_contract_ops.destinations.sql import col

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput

log = logging.getLogger("dlt_contract_ops")
#: dlt's table of completed loads, and its columns (snake_case, as dlt names them)
LOADS_TABLE = "_dlt_loads"
#: a load dlt finished (`_dlt_loads.status`)
LOADED = 0
#: the most load ids one profile query lists; a table with more to read (one not loaded for
#: long while others were, often) keeps the range bound: a warehouse caps a query's
#: parameters (BigQuery, Snowflake), and each count is a template of its own
MAX_LISTED = 500


def loads_query(table: exp.Table) -> exp.Expression:
    """The ids of the completed loads from a load id on (one parameter), oldest first, with
    the name of the schema each loaded.

    >>> from dlt_contract_ops.destinations.sql import ident
    >>> loads_query(exp.Table(this=ident("_dlt_loads"))).sql("duckdb")
    'SELECT "load_id", "schema_name" FROM "_dlt_loads" WHERE "status" = 0 AND "load_id" >= ? \
ORDER BY "load_id"'
    """
    return (
        exp.select(col("load_id"), col("schema_name"), copy=False)
        .from_(table, copy=False)
        .where(exp.and_(
            exp.EQ(this=col("status"), expression=exp.Literal.number(LOADED)),
            exp.GTE(this=col("load_id"), expression=exp.Placeholder()),
        ), copy=False)
        .order_by(col("load_id"), copy=False)
    )


def completed_loads(ctx: SourceInput, since: str) -> dict[str, str] | None:
    """The loads dlt completed in the source's dataset from `since` on (load id text): load
    id -> the name of the schema it loaded, oldest first; None where the dataset has no
    `_dlt_loads` or it cannot be read (the sweep then bounds its queries by range)."""
    if LOADS_TABLE not in ctx.live:
        return None
    try:
        rows = ctx.adapter.run(loads_query(ctx.adapter.table(LOADS_TABLE)), [since], "loads",
                               owned=True)
    except Exception as exc:  # a range bound reads the same loads, only more rows
        log.debug("`%s` unreadable (%s): profiles are bounded by load id range", LOADS_TABLE,
                  exc)
        return None
    return {str(row[0]): str(row[1]) for row in sorted(rows, key=lambda row: str(row[0]))}
