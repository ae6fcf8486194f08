"""The `type` rule as a case table: can the live column hold every value of the model's
type? Pure (`core.capacity`), sizes as the adapters report them (`LiveColumn`)."""

from __future__ import annotations

import pytest

from dlt_contract_ops.core.capacity import (
    decimal_needed,
    holds,
    integer_digits,
    model_type_text,
    narrowing_reason,
)
from dlt_contract_ops.core.columns import ExpectedColumn, LiveColumn, LiveTable
from dlt_contract_ops.core.declared import detect_type


def bits(db_type: str, n: int) -> LiveColumn:
    return LiveColumn("c", db_type, precision=n, scale=0, radix=2)


def digits(db_type: str, p: int | None, s: int | None = 0) -> LiveColumn:
    return LiveColumn("c", db_type, precision=p, scale=s, radix=10 if p is not None else None)


def chars(db_type: str, n: int | None) -> LiveColumn:
    return LiveColumn("c", db_type, length=n)


BIGINT = ExpectedColumn("c", "bigint")
DOUBLE = ExpectedColumn("c", "double")
TEXT = ExpectedColumn("c", "text")
TEXT_3 = ExpectedColumn("c", "text", precision=3)  # Field(max_length=3)
TEXT_5 = ExpectedColumn("c", "text", precision=5)
DECIMAL = ExpectedColumn("c", "decimal")  # dlt's default (38,9)
DECIMAL_10_2 = ExpectedColumn("c", "decimal", precision=10, scale=2)
JSON = ExpectedColumn("c", "json")


@pytest.mark.parametrize(
    ("model", "live_type", "live", "ok"),
    [
        # a Python int lands as a 64-bit integer
        (BIGINT, "bigint", bits("BIGINT", 64), True),
        (BIGINT, "bigint", bits("HUGEINT", 128), True),
        (BIGINT, "bigint", LiveColumn("c", "BIGINT"), True),  # no size reported: no judgement
        (BIGINT, "bigint", bits("INTEGER", 32), False),
        (BIGINT, "bigint", bits("SMALLINT", 16), False),
        (BIGINT, "decimal", digits("NUMERIC(38,0)", 38), True),
        (BIGINT, "decimal", digits("NUMERIC(19,0)", 19), True),  # 9223372036854775807
        (BIGINT, "decimal", digits("NUMERIC(18,0)", 18), False),
        (BIGINT, "decimal", digits("NUMERIC(3,0)", 3), False),
        (BIGINT, "decimal", digits("NUMERIC(5,2)", 5, 2), False),
        (BIGINT, "decimal", digits("DECIMAL(4,1)", 4, 1), False),
        (BIGINT, "decimal", digits("NUMERIC(38,9)", 38, 9), True),  # 29 digits before the point
        (BIGINT, "decimal", digits("NUMERIC(20,2)", 20, 2), False),  # 18 before the point
        (BIGINT, "decimal", digits("NUMERIC", None), True),  # unconstrained
        (BIGINT, "double", bits("REAL", 24), False),  # loses integers above 2**24
        (BIGINT, "double", bits("DOUBLE PRECISION", 53), False),  # ... above 2**53
        (BIGINT, "text", chars("VARCHAR", None), False),
        # a Python float lands as a double
        (DOUBLE, "double", bits("DOUBLE", 53), True),
        (DOUBLE, "double", LiveColumn("c", "FLOAT64"), True),
        (DOUBLE, "double", bits("REAL", 24), False),
        (DOUBLE, "bigint", bits("BIGINT", 64), False),
        (DOUBLE, "decimal", digits("NUMERIC(38,9)", 38, 9), False),
        # a str is unbounded unless the model says otherwise
        (TEXT, "text", chars("TEXT", None), True),
        (TEXT, "text", chars("VARCHAR", None), True),
        (TEXT, "text", chars("VARCHAR(3)", 3), False),
        (TEXT, "text", chars("VARCHAR(65535)", 65535), False),
        (TEXT_3, "text", chars("VARCHAR(3)", 3), True),
        (TEXT_3, "text", chars("VARCHAR(2)", 2), False),
        (TEXT_5, "text", chars("VARCHAR(3)", 3), False),
        (TEXT_3, "text", chars("TEXT", None), True),  # widening
        (JSON, "json", LiveColumn("c", "JSONB"), True),
        (JSON, "text", chars("LONGTEXT", None), True),  # how dlt lands JSON on MariaDB
        (JSON, "text", chars("VARCHAR(10)", 10), False),
        # a Decimal: declared max_digits/decimal_places, else dlt's default (38,9)
        (DECIMAL, "decimal", digits("NUMERIC(38,9)", 38, 9), True),
        (DECIMAL, "decimal", digits("NUMERIC", None), True),
        (DECIMAL, "decimal", digits("NUMERIC(12,2)", 12, 2), False),
        (DECIMAL, "decimal", digits("NUMERIC(38,0)", 38, 0), False),  # rounds the fraction
        (DECIMAL_10_2, "decimal", digits("NUMERIC(10,2)", 10, 2), True),
        (DECIMAL_10_2, "decimal", digits("NUMERIC(12,2)", 12, 2), True),
        (DECIMAL_10_2, "decimal", digits("NUMERIC(12,4)", 12, 4), True),
        (DECIMAL_10_2, "decimal", digits("NUMERIC(11,4)", 11, 4), False),  # 7 before the point
        (DECIMAL_10_2, "decimal", digits("NUMERIC(8,2)", 8, 2), False),
        (DECIMAL_10_2, "decimal", digits("NUMERIC(10,1)", 10, 1), False),
        (DECIMAL_10_2, "double", bits("DOUBLE", 53), False),
        # families: no size makes a wrong family right
        (ExpectedColumn("c", "date"), "timestamp", LiveColumn("c", "TIMESTAMP"), True),
        (ExpectedColumn("c", "timestamp"), "date", LiveColumn("c", "DATE"), False),
        (ExpectedColumn("c", "bool"), "bigint", bits("BIGINT", 64), False),
    ],
)
def test_holds(model: ExpectedColumn, live_type: str, live: LiveColumn, ok: bool) -> None:
    assert holds(model, live_type, live) is ok


def test_integer_digits_is_the_largest_signed_integer() -> None:
    assert integer_digits(64) == len(str(2**63 - 1)) == 19
    assert integer_digits(16) == 5


@pytest.mark.parametrize(
    ("model", "needed"),
    [
        (ExpectedColumn("c", "decimal", precision=10, scale=2), (10, 2)),
        (ExpectedColumn("c", "decimal"), (38, 9)),
        (ExpectedColumn("c", "decimal", scale=2), (31, 2)),  # the default's 29 before
        (ExpectedColumn("c", "decimal", precision=5), (10, 5)),  # 12345 and 0.12345
    ],
)
def test_decimal_needed(model: ExpectedColumn, needed: tuple[int, int]) -> None:
    assert decimal_needed(model) == needed


@pytest.mark.parametrize(
    ("model", "live", "reason"),
    [
        (ExpectedColumn("amount_cents", "bigint"), digits("NUMERIC(5,2)", 5, 2),
         "amount_cents: live NUMERIC(5,2) cannot hold the model's bigint (it needs an integer "
         "of 64 bits or a decimal with 19 digits before the point)"),
        (ExpectedColumn("code", "text"), chars("VARCHAR(3)", 3),
         "code: live VARCHAR(3) cannot hold the model's text (declare `Field(max_length=3)` on "
         "the field if 3 characters are enough)"),
        (ExpectedColumn("tag", "text", precision=5), chars("VARCHAR(3)", 3),
         "tag: live VARCHAR(3) cannot hold the model's text of up to 5 characters"),
        (ExpectedColumn("price", "decimal", precision=10, scale=2), digits("NUMERIC(8,2)", 8, 2),
         "price: live NUMERIC(8,2) cannot hold the model's decimal(10,2)"),
        (ExpectedColumn("rank", "bigint"), chars("TEXT", None),
         "rank: live TEXT cannot hold the model's bigint (it needs an integer of 64 bits or a "
         "decimal with 19 digits before the point)"),
    ],
)
def test_narrowing_reason(model: ExpectedColumn, live: LiveColumn, reason: str) -> None:
    assert narrowing_reason(model, live) == reason


def test_model_type_text() -> None:
    assert model_type_text(ExpectedColumn("c", "bigint")) == "bigint"
    assert model_type_text(ExpectedColumn("c", "binary", precision=16)) == (
        "binary of up to 16 bytes"
    )


def test_detect_type_reports_sizes_and_reasons() -> None:
    expected = (
        ExpectedColumn("a", "bigint", field="a"),
        ExpectedColumn("b", "text", field="b"),
        ExpectedColumn("c", "text", precision=3, field="c"),
    )
    from dlt_contract_ops.core.columns import ExpectedTable

    live = LiveTable("t", {
        "a": LiveColumn("a", "NUMERIC(5,2)", precision=5, scale=2, radix=10),
        "b": LiveColumn("b", "VARCHAR(3)", length=3),
        "c": LiveColumn("c", "VARCHAR(3)", length=3),
    })
    reader = {"NUMERIC(5,2)": "decimal", "VARCHAR(3)": "text"}.get
    drift = detect_type(ExpectedTable("r", "t", expected), live, reader)
    assert drift is not None
    assert drift.columns == ("a", "b")
    assert drift.live_types == {"a": "NUMERIC(5,2)", "b": "VARCHAR(3)"}
    assert drift.reasons["a"].startswith("a: live NUMERIC(5,2) cannot hold the model's bigint")
