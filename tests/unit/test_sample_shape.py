"""The sample query's shape: a bounded slice of the newest rows first, then ONE window order
shared by every drifted column's pick, so a wide drifted table costs one sort, not one per
column (300 columns x 3,000 rows took 40 s on PostgreSQL with a window sort per column).
"""

from __future__ import annotations

import pytest
from sqlglot import exp

from dlt_contract_ops.core.columns import TimeAxis
from dlt_contract_ops.detectors.queries import sample_query

TABLE = exp.to_table('"ds"."wide"', dialect="postgres")
COLUMNS = [f"c{i}" for i in range(40)]
LOAD_ID = TimeAxis("_dlt_load_id", "load_id")
STAMP = TimeAxis("loaded_at", "timestamp")


def _windows(query: exp.Select) -> list[exp.Window]:
    """The per-column pick windows (not `MIN(axis) OVER ()`, which needs no order)."""
    return [w for w in query.find_all(exp.Window) if w.args.get("order") is not None]


@pytest.mark.parametrize(
    ("axis", "tiebreak"),
    [(LOAD_ID, "_dlt_id"), (STAMP, "_dlt_id"), (LOAD_ID, None), (None, "_dlt_id")],
)
def test_every_column_is_picked_over_one_shared_window_order(
    axis: TimeAxis | None, tiebreak: str | None
) -> None:
    query = sample_query(TABLE, COLUMNS, axis, tiebreak=tiebreak, max_rows=1000)

    windows = _windows(query)
    assert len(windows) == len(COLUMNS)  # one pick per drifted column...
    specs = {(w.args["order"].sql("postgres"), str(w.args.get("spec"))) for w in windows}
    assert len(specs) == 1, specs  # ...all over the same order: one sort
    [(order, frame)] = specs
    assert "CASE" not in order  # no per-column "non-NULL first" key
    assert "ROWS" in frame.upper()  # a running count per row, not per group of peers


@pytest.mark.parametrize("axis", [LOAD_ID, STAMP])
def test_the_pick_reads_only_the_bounded_slice_of_newest_rows(axis: TimeAxis) -> None:
    query = sample_query(TABLE, COLUMNS, axis, tiebreak="_dlt_id", since=True, max_rows=1000)

    [table] = list(query.find_all(exp.Table))  # the table is read once, in the slice
    slice_ = table.find_ancestor(exp.Select)
    assert slice_ is not None
    assert slice_.args["limit"].expression.sql() == "1000"
    newest = slice_.args["order"].sql("postgres")
    assert newest == f'ORDER BY "{axis.column}" DESC NULLS LAST, "_dlt_id" NULLS FIRST'
    # the windows sit above the slice: they never see more than its rows
    for window in _windows(query):
        assert window.find_ancestor(exp.Select) is not slice_
