"""The in-memory observer gives the shape dlt's own extract and normalize give the same batch:
names, types, variant columns, nested tables; on batches of any mix of values and key orders."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import dlt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlt_contract_ops.ingest.observe import Tap, observe, observe_with_pipeline

KEYS = ["order_id", "Gift-Wrap", "amount", "a b", "when", "items", "meta"]
SCALARS = st.one_of(
    st.none(),
    st.integers(min_value=-(10**9), max_value=10**9),
    st.sampled_from([2**53 + 1, -(2**62)]),  # epoch values dlt cannot make a date of
    st.floats(min_value=-1e9, max_value=1e9, allow_nan=False),
    st.booleans(),
    st.sampled_from(["web", "123", "12.5", "2026-03-18T10:00:00Z", "2026-03-18", "true", ""]),
    st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2030, 1, 1)),
    st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2030, 1, 1),
                 timezones=st.just(dt.timezone.utc)),
    st.decimals(min_value=-1000, max_value=1000, places=2, allow_nan=False),
)
VALUES = st.one_of(
    SCALARS,
    st.dictionaries(st.sampled_from(["sku", "qty"]), SCALARS, max_size=2),
    st.lists(st.dictionaries(st.sampled_from(["sku", "qty"]), SCALARS, min_size=1, max_size=2),
             max_size=2),
)
ROWS = st.lists(st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=1, max_size=5),
                min_size=1, max_size=12)


def _taps(rows: list[dict[str, Any]], repeat: int) -> list[Tap]:
    tap = Tap("orders", "orders", None)
    tap([dict(r) for _ in range(repeat) for r in rows])
    return [tap]


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder: Path = tmp_path_factory.mktemp("observe")
    return dlt.pipeline("observe", pipelines_dir=str(folder / "pipelines"),
                        destination=dlt.destinations.duckdb(str(folder / "w.duckdb")))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(rows=ROWS, repeat=st.integers(min_value=1, max_value=3))
def test_the_observer_sees_what_dlt_normalizes(pipeline: Any, rows: list[dict[str, Any]],
                                               repeat: int) -> None:
    try:
        expected = observe_with_pipeline(pipeline, _taps(rows, repeat), "shop", None)
    except Exception:  # dlt's own normalize fails on this batch (below)
        # e.g. an epoch number too large for a date column (OSError, OverflowError): the
        # in-memory path runs the same normalizer, so it must fail too, never pass a shape
        with pytest.raises(Exception):  # noqa: B017, PT011
            observe(pipeline, _taps(rows, repeat), "shop", None)
        return
    assert observe(pipeline, _taps(rows, repeat), "shop", None) == expected


def test_a_late_value_that_does_not_fit_still_makes_its_variant(pipeline: Any) -> None:
    # 1000 settled rows, then one text value in the bigint column: dlt makes a variant column
    rows = [{"id": i, "amount": i} for i in range(1000)] + [{"id": 1000, "amount": "9000c"}]
    shape, _ = observe(pipeline, _taps(rows, 1), "shop", None)
    assert shape["orders"]["amount__v_text"].data_type == "text"
    assert observe_with_pipeline(pipeline, _taps(rows, 1), "shop", None)[0] == shape


def test_coercible_text_in_a_bigint_column_adds_nothing(pipeline: Any) -> None:
    rows = [{"amount": 1}, {"amount": "2"}, {"amount": "3"}, {"amount": "x"}]
    shape, _ = observe(pipeline, _taps(rows, 1), "shop", None)
    assert set(shape["orders"]) == {"amount", "amount__v_text"}


def test_items_that_are_not_mappings_take_dlt_s_pipeline(pipeline: Any) -> None:
    from pydantic import BaseModel

    class Order(BaseModel):
        id: int
        price: Decimal

    tap = Tap("orders", "orders", None)
    tap([{"id": 1}, Order(id=2, price=Decimal("1.50"))])  # dlt dumps a model instance itself
    shape, tables = observe(pipeline, [tap], "shop", None)
    assert {c: s.data_type for c, s in shape["orders"].items()} == {
        "id": "bigint", "price": "decimal"}
    assert tables == {"orders": {"orders"}}


@pytest.mark.parametrize("tz", [dt.timezone.utc, None])
def test_a_timestamp_is_seen_as_dlt_normalizes_it(pipeline: Any, tz: dt.tzinfo | None) -> None:
    # the normalizer gets what a package gives it: on dlt 1.30 it took only pendulum
    # datetimes, and a Python datetime given as sent raised AttributeError (`in_tz`)
    when = dt.datetime(2000, 1, 1, tzinfo=tz)
    rows = [{"order_id": None}] * 4 + [{"order_id": None, "Gift-Wrap": None, "amount": when},
                                       {"amount": when, "when": when}]
    shape, _ = observe(pipeline, _taps(rows, 1), "shop", None)
    assert shape["orders"]["amount"].data_type == "timestamp"
    assert observe_with_pipeline(pipeline, _taps(rows, 1), "shop", None)[0] == shape
