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

from typing import Any

import dlt_contract_ops.dlt_private as dlt_private
from dlt_contract_ops.contracts.annotations import (
    _constraint,
    _is_model,
    _strip,
    _Unreadable,
)
from dlt_contract_ops.contracts.declarations import _Reader
from dlt_contract_ops.contracts.model import (
    HINT_NAMES,
    ColumnContract,
    DltHints,
    ResourceContract,
)
from dlt_contract_ops.contracts.semantics import Semantics, table_semantics
from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable
from dlt_contract_ops.errors import DeclarationError


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
    hints = dlt_private.resource_hints(resource) or {}
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
