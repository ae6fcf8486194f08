"""Whether a live column holds every value of the model's type: the `type` rule, pure.

The model's side is an `ExpectedColumn`: a dlt data type and the size the model declares, in
dlt's own convention (`precision` is a text's `max_length`, a decimal's `max_digits`; `scale`
its `decimal_places`). The live side is the dlt data type the destination type reads as,
with the size its catalog reports (`LiveColumn`: precision in bits or digits, scale, length).

A column narrowed below the model's type is drift: a `bigint` in `NUMERIC(5,2)` (three
digits before the point), in `REAL` (integers above 2**24 are rounded) or in `INTEGER`; a
`str` in `VARCHAR(3)` unless the model declares `Field(max_length=m)` with m <= 3. A widening
never is (`VARCHAR(3)` to `TEXT`, `BIGINT` to `NUMERIC(38,0)`), nor a size the destination
does not report (an unconstrained `NUMERIC`, a `VARCHAR` without length).
"""

from __future__ import annotations

from dlt_contract_ops.core.columns import ExpectedColumn, LiveColumn

#: dlt's decimal precision and scale on every SQL destination it supports: what a
#: `Decimal` field without `max_digits`/`decimal_places` lands as
DEFAULT_DECIMAL: tuple[int, int] = (38, 9)
#: bits of the integers a Python `int` field lands as (dlt's `bigint`)
BIGINT_BITS = 64
#: significand bits of a double, what a `float` field lands as
DOUBLE_BITS = 53

#: dlt data type of the model -> dlt data types of live columns that can hold its values
#: (the size then decides, `holds`)
HOLDS: dict[str, frozenset[str]] = {
    "bigint": frozenset({"bigint", "decimal", "wei"}),
    "double": frozenset({"double"}),
    "decimal": frozenset({"decimal", "wei"}),
    "wei": frozenset({"wei"}),
    "bool": frozenset({"bool"}),
    "text": frozenset({"text"}),
    "timestamp": frozenset({"timestamp"}),
    "date": frozenset({"date", "timestamp"}),
    "time": frozenset({"time"}),
    # dlt itself lands JSON as text where a destination has no JSON type (MariaDB LONGTEXT)
    "json": frozenset({"json", "text"}),
    "binary": frozenset({"binary"}),
}


def integer_digits(bits: int) -> int:
    """Decimal digits of the largest signed integer of `bits` bits.

    >>> integer_digits(64), integer_digits(32), integer_digits(8)
    (19, 10, 3)
    """
    return len(str(2 ** (bits - 1) - 1))


def decimal_needed(
    model: ExpectedColumn, default: tuple[int, int] = DEFAULT_DECIMAL
) -> tuple[int, int]:
    """(precision, scale) a numeric needs to hold every value of a decimal field.

    Undeclared parts are dlt's default's: `decimal_places=2` alone keeps the default's 29
    digits before the point; `max_digits=5` alone allows 12345 and 0.12345, so both sides.

    >>> decimal_needed(ExpectedColumn("p", "decimal", precision=10, scale=2))
    (10, 2)
    >>> decimal_needed(ExpectedColumn("p", "decimal"))
    (38, 9)
    >>> decimal_needed(ExpectedColumn("p", "decimal", precision=5))
    (10, 5)
    """
    precision, scale = model.precision, model.scale
    if precision is None and scale is None:
        return default
    if precision is None:
        assert scale is not None
        return default[0] - default[1] + scale, scale
    if scale is None:
        return 2 * precision, precision
    return precision, scale


def _holds_integer(live: LiveColumn, bits: int) -> bool:
    if live.precision is None:
        return True
    if live.radix == 2:
        return live.precision >= bits
    # a decimal (or an integer sized in digits): its digits before the point must suffice
    return live.precision - (live.scale or 0) >= integer_digits(bits)


def _holds_decimal(live: LiveColumn, precision: int, scale: int) -> bool:
    if live.precision is None:  # an unconstrained NUMERIC holds any decimal
        return True
    live_scale = live.scale or 0
    return live_scale >= scale and live.precision - live_scale >= precision - scale


def holds(
    model: ExpectedColumn,
    live_type: str,
    live: LiveColumn,
    *,
    default_decimal: tuple[int, int] = DEFAULT_DECIMAL,
) -> bool:
    """Whether `live` (read as dlt type `live_type`) holds every value of `model`'s type.

    >>> holds(ExpectedColumn("a", "bigint"), "decimal",
    ...       LiveColumn("a", "NUMERIC(5,2)", precision=5, scale=2, radix=10))
    False
    >>> holds(ExpectedColumn("a", "bigint"), "decimal",
    ...       LiveColumn("a", "NUMERIC(38,0)", precision=38, scale=0, radix=10))
    True
    """
    expected = model.data_type or ""
    if live_type not in HOLDS.get(expected, frozenset({expected})):
        return False
    if expected == "bigint":
        return _holds_integer(live, model.precision or BIGINT_BITS)
    if expected == "double":
        return not (live.radix == 2 and live.precision is not None
                    and live.precision < DOUBLE_BITS)
    if expected == "decimal":
        return _holds_decimal(live, *decimal_needed(model, default_decimal))
    if expected in ("text", "binary"):
        return live.length is None or (
            model.precision is not None and model.precision <= live.length
        )
    if expected == "json":  # a JSON document has no declared length
        return live.length is None
    return True


def model_type_text(
    model: ExpectedColumn, *, default_decimal: tuple[int, int] = DEFAULT_DECIMAL
) -> str:
    """The model's type as a finding says it (`bigint`, `text of up to 5 characters`).

    >>> model_type_text(ExpectedColumn("t", "text", precision=5))
    'text of up to 5 characters'
    >>> model_type_text(ExpectedColumn("p", "decimal", precision=10, scale=2))
    'decimal(10,2)'
    """
    expected = model.data_type or "?"
    if expected in ("text", "binary") and model.precision is not None:
        unit = "characters" if expected == "text" else "bytes"
        return f"{expected} of up to {model.precision} {unit}"
    if expected == "decimal":
        precision, scale = decimal_needed(model, default_decimal)
        return f"decimal({precision},{scale})"
    return expected


def _hint(model: ExpectedColumn, live: LiveColumn) -> str:
    """What the model needs, or what to declare when the narrow column is what was meant."""
    expected = model.data_type
    if expected == "bigint":
        bits = model.precision or BIGINT_BITS
        return (f"it needs an integer of {bits} bits or a decimal with {integer_digits(bits)} "
                "digits before the point")
    if expected == "double":
        return "it needs a double-precision float"
    if expected in ("text", "binary") and model.precision is None and live.length is not None:
        unit = "characters" if expected == "text" else "bytes"
        return (f"declare `Field(max_length={live.length})` on the field if {live.length} "
                f"{unit} are enough")
    if expected == "decimal" and model.precision is None and model.scale is None:
        return "dlt's default; declare `max_digits`/`decimal_places` if less will do"
    return ""


def narrowing_reason(
    model: ExpectedColumn,
    live: LiveColumn,
    *,
    default_decimal: tuple[int, int] = DEFAULT_DECIMAL,
) -> str:
    """One line: which live type cannot hold which model type, and what it needs.

    >>> narrowing_reason(ExpectedColumn("amount_cents", "bigint"),
    ...                  LiveColumn("amount_cents", "NUMERIC(5,2)", precision=5, scale=2))
    "amount_cents: live NUMERIC(5,2) cannot hold the model's bigint (it needs an integer of \
64 bits or a decimal with 19 digits before the point)"
    """
    text = (f"{model.name}: live {live.data_type} cannot hold the model's "
            f"{model_type_text(model, default_decimal=default_decimal)}")
    hint = _hint(model, live)
    return f"{text} ({hint})" if hint else text
