"""Which column a table is windowed and ordered on."""

from __future__ import annotations

from dlt_contract_ops.core.columns import LOAD_ID, LiveTable, TimeAxis


def choose_time_axis(
    live: LiveTable, load_timestamp_column: str | None, partition_column: str | None
) -> TimeAxis | None:
    """In order: the configured load timestamp column (already normalized) if the table has
    it; the destination's partition column; dlt's `_dlt_load_id`; else None.

    >>> from dlt_contract_ops.core.columns import LiveColumn
    >>> t = LiveTable("t", {"_dlt_load_id": LiveColumn("_dlt_load_id", "VARCHAR")})
    >>> choose_time_axis(t, "loaded_at", None)
    TimeAxis(column='_dlt_load_id', kind='load_id')
    """
    if load_timestamp_column and live.has(load_timestamp_column):
        return TimeAxis(load_timestamp_column, "timestamp")
    if partition_column and live.has(partition_column):
        return TimeAxis(partition_column, "partition")
    if live.has(LOAD_ID):
        return TimeAxis(LOAD_ID, "load_id")
    return None


def load_id_text(epoch: float) -> str:
    """An epoch as `_dlt_load_id` text, for comparing with load ids (see `TimeAxis`).

    >>> load_id_text(1732900000.5)
    '1732900000.5000000'
    """
    return f"{epoch:.7f}"
