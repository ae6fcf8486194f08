"""Declared-side drift: what the model declares that the live table lost or cannot hold.

- `missing`: a model field none of whose landed names exists in the live table.
- `type`: a live column whose destination type, read back through dlt's type mapping for
  that destination, with the precision, scale or length its catalog reports, cannot hold
  every value of the model's type (`core.capacity.holds`). Widenings that still hold every
  value (an integer in a DECIMAL(38,0), a date in a TIMESTAMP) are not drift.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from dlt_contract_ops.core.capacity import DEFAULT_DECIMAL, holds, narrowing_reason
from dlt_contract_ops.core.columns import ExpectedTable, LiveTable

#: integer types dlt's mappers may not know (they read as `bigint`; their width is the
#: adapter's to report, `LiveColumn.precision`)
_INTEGERS = frozenset(
    {"TINYINT", "INT1", "SMALLINT", "INT2", "MEDIUMINT", "INTEGER", "INT", "INT4"}
)

#: floating-point types dlt's mappers may not know (they read as `double`; their
#: significand bits are the adapter's to report)
_FLOATS = frozenset(
    {"REAL", "FLOAT", "FLOAT4", "FLOAT8", "FLOAT64", "DOUBLE", "DOUBLE PRECISION"}
)

LiveTypeReader = Callable[[str], "str | None"]
"""Maps a destination type string to a dlt data type, or None when it cannot be judged."""


@dataclass(frozen=True)
class MissingDrift:
    resource: str
    table: str
    columns: tuple[str, ...]
    expected_types: dict[str, str]


@dataclass(frozen=True)
class TypeDrift:
    resource: str
    table: str
    columns: tuple[str, ...]
    live_types: dict[str, str]
    expected_types: dict[str, str]
    #: per column, what the live type cannot hold (`core.capacity.narrowing_reason`)
    reasons: dict[str, str]


def detect_missing(expected: ExpectedTable, live: LiveTable) -> MissingDrift | None:
    """Model fields with no landed column in `live` (sorted), or None.

    A field with a `serialization_alias` lands under two names; either one present is enough.
    """
    by_field: dict[str, list[str]] = {}
    types: dict[str, str] = {}
    for c in expected.columns:
        by_field.setdefault(c.field or c.name, []).append(c.name)
        types.setdefault(c.field or c.name, c.data_type or "")
    missing = sorted(f for f, names in by_field.items() if not any(live.has(n) for n in names))
    if not missing:
        return None
    return MissingDrift(
        expected.resource, expected.table, tuple(missing), {f: types[f] for f in missing}
    )


def _base(db_type: str) -> str:
    return re.sub(r"\s*\(.*\)\s*$", "", db_type.strip()).upper()


def detect_type(
    expected: ExpectedTable,
    live: LiveTable,
    read_type: LiveTypeReader,
    *,
    default_decimal: tuple[int, int] = DEFAULT_DECIMAL,
) -> TypeDrift | None:
    """Live columns whose type cannot hold every value of the declared type (sorted), or
    None. `default_decimal` is what an undeclared `Decimal` field lands as."""
    drifted: dict[str, tuple[str, str, str]] = {}
    for c in expected.columns:
        live_col = live.columns.get(c.name)
        if live_col is None or not c.data_type:
            continue
        live_type = read_type(live_col.data_type)
        if live_type is None:  # a type dlt does not know: no judgement, no false alarm
            continue
        if not holds(c, live_type, live_col, default_decimal=default_decimal):
            reason = narrowing_reason(c, live_col, default_decimal=default_decimal)
            drifted[c.name] = (live_col.data_type, c.data_type, reason)
    if not drifted:
        return None
    names = tuple(sorted(drifted))
    return TypeDrift(
        expected.resource,
        expected.table,
        names,
        {n: drifted[n][0] for n in names},
        {n: drifted[n][1] for n in names},
        {n: drifted[n][2] for n in names},
    )


_TEXT_TYPES = frozenset(
    {"TEXT", "VARCHAR", "CHARACTER VARYING", "CHAR", "CHARACTER", "STRING", "NVARCHAR",
     "NCHAR", "LONGTEXT", "MEDIUMTEXT", "TINYTEXT", "CLOB", "BPCHAR"}
)


def type_reader(mapper: object) -> LiveTypeReader:
    """Wrap a dlt TypeMapper: known destination types map, unknown ones yield None.

    dlt's mappers fall back to `text` for any type they do not know; a fallback is not a
    judgement, so only a type that really is textual counts as `text`.
    """
    from_dest = getattr(mapper, "from_destination_type")  # noqa: B009 (duck-typed mapper)
    known = {str(k).upper(): v for k, v in (getattr(mapper, "dbt_to_sct", {}) or {}).items()}
    seen: dict[str, str | None] = {}  # a dataset has thousands of columns, a few types

    def read(db_type: str) -> str | None:
        if db_type not in seen:
            seen[db_type] = _read(db_type)
        return seen[db_type]

    def mapped_by_dlt(db_type: str) -> str | None:
        try:
            mapped = from_dest(db_type, None, None).get("data_type")
        except Exception:
            return None
        return str(mapped) if mapped else None

    def _read(db_type: str) -> str | None:
        base = _base(db_type)
        mapped = None
        # a size spelled into the name (`NUMBER(19,0)`) may not parse: then the bare name
        for candidate in dict.fromkeys((db_type, re.sub(r"\s*\(.*\)\s*$", "", db_type))):
            mapped = mapped_by_dlt(candidate)
            if mapped == "text" and known.get(base) != "text" and base not in _TEXT_TYPES:
                mapped = None  # dlt's fallback for a type it does not know: no judgement
            if mapped is not None:
                break
        if mapped is None:
            mapped = known.get(base)
        if mapped is None and base in _INTEGERS:
            return "bigint"
        if mapped is None and base in _FLOATS:  # `REAL`: dlt maps only its own double
            return "double"
        return mapped

    return read
