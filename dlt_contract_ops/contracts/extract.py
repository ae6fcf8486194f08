"""Read a model's declared contract: columns as dlt lands them, plus declared semantics.

Types and nullability come from core/naming's `ExpectedTable` (dlt's own reading of the
model, normalized with the source schema's naming convention); this module adds what the
model *declares* on top: `Semantics` metadata, `TableSemantics`, `Literal`/`Enum` value sets,
Pydantic's constraints (lengths, digits, bounds, patterns), the declarations on values inside
a json column (list items, mapping values, nested model fields: `members`), and dlt's own key
hints. Type aliases (`TypeAliasType`, Python 3.12 `type X = ...`) are read through.

Nothing declared is dropped: a declaration this module cannot record (inside a dict key or a
fixed-length tuple, on a field dlt lands no column for, a unit or time zone nobody can
identify) is a `DeclarationError` naming the model, the field and what to do. Nothing is
inferred from data.
"""

from __future__ import annotations

import collections
import collections.abc as cabc
import enum
import re
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typing_extensions

from dlt_contract_ops.contracts.constraints import BOUND_NAMES, CONSTRAINT_NAMES, bound_text
from dlt_contract_ops.contracts.model import (
    HINT_NAMES,
    ColumnContract,
    DltHints,
    ResourceContract,
    member_label,
)
from dlt_contract_ops.contracts.semantics import Semantics, table_semantics
from dlt_contract_ops.contracts.timezones import TimezoneError, timezone_identity
from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable
from dlt_contract_ops.errors import DeclarationError

# typing_extensions re-exports typing's own class from Python 3.12 on
_ALIAS_TYPES: tuple[type, ...] = tuple(
    {
        typing_extensions.TypeAliasType,
        getattr(typing, "TypeAliasType", typing_extensions.TypeAliasType),
    }
)
_ITEMS = {
    list, set, frozenset, collections.deque, cabc.Sequence, cabc.MutableSequence, cabc.Set,
    cabc.MutableSet, cabc.Iterable, cabc.Collection,
}
_VALUES = {
    dict, cabc.Mapping, cabc.MutableMapping, collections.OrderedDict, collections.defaultdict,
}


class _Unreadable(Exception):
    """A type this module cannot read through; re-raised with the model and field."""


def _unalias(tp: Any) -> Any:
    """`tp` with every type alias replaced by what it stands for."""
    for _ in range(64):
        if isinstance(tp, _ALIAS_TYPES):
            tp = tp.__value__  # type: ignore[attr-defined]  # a TypeAliasType
            continue
        origin = get_origin(tp)
        if not isinstance(origin, _ALIAS_TYPES):
            return tp
        args = get_args(tp)
        try:
            tp = origin.__value__[args[0] if len(args) == 1 else args]  # type: ignore[attr-defined]
        except TypeError as exc:
            raise _Unreadable(f"the type alias `{origin}` cannot be applied to {args}") from exc
    raise _Unreadable(f"the type alias `{tp}` refers to itself")


def _strip(annotation: Any) -> tuple[list[Any], list[Any]]:
    """(metadata found in any nested `Annotated`, the non-None leaf types)."""
    metadata: list[Any] = []
    leaves: list[Any] = []
    stack = [annotation]
    while stack:
        current = _unalias(stack.pop())
        origin = get_origin(current)
        if origin is Annotated:
            metadata.extend(current.__metadata__)
            stack.append(get_args(current)[0])
        elif origin is Union or origin is types.UnionType:
            stack.extend(a for a in get_args(current) if a is not type(None))
        elif current is not type(None):
            leaves.append(current)
    return metadata, leaves


def _flatten_metadata(items: list[Any]) -> list[Any]:
    # a nested `Annotated[str, Field(max_length=5)]` keeps a FieldInfo whose own metadata
    # holds the constraint objects
    out: list[Any] = []
    for item in items:
        out.append(item)
        out.extend(getattr(item, "metadata", None) or [])
    return out


def _declared_values(leaves: list[Any]) -> tuple[str, ...] | None:
    """A closed value set the type itself declares: `Literal[...]` or an `Enum`."""
    values: set[str] = set()
    for leaf in leaves:
        if get_origin(leaf) is Literal:
            values.update(str(v) for v in get_args(leaf) if v is not None)
        elif isinstance(leaf, type) and issubclass(leaf, enum.Enum):
            values.update(str(m.value) for m in leaf)
        else:
            return None
    return tuple(sorted(values)) if values else None


def _constraint(metadata: list[Any], attribute: str) -> int | None:
    for item in metadata:
        value = getattr(item, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _is_declaration(item: Any) -> bool:
    """A metadata object that declares something a contract records."""
    if isinstance(item, Semantics):
        return True
    if getattr(item, "min_length", None):  # zero is no minimum
        return True
    return any(
        getattr(item, name, None) is not None for name in CONSTRAINT_NAMES if name != "min_length"
    )


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "model_fields")


def _container(leaf: Any) -> tuple[str, tuple[Any, ...]]:
    """What a leaf type holds: ("items", (item,)), ("values", (key, value)),
    ("model", (model,)), ("tuple", args) for a fixed-length tuple, or ("scalar", args)."""
    if _is_model(leaf):
        return "model", (leaf,)
    origin, args = get_origin(leaf), get_args(leaf)
    if origin in _ITEMS and len(args) == 1:
        return "items", args
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return "items", args[:1]
    if origin is tuple:
        return "tuple", args
    if origin in _VALUES and len(args) == 2:
        return "values", args
    return "scalar", args


def _join(prefix: str, part: str) -> str:
    if part in ("[]", "{}") or not prefix:
        return f"{prefix}{part}"
    return f"{prefix}.{part}"


@dataclass(frozen=True)
class _Level:
    """The declarations at one level of a field's type: the field itself, or its items."""

    where: str  # `Model.field`, plus the path of the values for a member
    semantics: Semantics | None
    metadata: tuple[Any, ...]
    leaves: tuple[Any, ...]
    description: str | None


class _Reader:
    """Reads one model, remembering which declarations it recorded (by field), so that what
    it could not record is an error rather than a silence."""

    def __init__(self, model: type[Any], naming: Any) -> None:
        self.model = model
        self.naming = naming
        self.used: set[tuple[str, int]] = set()
        self.read: set[str] = set()  # top-level fields whose own declarations were read

    # -- one level ------------------------------------------------------------------------

    def level(
        self, top: str, where: str, annotation: Any, extra: list[Any], description: str | None
    ) -> _Level:
        try:
            nested, leaves = _strip(annotation)
        except _Unreadable as exc:
            raise DeclarationError(f"`{where}`: {exc}; write the type out instead.") from exc
        metadata = _flatten_metadata([*extra, *nested])
        found: list[Semantics] = []
        for item in metadata:
            if isinstance(item, Semantics) and not any(item is f for f in found):
                found.append(item)
        if len(found) > 1:
            raise DeclarationError(
                f"`{where}` declares Semantics {len(found)} times: merge them into one "
                "`Semantics(...)`."
            )
        self.used.update((top, id(item)) for item in metadata)
        if where == f"{self.model.__name__}.{top}":
            self.read.add(top)
        sem = found[0] if found else None
        text = (sem.description if sem else None) or description or None
        return _Level(where, sem, tuple(metadata), tuple(leaves), text)

    def unit(self, level: _Level) -> str | None:
        # recorded as written, known to the unit table or not: a unit the table does not know
        # is still a unit, compared by its text; `contract lint` says what to write instead
        return level.semantics.unit if level.semantics else None

    def timezone(self, level: _Level) -> str | None:
        zone = level.semantics.timezone if level.semantics else None
        if zone is not None:
            try:
                timezone_identity(zone)
            except TimezoneError as exc:
                raise DeclarationError(
                    f"`{level.where}`: Semantics(timezone=...): {exc}"
                ) from exc
        return zone

    @staticmethod
    def constraints(level: _Level, *, max_length: bool) -> dict[str, Any]:
        """Bounds, multiple_of, lengths and pattern from the level's metadata."""
        out: dict[str, Any] = {}
        for name in (*BOUND_NAMES, "multiple_of"):
            value = next(
                (getattr(m, name) for m in level.metadata if getattr(m, name, None) is not None),
                None,
            )
            out[name] = bound_text(value)
        minimum = _constraint(list(level.metadata), "min_length")
        out["min_length"] = minimum or None  # zero is no minimum
        out["max_length"] = _constraint(list(level.metadata), "max_length") if max_length else None
        pattern = next(
            (m.pattern for m in level.metadata
             if getattr(m, "pattern", None) is not None),
            None,
        )
        if pattern is not None and not isinstance(pattern, str):
            pattern = getattr(pattern, "pattern", str(pattern))  # a compiled re.Pattern
        out["pattern"] = pattern
        return out

    def vocabulary(self, level: _Level) -> tuple[tuple[str, ...] | None, str | None]:
        sem = level.semantics or Semantics()
        categories = sem.categories
        if categories is None and sem.category_pattern is None:
            categories = _declared_values(list(level.leaves))
        return categories, sem.category_pattern

    # -- members: declarations on values inside a json column --------------------------------

    def members(self, top: str, where: str, annotation: Any) -> tuple[ColumnContract, ...]:
        found: dict[str, ColumnContract] = {}
        for path, member in self._walk_members(top, where, annotation, "", ()):
            if path in found and found[path] != member:
                raise DeclarationError(
                    f"`{where}` declares the values at `{path}` twice, differently (a union "
                    "of two containers?): declare them once."
                )
            found[path] = member
        return tuple(found.values())

    def _walk_members(
        self, top: str, where: str, annotation: Any, prefix: str, models: tuple[type[Any], ...]
    ) -> Iterator[tuple[str, ColumnContract]]:
        try:
            _, leaves = _strip(annotation)
        except _Unreadable as exc:
            raise DeclarationError(f"`{where}`: {exc}; write the type out instead.") from exc
        for leaf in leaves:
            kind, args = _container(leaf)
            inner: list[tuple[str, Any, list[Any], str | None]] = []
            if kind == "items":
                inner.append((_join(prefix, "[]"), args[0], [], None))
            elif kind == "values":
                inner.append((_join(prefix, "{}"), args[1], [], None))
            elif kind == "model" and leaf not in models:
                for name, info in leaf.model_fields.items():
                    path = _join(prefix, info.alias or name)
                    inner.append((path, info.annotation, list(info.metadata), info.description))
            for path, inner_type, extra, description in inner:
                level = self.level(top, member_label(where, path), inner_type, extra, description)
                member = self._member(path, level)
                if member is not None:
                    yield path, member
                below = (*models, leaf) if kind == "model" else models
                yield from self._walk_members(top, where, inner_type, path, below)

    def _member(self, path: str, level: _Level) -> ColumnContract | None:
        sem = level.semantics or Semantics()
        for attribute in ("renamed_from", "precision", "scale"):
            if getattr(sem, attribute) is not None:
                raise DeclarationError(
                    f"`{level.where}`: Semantics({attribute}=...) describes a column, not the "
                    "values inside one: move it to the field's own Semantics or remove it."
                )
        categories, pattern = self.vocabulary(level)
        member = ColumnContract(
            name=path,
            type=None,
            nullable=True,
            unit=self.unit(level),
            timezone=self.timezone(level),
            categories=categories,
            category_pattern=pattern,
            crs=sem.crs,
            description=level.description,
            value_format=sem.value_format,
            **self.constraints(level, max_length=True),
        )
        return None if member == ColumnContract(path, None, True) else member

    # -- what could not be recorded ----------------------------------------------------------

    def unrecorded(self, fields: set[str]) -> None:
        """Raise for the first declaration on `fields` that no column or member recorded."""
        for name in sorted(fields):
            info = self.model.model_fields[name]
            where = f"{self.model.__name__}.{name}"
            items = [(i, "on the field") for i in info.metadata]
            items += list(_declarations(info.annotation, "", ()))
            for item, place in items:
                if not _is_declaration(item) or (name, id(item)) in self.used:
                    continue
                if name not in self.read:
                    raise DeclarationError(
                        f"`{where}` declares `{item!r}`, but dlt lands no column of its own "
                        "for the field (a nested model flattened into columns, or a field "
                        "`skip_nested_types` leaves out), so a contract cannot record it: "
                        "declare it on the nested model's fields, or remove it."
                    )
                raise DeclarationError(
                    f"`{where}` declares `{item!r}` {place}, where a contract cannot "
                    "record it: declare it on the column, on list items (`list[Annotated[...]]`), "
                    "on mapping values or on a nested model's fields, or remove it."
                )


def _declarations(
    annotation: Any, path: str, models: tuple[type[Any], ...]
) -> Iterator[tuple[Any, str]]:
    """Every metadata object anywhere in `annotation`, with where it sits in words."""
    try:
        current = _unalias(annotation)
    except _Unreadable:
        return
    origin, args = get_origin(current), get_args(current)
    if origin is Annotated:
        place = f"on the values at `{path}`" if path else "on the field"
        for item in current.__metadata__:
            yield item, place
            for inner in getattr(item, "metadata", None) or []:
                yield inner, place
        yield from _declarations(args[0], path, models)
        return
    if origin is Union or origin is types.UnionType:
        for arg in args:
            yield from _declarations(arg, path, models)
        return
    kind, inner_args = _container(current)
    if kind == "items":
        yield from _declarations(inner_args[0], _join(path, "[]"), models)
    elif kind == "values":
        yield from _declarations(inner_args[1], _join(path, "{}"), models)
        for item, _ in _declarations(inner_args[0], path, models):
            yield item, f"in the keys of `{_type_name(current)}`"
    elif kind == "model" and current not in models:
        for name, info in current.model_fields.items():
            sub = _join(path, info.alias or name)
            yield from ((i, f"on the values at `{sub}`") for i in info.metadata)
            yield from _declarations(info.annotation, sub, (*models, current))
    elif kind == "tuple" or (kind == "scalar" and inner_args):
        for arg in inner_args:
            for item, _ in _declarations(arg, path, models):
                yield item, f"inside `{_type_name(current)}`"


def _type_name(tp: Any) -> str:
    return re.sub(r"\b(typing|typing_extensions|__main__)\.", "", repr(tp))


def field_semantics(model: type[Any], field_name: str) -> Semantics | None:
    """The one `Semantics` declared on `model.field_name` (top level or nested `Annotated`)."""
    info = model.model_fields[field_name]
    reader = _Reader(model, None)
    level = reader.level(
        field_name, f"{model.__name__}.{field_name}", info.annotation, list(info.metadata), None
    )
    return level.semantics


def field_columns(model: type[Any], naming: Any) -> dict[str, tuple[str, ...]]:
    """field name -> the landed column names its values go to.

    The rule is dlt's (the column is `alias or name`, normalized with the schema's naming)
    plus core/naming's (a `serialization_alias` lands values under that name too).
    """
    out: dict[str, tuple[str, ...]] = {}
    for name, info in model.model_fields.items():
        raw = info.alias or name
        names = [naming.normalize_path(raw)]
        ser = getattr(info, "serialization_alias", None)
        if ser and ser != raw:
            names.append(naming.normalize_path(ser))
        out[name] = tuple(dict.fromkeys(names))
    return out


def _flattened(
    model: type[Any], naming: Any
) -> dict[str, tuple[str, type[Any], str, str]]:
    """landed column -> (top-level field, nested model, nested field, display path) for the
    fields of nested models dlt flattens into columns of their own (`skip_nested_types`)."""
    from dlt.common.normalizers.naming.snake_case import NamingConvention

    snake = NamingConvention()  # dlt joins flattened names with snake_case, then normalizes
    out: dict[str, tuple[str, type[Any], str, str]] = {}

    def walk(top: str, current: type[Any], raw: str, shown: str, seen: tuple[type, ...]) -> None:
        for name, info in current.model_fields.items():
            key = info.alias or name
            path = snake.make_path(raw, key)
            out.setdefault(naming.normalize_path(path), (top, current, name, f"{shown}.{name}"))
            for leaf in _strip(info.annotation)[1]:
                if _is_model(leaf) and leaf not in seen:
                    walk(top, leaf, path, f"{shown}.{name}", (*seen, leaf))

    for top, info in model.model_fields.items():
        try:
            leaves = _strip(info.annotation)[1]
        except _Unreadable:
            continue
        for leaf in leaves:
            if _is_model(leaf):
                walk(top, leaf, info.alias or top, f"{model.__name__}.{top}", (leaf,))
    return out


def _column(
    reader: _Reader, col: ExpectedColumn, top: str, owner: type[Any], field_name: str,
    where: str,
) -> ColumnContract:
    info = owner.model_fields[field_name]
    level = reader.level(top, where, info.annotation, list(info.metadata), info.description)
    sem = level.semantics or Semantics()
    metadata = list(level.metadata)
    precision, scale = sem.precision, sem.scale
    length_is_width = False
    if col.data_type in ("text", "binary") and precision is None:
        precision = _constraint(metadata, "max_length")
        length_is_width = precision is not None
    if col.data_type == "decimal":
        precision = precision if precision is not None else _constraint(metadata, "max_digits")
        scale = scale if scale is not None else _constraint(metadata, "decimal_places")
    categories, pattern = reader.vocabulary(level)
    renamed = reader.naming.normalize_path(sem.renamed_from) if sem.renamed_from else None
    return ColumnContract(
        name=col.name,
        type=col.data_type,
        nullable=col.nullable,
        precision=precision,
        scale=scale,
        unit=reader.unit(level),
        timezone=reader.timezone(level),
        categories=categories,
        category_pattern=pattern,
        crs=sem.crs,
        description=level.description,
        renamed_from=renamed,
        value_format=sem.value_format,
        members=reader.members(top, where, info.annotation),
        **reader.constraints(level, max_length=not length_is_width),
    )


def _resolve_field(
    model: type[Any], naming: Any, columns: dict[str, tuple[str, ...]], name: str, what: str
) -> str:
    """The landed column a declaration names by field name, alias, or landed name."""
    landed = {c for names in columns.values() for c in names}
    by_field = {f: names[0] for f, names in columns.items()}
    by_alias = {info.alias: by_field[f] for f, info in model.model_fields.items() if info.alias}
    found = by_field.get(name) or by_alias.get(name)
    if found is None and naming.normalize_path(name) in landed:
        found = naming.normalize_path(name)
    if found is None:
        raise DeclarationError(
            f"@TableSemantics({what}=...) on `{model.__name__}` names `{name}`, which is not a "
            f"field of the model. Fields: {', '.join(sorted(model.model_fields))}."
        )
    return found


def _keys(
    model: type[Any], naming: Any, columns: dict[str, tuple[str, ...]]
) -> tuple[str, ...] | None:
    declared = table_semantics(model)
    if declared is None or declared.keys is None:
        return None
    return tuple(_resolve_field(model, naming, columns, k, "keys") for k in declared.keys)


def resource_hints(built: Any, name: str, naming: Any) -> DltHints:
    """The columns dlt's hints on resource `name` of `built` (a DltSource, or the DltResource
    itself) mark as primary key, merge key, partition, cluster or unique, named as they land.

    A hint dlt computes per item cannot be recorded, so it is a DeclarationError.
    """
    resources = getattr(built, "resources", None)
    resource = built if resources is None else resources[name]
    hints = getattr(resource, "_hints", None) or {}
    for key in ("primary_key", "merge_key", "columns"):
        if callable(hints.get(key)):
            raise DeclarationError(
                f"Resource `{name}` computes `{key}` per item, so its contract cannot record it: "
                f"pass `{key}=` as fixed column names."
            )
    try:
        table = resource.compute_table_schema()
    except Exception as exc:  # dlt raises its own errors for hints it cannot compute
        raise DeclarationError(
            f"Cannot read the table hints of resource `{name}`: {type(exc).__name__}: {exc}"
        ) from exc
    marked: dict[str, list[str]] = {hint: [] for hint in HINT_NAMES}
    for column_name, column in (table.get("columns") or {}).items():
        for hint in HINT_NAMES:
            if column.get(hint):
                marked[hint].append(naming.normalize_path(column.get("name") or column_name))
    return DltHints(**{hint: tuple(names) for hint, names in marked.items()})


def contract_from_model(
    source: str,
    table: ExpectedTable,
    model: type[Any],
    naming: Any,
    *,
    hints: DltHints | None = None,
) -> ResourceContract:
    """The contract `model` declares for `table` (a resource's `ExpectedTable` from
    discovery), with `naming` the source schema's dlt naming convention and `hints` the
    resource's dlt key hints (`resource_hints`)."""
    reader = _Reader(model, naming)
    columns = field_columns(model, naming)
    owner = {c: f for f, names in columns.items() for c in names}
    unowned = any(col.name not in owner for col in table.columns)
    flattened = _flattened(model, naming) if unowned else {}
    contract_columns = []
    for col in table.columns:
        if col.name in owner:
            name = owner[col.name]
            where = f"{model.__name__}.{name}"
            contract_columns.append(_column(reader, col, name, model, name, where))
        elif col.name in flattened:
            top, nested, name, where = flattened[col.name]
            contract_columns.append(_column(reader, col, top, nested, name, where))
        else:  # a column core/naming adds without a field (none today): nothing declared
            contract_columns.append(ColumnContract(col.name, col.data_type, col.nullable))
    reader.unrecorded(set(model.model_fields))
    declared = table_semantics(model)
    change_key = None
    if declared is not None and declared.change_key is not None:
        change_key = _resolve_field(model, naming, columns, declared.change_key, "change_key")
    return ResourceContract(
        source=source,
        resource=table.resource,
        table=table.table,
        columns=tuple(contract_columns),
        keys=_keys(model, naming, columns),
        grain=declared.grain if declared is not None else None,
        model=table.model_name or model.__name__,
        hints=hints or DltHints(),
        owner=declared.owner if declared is not None else None,
        consumer_owners=declared.consumer_owners if declared is not None else (),
        change_key=change_key,
    )
