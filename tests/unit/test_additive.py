"""The additive detector and the columns that are never drift, as case tables."""

from __future__ import annotations

import pytest

from dlt_contract_ops.core.additive import detect_additive, ignored_columns
from dlt_contract_ops.core.columns import (
    DLT_PREFIX,
    ExpectedColumn,
    ExpectedTable,
    LiveColumn,
    LiveTable,
)


def _expected(*names: str) -> ExpectedTable:
    return ExpectedTable("OrderItems", "order_items", tuple(ExpectedColumn(n) for n in names))


def _live(**columns: str) -> LiveTable:
    return LiveTable("order_items", {n: LiveColumn(n, t) for n, t in columns.items()})


SYSTEM = {"_dlt_id": "VARCHAR", "_dlt_load_id": "VARCHAR"}


@pytest.mark.parametrize(
    ("expected", "live", "ignored", "drifted"),
    [
        # clean: the model knows every live column, system columns do not count
        (("id", "sku"), {"id": "BIGINT", "sku": "VARCHAR", **SYSTEM}, (), None),
        # one column behind the model's back
        (("id",), {"id": "BIGINT", "payload_size": "BIGINT", **SYSTEM}, (), ("payload_size",)),
        # anything with the `_dlt_` prefix is dlt's, even a column dlt never made
        (("id",), {"id": "BIGINT", "_dlt_parent_id": "VARCHAR", "_dlt_x": "INT"}, (), None),
        # the prefix is a prefix: `dlt_` alone or `x_dlt_` is user data
        (("id",), {"id": "BIGINT", "dlt_flag": "BOOLEAN", "x_dlt_y": "INT"}, (),
         ("dlt_flag", "x_dlt_y")),
        # injected (project + source) and the load timestamp are subtracted
        (("id",), {"id": "BIGINT", "ingested_by": "VARCHAR", "tenant_id": "VARCHAR",
                   "loaded_at": "TIMESTAMP", "extra": "INT"},
         ("ingested_by", "tenant_id", "loaded_at"), ("extra",)),
        # ignored names that are not live change nothing
        (("id",), {"id": "BIGINT"}, ("ingested_by",), None),
        # odd identifiers are data, sorted by code point
        (("id",), {"id": "BIGINT", "userId": "VARCHAR", "größe": "INTEGER",
                   "ip-address": "VARCHAR", 'Weird "Name"': "VARCHAR"}, (),
         ('Weird "Name"', "größe", "ip-address", "userId")),
        # names compare exactly: the model's `user_id` does not cover a live `userId`
        (("user_id",), {"user_id": "VARCHAR", "userId": "VARCHAR"}, (), ("userId",)),
        # expected columns that are not live are not additive drift
        (("id", "gone"), {"id": "BIGINT"}, (), None),
        # an empty live table
        (("id",), {}, (), None),
    ],
)
def test_detect_additive(
    expected: tuple[str, ...],
    live: dict[str, str],
    ignored: tuple[str, ...],
    drifted: tuple[str, ...] | None,
) -> None:
    drift = detect_additive(_expected(*expected), _live(**live), ignored=frozenset(ignored))
    if drifted is None:
        assert drift is None
        return
    assert drift is not None
    assert drift.columns == drifted
    assert drift.columns == tuple(sorted(drift.columns))
    assert drift.column_types == {c: live[c] for c in drifted}
    assert (drift.resource, drift.table) == ("OrderItems", "order_items")


def test_one_drift_per_table_whatever_the_column_count() -> None:
    live = {f"c{i:02d}": "INT" for i in range(40)}
    drift = detect_additive(_expected(), _live(**live))
    assert drift is not None
    assert drift.columns == tuple(sorted(live))


def test_system_prefix_is_a_parameter() -> None:
    live = _live(id="BIGINT", _airbyte_raw_id="VARCHAR", _dlt_id="VARCHAR")
    drift = detect_additive(_expected("id"), live, system_prefix="_airbyte_")
    assert drift is not None
    assert drift.columns == ("_dlt_id",)
    assert DLT_PREFIX == "_dlt_"


@pytest.mark.parametrize(
    ("injected", "load_timestamp_column", "expected"),
    [
        ((), None, frozenset()),
        (("ingested_by",), None, frozenset({"ingested_by"})),
        ((), "loaded_at", frozenset({"loaded_at"})),
        (("ingested_by", "tenant_id"), "loaded_at",
         frozenset({"ingested_by", "tenant_id", "loaded_at"})),
        (("loaded_at",), "loaded_at", frozenset({"loaded_at"})),
        ((), "", frozenset()),
    ],
)
def test_ignored_columns(
    injected: tuple[str, ...], load_timestamp_column: str | None, expected: frozenset[str]
) -> None:
    assert ignored_columns(injected, load_timestamp_column) == expected
