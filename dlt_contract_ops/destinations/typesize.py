"""The size of a live column's type: precision, scale, radix and length.

Two ways in, one value out (`TypeSize`, copied onto `LiveColumn`):
- `catalog_size`: information_schema's own columns (`character_maximum_length`,
  `numeric_precision`, `numeric_precision_radix`, `numeric_scale`), read by the metadata query
  where the catalog has them (PostgreSQL, DuckDB, Snowflake). Integers and floats come in bits
  (radix 2), decimals in digits (radix 10).
- `parse_size`: the type as the catalog spells it, where the size is only in the name
  (MySQL/MariaDB `COLUMN_TYPE` `decimal(5,2)`, BigQuery `NUMERIC(5, 2)`, `STRING(3)`).

`spelled` puts a size the catalog reports apart back into the type's name, so a finding says
`NUMERIC(5,2)` where PostgreSQL's `data_type` says `numeric`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TypeSize:
    """`LiveColumn`'s size fields: None is no limit, or none the destination reports."""

    precision: int | None = None
    scale: int | None = None
    radix: int | None = None
    length: int | None = None


NO_SIZE = TypeSize()

#: integer types by name -> bits, where the name alone says it (MySQL `int(11)`: the
#: parenthesis is a display width, not a size)
INTEGER_BITS: dict[str, int] = {
    "TINYINT": 8, "INT1": 8, "SMALLINT": 16, "INT2": 16, "MEDIUMINT": 24, "INT": 32,
    "INTEGER": 32, "INT4": 32, "BIGINT": 64, "INT8": 64, "INT64": 64, "HUGEINT": 128,
}
#: floating-point types by name -> significand bits (MySQL's and DuckDB's FLOAT is 4 bytes)
FLOAT_BITS: dict[str, int] = {
    "REAL": 24, "FLOAT4": 24, "FLOAT": 24, "DOUBLE": 53, "DOUBLE PRECISION": 53,
    "FLOAT8": 53, "FLOAT64": 53,
}
#: exact numerics: `(precision, scale)` in digits
DECIMALS = frozenset({"DECIMAL", "NUMERIC", "NUMBER", "DEC", "FIXED", "BIGNUMERIC",
                      "BIGDECIMAL"})
#: character and binary types whose parenthesis is their length
LENGTHS = frozenset({"VARCHAR", "CHAR", "CHARACTER", "CHARACTER VARYING", "NVARCHAR", "NCHAR",
                     "BPCHAR", "STRING", "VARBINARY", "BINARY", "BYTES"})
#: types whose name is their length (MySQL/MariaDB; TEXT and up are what dlt creates)
NAMED_LENGTHS: dict[str, int] = {"TINYTEXT": 255, "TINYBLOB": 255}

_TYPE = re.compile(
    r"\s*(?P<base>[a-z][a-z0-9_ ]*?)\s*"
    r"(?:\(\s*(?P<first>\d+)\s*(?:,\s*(?P<second>\d+)\s*)?\))?"
    r"(?:\s+(?:unsigned|signed|zerofill))*\s*",
    re.IGNORECASE,
)


def parse_size(db_type: str) -> TypeSize:
    """The size a type's name spells.

    >>> parse_size("decimal(5,2) unsigned")
    TypeSize(precision=5, scale=2, radix=10, length=None)
    >>> parse_size("STRING(3)").length, parse_size("int(11)").precision
    (3, 32)
    >>> parse_size("NUMERIC") == NO_SIZE, parse_size("STRUCT<a INT64>") == NO_SIZE
    (True, True)
    """
    m = _TYPE.fullmatch(db_type)
    if m is None:
        return NO_SIZE
    base = " ".join(m["base"].upper().split())
    first = int(m["first"]) if m["first"] is not None else None
    if base in INTEGER_BITS:
        return TypeSize(INTEGER_BITS[base], radix=2)
    if base in FLOAT_BITS:
        return TypeSize(FLOAT_BITS[base], radix=2)
    if base in DECIMALS and first is not None:
        return TypeSize(first, int(m["second"] or 0), 10)
    if base in LENGTHS and first is not None:
        return TypeSize(length=first)
    if base in NAMED_LENGTHS:
        return TypeSize(length=NAMED_LENGTHS[base])
    return NO_SIZE


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def catalog_size(
    length: Any, precision: Any, radix: Any, scale: Any, *, unbounded_length: int | None = None
) -> TypeSize:
    """The size from information_schema's columns; a length of at least `unbounded_length`
    is the destination's unbounded text (Snowflake reports 16777216 for `TEXT`).

    >>> catalog_size(None, 5, 10, 2)
    TypeSize(precision=5, scale=2, radix=10, length=None)
    >>> catalog_size(16777216, None, None, None, unbounded_length=16777216) == NO_SIZE
    True
    """
    if length is not None:
        if unbounded_length is not None and int(length) >= unbounded_length:
            return NO_SIZE
        return TypeSize(length=int(length))
    if precision is None:
        return NO_SIZE
    return TypeSize(int(precision), _int(scale), _int(radix))


def spelled(db_type: str, size: TypeSize) -> str:
    """`db_type` with the size its catalog reports apart (`NUMERIC` -> `NUMERIC(5,2)`).

    >>> spelled("NUMERIC", TypeSize(5, 2, 10)), spelled("INTEGER", TypeSize(32, 0, 2))
    ('NUMERIC(5,2)', 'INTEGER')
    >>> spelled("CHARACTER VARYING", TypeSize(length=3))
    'CHARACTER VARYING(3)'
    >>> spelled("DECIMAL(4,1)", TypeSize(4, 1, 10))
    'DECIMAL(4,1)'
    """
    if "(" in db_type:
        return db_type
    if size.length is not None:
        return f"{db_type}({size.length})"
    if size.radix == 10 and size.precision is not None:
        return f"{db_type}({size.precision},{size.scale or 0})"
    return db_type
