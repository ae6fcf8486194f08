"""Declared-side drift: what the model declares that the live table lost or cannot hold.

- `missing`: a model field none of whose landed names exists in the live table.
- `type`: a live column whose destination type, read back through dlt's type mapping for
  that destination, cannot hold the model's type. Widenings that still hold every value
  (an integer in a DECIMAL, a date in a TIMESTAMP) are not drift.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from dlt_contract_ops.core.columns import ExpectedTable, LiveTable

#: dlt data type of the model -> dlt data types of live columns that hold every value of it
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

#: integer types narrower than the 64 bits a Python `int` field lands as
_NARROW_INTS: dict[str, int] = {
    "TINYINT": 8,
    "INT1": 8,
    "SMALLINT": 16,
    "INT2": 16,
    "MEDIUMINT": 24,
    "INTEGER": 32,
    "INT": 32,
    "INT4": 32,
}

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


def holds(expected_type: str, live_type: str, live_db_type: str) -> bool:
    """Whether a live column of dlt type `live_type` (destination type `live_db_type`) holds
    every value of a model field of dlt type `expected_type`."""
    if live_type not in HOLDS.get(expected_type, frozenset({expected_type})):
        return False
    return not (expected_type == "bigint" and _base(live_db_type) in _NARROW_INTS)


def detect_type(
    expected: ExpectedTable, live: LiveTable, read_type: LiveTypeReader
) -> TypeDrift | None:
    """Live columns whose type cannot hold the declared type (sorted), or None."""
    drifted: dict[str, tuple[str, str]] = {}
    for c in expected.columns:
        live_col = live.columns.get(c.name)
        if live_col is None or not c.data_type:
            continue
        live_type = read_type(live_col.data_type)
        if live_type is None:  # a type dlt does not know: no judgement, no false alarm
            continue
        if not holds(c.data_type, live_type, live_col.data_type):
            drifted[c.name] = (live_col.data_type, c.data_type)
    if not drifted:
        return None
    names = tuple(sorted(drifted))
    return TypeDrift(
        expected.resource,
        expected.table,
        names,
        {n: drifted[n][0] for n in names},
        {n: drifted[n][1] for n in names},
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

    def _read(db_type: str) -> str | None:
        base = _base(db_type)
        try:
            mapped = from_dest(db_type, None, None).get("data_type")
        except Exception:
            mapped = None
        if mapped is None or (mapped == "text" and known.get(base) != "text"
                              and base not in _TEXT_TYPES):
            mapped = known.get(base)
        if mapped is None and base in _NARROW_INTS:
            return "bigint"
        return str(mapped) if mapped else None

    return read
