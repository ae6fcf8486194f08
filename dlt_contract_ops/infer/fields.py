"""One dlt column as one Pydantic field: its Python name, type and `Field(...)` arguments.

Pure: a column is dlt's stored column schema (`TColumnSchema`), what the data showed is a
`ColumnFacts`; the result is text for the module renderer (`infer.module`), with the imports
it needs. The type is the one dlt's own conversion (`pydantic_to_table_schema_columns`)
reads back as the column's data type, so the model round-trips to the stored table.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: (module, name) a field's text needs imported
Import = tuple[str, str]

#: dlt data type -> (Python type text, its import); `timestamp`, `decimal`, `text`, `json`
#: and `binary` take their size or zone from the column (`annotation`)
SIMPLE_TYPES: dict[str, tuple[str, Import | None]] = {
    "text": ("str", None),
    "bigint": ("int", None),
    "double": ("float", None),
    "bool": ("bool", None),
    "binary": ("bytes", None),
    "date": ("date", ("datetime", "date")),
    "time": ("time", ("datetime", "time")),
    "timestamp": ("datetime", ("datetime", "datetime")),
    "decimal": ("Decimal", ("decimal", "Decimal")),
}

SEMANTICS: Import = ("dlt_contract_ops", "Semantics")
ANNOTATED: Import = ("typing", "Annotated")
ANY: Import = ("typing", "Any")
FIELD: Import = ("pydantic", "Field")


@dataclass(frozen=True)
class ColumnFacts:
    """What one aggregate over the column's rows showed (`infer.facts`)."""

    rows: int
    nulls: int
    #: the column's few distinct values (a code set), sorted; None when not one
    categories: tuple[str, ...] | None = None
    low: str | None = None
    high: str | None = None


@dataclass(frozen=True)
class FieldText:
    """A field as the module renders it: `name: annotation = default  # comment`."""

    name: str
    annotation: str
    default: str | None
    comment: str | None
    imports: frozenset[Import] = field(default_factory=frozenset)

    #: a comment on the line above (the observed range)
    above: str | None = None

    def lines(self) -> list[str]:
        text = f"{self.name}: {self.annotation}"
        if self.default is not None:
            text += f" = {self.default}"
        text += f"  # {self.comment}" if self.comment else ""
        return [f"# {self.above}", text] if self.above else [text]


def _reserved() -> frozenset[str]:
    from pydantic import BaseModel

    return frozenset(dir(BaseModel))


def python_name(column: str, naming: Any, taken: set[str]) -> tuple[str, str | None]:
    """(field name, alias): the column's own name when it is a usable Python identifier that
    `naming` keeps as it is, else a Python name with the column as its alias (dlt names the
    column `alias or name`). `taken` gets the name.

    >>> from dlt.common.normalizers.naming.snake_case import NamingConvention
    >>> python_name("user_id", NamingConvention(), set())
    ('user_id', None)
    >>> python_name("class", NamingConvention(), set())
    ('class_', 'class')
    >>> python_name("2fa", NamingConvention(), set())
    ('f_2fa', '2fa')
    """
    reserved = _reserved()
    usable = (
        column.isidentifier() and not keyword.iskeyword(column) and not column.startswith("_")
        and not column.startswith("model_") and column not in reserved
        and naming.normalize_path(column) == column
    )
    if usable and column not in taken:
        taken.add(column)
        return column, None
    base = re.sub(r"\W+", "_", column).strip("_") or "field"
    if base[0].isdigit():
        base = f"f_{base}"
    if base.startswith("model_"):  # pydantic's own namespace
        base = f"m_{base}"
    if keyword.iskeyword(base) or base in reserved or base == column:
        base = f"{base}_"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name, column


def shown(value: object) -> str:
    r"""A name or value from the warehouse as it may stand in a comment or a docstring of the
    generated code: quotes, backslashes and line breaks escaped, so it cannot end either.

    >>> print(shown('end"\nimport os'))
    end\"\nimport os
    """
    return json.dumps(str(value), ensure_ascii=False)[1:-1]


def _literal(value: str) -> str:
    """A double-quoted Python string literal (JSON's escapes are Python's too).

    >>> print(_literal("paid"))
    "paid"
    """
    return json.dumps(value, ensure_ascii=False)


def annotation(
    column: Mapping[str, Any], *, json_as_any: bool
) -> tuple[str, set[Import], dict[str, str], str | None]:
    """(type text, imports, `Field` arguments, comment) of a column, without nullability.

    `json_as_any`: the model skips nested types (it has child tables), which makes dlt leave
    out a `dict` field too: a json column is typed `Any` there (dlt infers json from data).
    """
    data_type = column.get("data_type")
    precision, scale = column.get("precision"), column.get("scale")
    imports: set[Import] = set()
    args: dict[str, str] = {}
    comment: str | None = None
    if data_type == "json":
        if json_as_any:
            imports.add(ANY)
            return "Any", imports, args, (
                "json: `Any` because `skip_nested_types` makes dlt leave a dict field out"
            )
        imports.add(ANY)
        return "dict[str, Any] | list[Any]", imports, args, None
    if data_type not in SIMPLE_TYPES:
        imports.add(ANY)
        return "Any", imports, args, (
            f"dlt data type `{shown(data_type)}` has no Python counterpart: typed `Any`"
            if data_type else "no data type in dlt's schema (no value seen yet): typed `Any`"
        )
    text, needed = SIMPLE_TYPES[data_type]
    if needed:
        imports.add(needed)
    if data_type in ("text", "binary") and precision:
        args["max_length"] = str(precision)
    elif data_type == "decimal":
        if precision:
            args["max_digits"] = str(precision)
        if scale is not None:
            args["decimal_places"] = str(scale)
    elif data_type == "timestamp":
        if column.get("timezone", True):
            # dlt stores an aware timestamp in UTC; `AwareDatetime` would read back as text
            imports.update({ANNOTATED, SEMANTICS})
            text = 'Annotated[datetime, Semantics(timezone="UTC")]'
        else:
            comment = "timestamp without time zone"
    elif data_type in ("bigint", "double") and precision:
        comment = f"stored with precision {precision}"
    return text, imports, args, comment


def with_code_set(text: str, facts: ColumnFacts | None, imports: set[Import]) -> str:
    """`text` (a type) with the code set the data showed declared, for a `str` column.

    >>> with_code_set("str", ColumnFacts(200, 0, ("a", "b")), set())
    'Annotated[str, Semantics(categories=("a", "b"))]'
    """
    if facts is None or not facts.categories or text != "str":
        return text
    imports.update({ANNOTATED, SEMANTICS})
    values = ", ".join(_literal(v) for v in facts.categories)
    values += "," if len(facts.categories) == 1 else ""
    return f"Annotated[str, Semantics(categories=({values}))]"


def field_text(
    column: Mapping[str, Any],
    naming: Any,
    taken: set[str],
    facts: ColumnFacts | None = None,
    *,
    json_as_any: bool = False,
) -> FieldText:
    """The field for one stored column. Optional when dlt's schema says nullable and the
    data (when measured) holds a NULL; a small code set seen in the data is declared as
    `Semantics(categories=...)`; the observed range is a comment, never a constraint."""
    name, alias = python_name(column["name"], naming, taken)
    text, imports, args, comment = annotation(column, json_as_any=json_as_any)
    text = with_code_set(text, facts, imports)
    # the data decides where it was measured: dlt marks every inferred column nullable
    nullable = facts.nulls > 0 if facts is not None and facts.rows else bool(
        column.get("nullable", True))
    above = None
    if facts is not None and facts.low is not None and facts.high is not None:
        above = f"observed {shown(facts.low)} .. {shown(facts.high)}"
    return finished_field(name, alias, text, args, nullable, imports, comment, above)


def finished_field(
    name: str, alias: str | None, text: str, args: dict[str, str], nullable: bool,
    imports: set[Import], comment: str | None, above: str | None = None,
) -> FieldText:
    """The field of type `text` with its `Field(...)` `args`: `| None = None` when
    `nullable` (an `Any` is nullable as it is), the alias first among the arguments.

    >>> finished_field("a", "A", "int", {"ge": "1"}, True, set(), None).lines()
    ['a: int | None = Field(default=None, alias="A", ge=1)']
    """
    optional = nullable and text != "Any"
    if optional:
        text = f"{text} | None"
    if alias is not None:
        args = {"alias": _literal(alias), **args}
    default: str | None = None
    if args:
        imports.add(FIELD)
        pairs = ", ".join(f"{k}={v}" for k, v in args.items())
        default = f"Field(default=None, {pairs})" if optional else f"Field({pairs})"
    elif optional or text == "Any":
        default = "None"
    return FieldText(name, text, default, comment, frozenset(imports), above)
