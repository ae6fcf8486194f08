"""Which column a table is windowed and ordered on."""

from __future__ import annotations

import pytest

from dlt_contract_ops.core.columns import LOAD_ID, LiveColumn, LiveTable, TimeAxis
from dlt_contract_ops.core.timeaxis import choose_time_axis


def _live(*names: str) -> LiveTable:
    return LiveTable("t", {n: LiveColumn(n, "X") for n in names})


@pytest.mark.parametrize(
    ("columns", "load_timestamp_column", "partition_column", "expected"),
    [
        # the configured load timestamp wins when the table has it
        (("id", "loaded_at", "day", LOAD_ID), "loaded_at", "day",
         TimeAxis("loaded_at", "timestamp")),
        # configured but absent from this table: the destination's partition column
        (("id", "day", LOAD_ID), "loaded_at", "day", TimeAxis("day", "partition")),
        # a partition column the table does not report is not used
        (("id", LOAD_ID), None, "day", TimeAxis(LOAD_ID, "load_id")),
        # nothing configured, no partition: dlt's load id
        (("id", LOAD_ID), None, None, TimeAxis(LOAD_ID, "load_id")),
        # a table without any of them has no time axis
        (("id",), "loaded_at", "day", None),
        ((), None, None, None),
        # an empty configured name is "not configured"
        (("id", "", LOAD_ID), "", None, TimeAxis(LOAD_ID, "load_id")),
    ],
)
def test_choose_time_axis(
    columns: tuple[str, ...],
    load_timestamp_column: str | None,
    partition_column: str | None,
    expected: TimeAxis | None,
) -> None:
    assert choose_time_axis(_live(*columns), load_timestamp_column, partition_column) == expected
