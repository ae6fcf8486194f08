"""dlt data types <-> Open Data Contract Standard (ODCS v3.1) logical types: the one home of
the mapping, for the export (`contracts.odcs`) and for an importer.

ODCS has nine logical types (`string`, `date`, `timestamp`, `time`, `number`, `integer`,
`object`, `array`, `boolean`) and per logical type a closed set of `logicalTypeOptions`; dlt has
eleven data types with an optional precision and scale. The dlt type itself goes to
`physicalType` as `ColumnContract.type_label` writes it (`decimal(10,2)`, `text(255)`), so
nothing is lost: ODCS's `number` alone cannot tell a `double` from a `decimal`. Pure: no I/O,
no dlt import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: dlt data type -> ODCS logical type (`json` is `object` or `array`, see `logical_type`)
LOGICAL_TYPES: Mapping[str, str] = {
    "text": "string",
    "binary": "string",
    "bool": "boolean",
    "bigint": "integer",
    "wei": "integer",
    "double": "number",
    "decimal": "number",
    "timestamp": "timestamp",
    "date": "date",
    "time": "time",
    "json": "object",
}

#: ODCS logical type -> the dlt data type a document without a dlt `physicalType` means
DLT_TYPES: Mapping[str, str] = {
    "string": "text",
    "boolean": "bool",
    "integer": "bigint",
    "number": "double",
    "timestamp": "timestamp",
    "date": "date",
    "time": "time",
    "object": "json",
    "array": "json",
}

#: the `logicalTypeOptions` keys ODCS v3.1 allows per logical type (its JSON schema closes each
#: set with `additionalProperties: false`); a declaration with no key here is a custom property
OPTION_KEYS: Mapping[str, frozenset[str]] = {
    "string": frozenset({"minLength", "maxLength", "pattern", "format"}),
    "date": frozenset({"format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}),
    "timestamp": frozenset({"format", "minimum", "maximum", "exclusiveMinimum",
                            "exclusiveMaximum", "timezone", "defaultTimezone"}),
    "time": frozenset({"format", "minimum", "maximum", "exclusiveMinimum",
                       "exclusiveMaximum", "timezone", "defaultTimezone"}),
    "integer": frozenset({"multipleOf", "minimum", "maximum", "exclusiveMinimum",
                          "exclusiveMaximum", "format"}),
    "number": frozenset({"multipleOf", "minimum", "maximum", "exclusiveMinimum",
                         "exclusiveMaximum", "format"}),
    "object": frozenset({"maxProperties", "minProperties", "required"}),
    "array": frozenset({"maxItems", "minItems", "uniqueItems"}),
    "boolean": frozenset(),
}

#: a value constraint (`ColumnContract` attribute) -> its `logicalTypeOptions` key: a number
#: for the integer and number types, text for dates and times
BOUND_OPTIONS: Mapping[str, str] = {
    "ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
}
#: a length or pattern constraint -> its `logicalTypeOptions` key (strings only)
LENGTH_OPTIONS: Mapping[str, str] = {
    "min_length": "minLength", "max_length": "maxLength", "pattern": "pattern",
}
#: a declaration ODCS has no key for -> the custom property it is written as
CUSTOM_PROPERTIES: Mapping[str, str] = {
    "unit": "unit", "crs": "crs", "value_format": "valueFormat", "renamed_from": "renamedFrom",
}

#: bits -> ODCS's integer `format` (Rust's names); dlt's bigint is 64-bit unless declared
_INT_FORMATS = {8: "i8", 16: "i16", 32: "i32", 64: "i64", 128: "i128"}
_BITS_OF_FORMAT = {v: k for k, v in _INT_FORMATS.items()}


def logical_type(dlt_type: str | None, *, array: bool = False) -> str | None:
    """The ODCS logical type of a dlt data type; None for an undeclared (inferred) one or a
    type ODCS has no name for. A json column is an `array` when it holds a list (`array`).

    >>> logical_type("decimal"), logical_type("json", array=True), logical_type(None)
    ('number', 'array', None)
    """
    if dlt_type == "json" and array:
        return "array"
    return LOGICAL_TYPES.get(dlt_type or "")


def type_format(dlt_type: str | None, precision: int | None) -> str | None:
    """ODCS's `logicalTypeOptions.format` for a dlt type: the width of an integer or a float
    (ODCS defaults an integer to `i32`, dlt to 64 bits, so it is always written), `binary` for
    bytes; None when ODCS has no format for it (`wei` is wider than any ODCS integer).

    >>> type_format("bigint", None), type_format("bigint", 32), type_format("double", 32)
    ('i64', 'i32', 'f32')
    """
    if dlt_type == "bigint":
        bits = 64 if precision is None else precision
        return next((f for b, f in sorted(_INT_FORMATS.items()) if bits <= b), None)
    if dlt_type == "double":
        return "f32" if precision is not None and precision <= 32 else "f64"
    if dlt_type == "binary":
        return "binary"
    return None


#: `ColumnContract.type_label`'s spelling: `bigint`, `text(255)`, `decimal(10,2)`, `decimal(?,2)`
_LABEL = re.compile(r"^\s*([a-z]+)\s*(?:\(\s*(\d*|\?)\s*(?:,\s*(\d+)\s*)?\))?\s*$")


def parse_dlt_type(label: str) -> tuple[str, int | None, int | None] | None:
    """(dlt type, precision, scale) of a `physicalType` the export wrote (a dlt type as
    `ColumnContract.type_label` spells it); None when `label` is no dlt type (a destination's
    own type such as `VARCHAR(2)`).

    >>> parse_dlt_type("decimal(10,2)"), parse_dlt_type("VARCHAR(2)")
    (('decimal', 10, 2), None)
    """
    match = _LABEL.match(label)
    if match is None or match.group(1) not in LOGICAL_TYPES:
        return None
    precision = int(match.group(2)) if match.group(2) not in (None, "", "?") else None
    scale = int(match.group(3)) if match.group(3) else None
    return match.group(1), precision, scale


def dlt_type_of(
    logical: str | None, physical: str | None, options: Mapping[str, object] | None = None
) -> tuple[str | None, int | None, int | None]:
    """The dlt (type, precision, scale) an ODCS property means: `physical` when that is a dlt
    type (pass the export's `dltDataType` custom property when the property has one, else its
    `physicalType`), else its logical type and `format` / `maxLength` options.

    >>> dlt_type_of("integer", None, {"format": "i32"})
    ('bigint', 32, None)
    >>> dlt_type_of("number", "decimal(10,2)")
    ('decimal', 10, 2)
    """
    parsed = parse_dlt_type(physical) if physical else None
    if parsed is not None:
        return parsed
    opts = options or {}
    fmt = opts.get("format")
    if logical == "string" and fmt == "binary":
        return "binary", None, None
    dlt_type = DLT_TYPES.get(logical or "")
    if dlt_type == "bigint" and isinstance(fmt, str) and fmt in _BITS_OF_FORMAT:
        bits = _BITS_OF_FORMAT[fmt]
        return dlt_type, None if bits == 64 else bits, None
    if dlt_type == "double" and fmt == "f32":
        return dlt_type, 32, None
    if dlt_type == "text" and isinstance(opts.get("maxLength"), int):
        return dlt_type, int(str(opts["maxLength"])), None
    return dlt_type, None, None
