"""A declared column (a `ColumnContract`, e.g. read from an ODCS document) as the text of one
Pydantic field that declares it back: the type `infer.fields.annotation` gives the dlt type,
then `Semantics(...)` for what Pydantic has no place for (unit, time zone, code set, CRS,
value format, previous name, a width the type cannot say), `Field(...)` for its constraints
and description, and the declarations inside a json column (`members`) as the list, mapping
and nested-model types they sit in.

What `contracts.extract` reads from the field is the contract it was written from: that is
the round trip `models infer --from-odcs` promises. Pure: text out.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from dlt_contract_ops.contracts.model import ColumnContract
from dlt_contract_ops.contracts.odcs import _segments
from dlt_contract_ops.infer.fields import (
    ANNOTATED,
    ANY,
    FIELD,
    SEMANTICS,
    SIMPLE_TYPES,
    FieldText,
    Import,
    _literal,
    annotation,
    finished_field,
    python_name,
)

#: (class name hint, fields) -> the name of a nested model class the writer added
NewClass = Callable[[str, list[FieldText]], str]

_SEMANTIC_TEXTS = ("unit", "timezone", "category_pattern", "crs", "renamed_from",
                   "value_format")
_BOUNDS = ("ge", "gt", "le", "lt", "multiple_of")


@dataclass
class _Node:
    """A place inside a json column: its declaration and the places below it."""

    member: ColumnContract | None = None
    children: dict[str, _Node] = field(default_factory=dict)


def member_tree(col: ColumnContract, typed: Iterable[str] = ()) -> _Node:
    """`col`'s members as a tree of path steps (`[]`, `{}`, a nested field's name), with a
    place for each `typed` path too (values a document gives a type, declaring nothing)."""
    root = _Node()
    for path, member in [*((p, None) for p in typed), *((m.name, m) for m in col.members)]:
        node = root
        for step in _segments(path):
            node = node.children.setdefault(step, _Node())
        if member is not None:
            node.member = member
    return root


def bound_expression(text: str, imports: set[Import], *, exact: bool = False) -> str:
    """A Python expression whose value `contracts.constraints.bound_text` writes as `text`;
    `exact` (a decimal column's bound): a `Decimal` rather than a float.

    >>> bound_expression("1", set()), bound_expression("1.50", set())
    ('1', 'Decimal("1.50")')
    >>> bound_expression("0.5", set()), bound_expression("0.5", set(), exact=True)
    ('0.5', 'Decimal("0.5")')
    >>> bound_expression("2020-01-01", set())
    'date.fromisoformat("2020-01-01")'
    """
    for kind in (int, float) if not exact else (int,):
        try:
            if str(kind(text)) == text:
                return text
        except ValueError:
            pass
    try:
        if str(decimal.Decimal(text)) == text:
            imports.add(("decimal", "Decimal"))
            return f"Decimal({_literal(text)})"
    except decimal.InvalidOperation:
        pass
    for kind_name in ("date", "time", "datetime"):
        kind = getattr(dt, kind_name)
        try:
            if kind.fromisoformat(text).isoformat() == text:
                imports.add(("datetime", kind_name))
                return f"{kind_name}.fromisoformat({_literal(text)})"
        except ValueError:
            continue
    return _literal(text)


def _semantics(values: Mapping[str, object], imports: set[Import]) -> str | None:
    """`Semantics(...)` of the declared `values` (None when nothing is declared)."""
    parts: list[str] = []
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, tuple):
            items = ", ".join(_literal(v) for v in value) + ("," if len(value) == 1 else "")
            parts.append(f"{key}=({items})")
        elif isinstance(value, int):
            parts.append(f"{key}={value}")
        else:
            parts.append(f"{key}={_literal(str(value))}")
    if not parts:
        return None
    imports.add(SEMANTICS)
    return f"Semantics({', '.join(parts)})"


def _constraints(col: ColumnContract, imports: set[Import]) -> dict[str, str]:
    """`Field(...)` arguments of `col`'s bounds, lengths and pattern."""
    exact = col.type == "decimal"
    args = {name: bound_expression(getattr(col, name), imports, exact=exact)
            for name in _BOUNDS if getattr(col, name) is not None}
    for name in ("min_length", "max_length"):
        if getattr(col, name) is not None:
            args[name] = str(getattr(col, name))
    if col.pattern is not None:
        args["pattern"] = _literal(col.pattern)
    return args


def _member_type(node: _Node, hint: str, new_class: NewClass, imports: set[Import],
                 leaf_types: Mapping[str, str | None], path: str) -> str:
    """The type of the values at one place inside a json column, declarations included."""
    children = node.children
    if "[]" in children:
        inner = _member_type(children["[]"], hint, new_class, imports, leaf_types,
                             f"{path}[]")
        base = f"list[{inner}]"
    elif "{}" in children:
        inner = _member_type(children["{}"], hint, new_class, imports, leaf_types,
                             f"{path}{{}}")
        base = f"dict[str, {inner}]"
    elif children:
        taken: set[str] = set()
        fields = []
        for step, below in children.items():
            below_path = f"{path}.{step}" if path else step
            text = _member_type(below, step, new_class, imports, leaf_types, below_path)
            name, alias = python_name(step, _Verbatim(), taken)
            # a value the document does not declare may be missing: never refuse a row for it
            default = f"Field(default=None, alias={_literal(alias)})" if alias else "None"
            if alias:
                imports.add(FIELD)
            fields.append(FieldText(name, text if text == "Any" else f"{text} | None",
                                    default, None))
        base = new_class(hint, fields)
    else:
        base = _python_type(leaf_types.get(path), imports)
    if node.member is None:
        return base
    m = node.member
    declared = [d for d in (
        _semantics({"unit": m.unit, "timezone": m.timezone, "categories": m.categories,
                    "category_pattern": m.category_pattern, "crs": m.crs,
                    "description": m.description, "value_format": m.value_format}, imports),
        _field_call(_constraints(m, imports), imports),
    ) if d]
    if not declared:
        return base
    imports.add(ANNOTATED)
    return f"Annotated[{base}, {', '.join(declared)}]"


def _field_call(args: Mapping[str, str], imports: set[Import]) -> str | None:
    if not args:
        return None
    imports.add(FIELD)
    return f"Field({', '.join(f'{k}={v}' for k, v in args.items())})"


def _python_type(dlt_type: str | None, imports: set[Import]) -> str:
    """A value's Python type from its ODCS type (`Any` when the document gives none)."""
    if dlt_type in SIMPLE_TYPES:
        text, needed = SIMPLE_TYPES[dlt_type]
        if needed:
            imports.add(needed)
        return text
    imports.add(ANY)
    return "Any"


class _Verbatim:
    """A naming that keeps a nested model's field names as they are: dlt does not normalize
    the keys inside a json column, and a member path names them as written."""

    @staticmethod
    def normalize_path(name: str) -> str:
        return name


def declared_field(
    col: ColumnContract,
    naming: object,
    taken: set[str],
    new_class: NewClass,
    *,
    json_as_any: bool,
    in_child_table: bool,
    leaf_types: Mapping[str, str | None] | None = None,
) -> tuple[FieldText, list[str]]:
    """(the field declaring `col`, notes on what it could not declare).

    `in_child_table`: the model is a list's item model that `skip_nested_types` lands as a
    child table, where only the type and the description may declare (a `Semantics` or a
    constraint there is refused): a code set is a `Literal`. `leaf_types`: member path ->
    the dlt type the document gives the values there (None: unknown, typed `Any`)."""
    notes: list[str] = []
    column = {"name": col.name, "data_type": col.type, "nullable": col.nullable,
              "precision": col.precision, "scale": col.scale, "timezone": False}
    name, alias = python_name(col.name, naming, taken)
    text, imports, args, comment = annotation(column, json_as_any=json_as_any)
    comment = comment if text == "Any" and col.type != "json" else None
    if col.type is None:
        comment = "no type in the contract (dlt infers it from the data): typed `Any`"
    precision, scale = col.precision, col.scale
    if col.type in ("text", "binary") and (precision is None or col.max_length is None):
        precision = None  # the width is `Field(max_length=...)`
    if col.type == "decimal":
        precision = scale = None  # `max_digits` / `decimal_places`
    args.update(_constraints(col, imports))
    if col.description is not None:
        args["description"] = _literal(col.description)
    values: dict[str, object] = {k: getattr(col, k) for k in _SEMANTIC_TEXTS}
    values.update(categories=col.categories, precision=precision, scale=scale)
    if col.members and json_as_any:
        notes.append(f"column `{col.name}`: a json column of a model with child tables is "
                     "typed `Any`, so the declarations inside it are left out")
    elif col.members:
        leaf_types = leaf_types or {}
        imports.discard(ANY)  # `dict[str, Any] | list[Any]`'s, replaced
        text = _member_type(member_tree(col, leaf_types), col.name, new_class, imports,
                            leaf_types, "")
    if in_child_table and col.categories is not None and col.type == "text":
        text = f"Literal[{', '.join(_literal(v) for v in col.categories)}]"
        imports.add(("typing", "Literal"))
        values["categories"] = None
    semantics = _semantics(values, imports)
    constrained = _field_call({k: v for k, v in args.items() if k != "description"}, set())
    if in_child_table:  # a contract command refuses these inside a `skip_nested_types` list
        for declared in (semantics, constrained):
            if declared is not None:
                notes.append(f"column `{col.name}` of a child table declares {declared}, "
                             "which a model cannot declare there: left out")
        semantics = None
        args = {k: v for k, v in args.items() if k == "description"}
    if text == "Any" and col.type not in (None, "json"):
        notes.append(f"column `{col.name}`: dlt type `{col.type}` has no Python type: typed "
                     "`Any`")
    if semantics is not None:
        imports.add(ANNOTATED)
        text = f"Annotated[{text}, {semantics}]"
    return finished_field(name, alias, text, args, col.nullable, imports, comment), notes


__all__ = ["NewClass", "bound_expression", "declared_field", "member_tree"]
