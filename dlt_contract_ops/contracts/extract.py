"""Read a model's declared contract: columns as dlt lands them, plus declared semantics.

Types and nullability come from core/naming's `ExpectedTable` (dlt's own reading of the
model, normalized with the source schema's naming convention); this module adds what the
model *declares* on top: `Semantics` metadata, `TableSemantics`, `Literal`/`Enum` value sets,
and Pydantic's own length/digits constraints. Nothing is inferred from data.
"""

from __future__ import annotations

import enum
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from dlt_contract_ops.contracts.model import ColumnContract, ResourceContract
from dlt_contract_ops.contracts.semantics import Semantics, table_semantics
from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable
from dlt_contract_ops.errors import DeclarationError


def _strip(annotation: Any) -> tuple[list[Any], list[Any]]:
    """(metadata found in any nested `Annotated`, the non-None leaf types)."""
    metadata: list[Any] = []
    leaves: list[Any] = []
    stack = [annotation]
    while stack:
        current = stack.pop()
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


def field_semantics(model: type[Any], field_name: str) -> Semantics | None:
    """The one `Semantics` declared on `model.field_name` (top level or nested `Annotated`)."""
    info = model.model_fields[field_name]
    nested, _ = _strip(info.annotation)
    found = [m for m in [*info.metadata, *nested] if isinstance(m, Semantics)]
    if len(found) > 1:
        raise DeclarationError(
            f"`{model.__name__}.{field_name}` declares Semantics {len(found)} times: merge "
            "them into one `Semantics(...)`."
        )
    return found[0] if found else None


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


def _column(
    model: type[Any], field_name: str | None, col: ExpectedColumn, naming: Any
) -> ColumnContract:
    if field_name is None:  # a flattened nested-model column: no declaration to read
        return ColumnContract(col.name, col.data_type, col.nullable)
    info = model.model_fields[field_name]
    nested, leaves = _strip(info.annotation)
    metadata = _flatten_metadata([*info.metadata, *nested])
    sem = field_semantics(model, field_name) or Semantics()
    precision, scale = sem.precision, sem.scale
    if col.data_type in ("text", "binary") and precision is None:
        precision = _constraint(metadata, "max_length")
    if col.data_type == "decimal":
        precision = precision if precision is not None else _constraint(metadata, "max_digits")
        scale = scale if scale is not None else _constraint(metadata, "decimal_places")
    categories = sem.categories
    if categories is None and sem.category_pattern is None:
        categories = _declared_values(leaves)
    renamed = naming.normalize_path(sem.renamed_from) if sem.renamed_from else None
    return ColumnContract(
        name=col.name,
        type=col.data_type,
        nullable=col.nullable,
        precision=precision,
        scale=scale,
        unit=sem.unit,
        timezone=sem.timezone,
        categories=categories,
        category_pattern=sem.category_pattern,
        crs=sem.crs,
        description=sem.description or info.description or None,
        renamed_from=renamed,
    )


def _keys(
    model: type[Any], naming: Any, columns: dict[str, tuple[str, ...]]
) -> tuple[str, ...] | None:
    declared = table_semantics(model)
    if declared is None or declared.keys is None:
        return None
    landed = {c for names in columns.values() for c in names}
    by_field = {f: names[0] for f, names in columns.items()}
    by_alias = {
        info.alias: by_field[f] for f, info in model.model_fields.items() if info.alias
    }
    out: list[str] = []
    for key in declared.keys:
        name = by_field.get(key) or by_alias.get(key)
        if name is None and naming.normalize_path(key) in landed:
            name = naming.normalize_path(key)
        if name is None:
            raise DeclarationError(
                f"@TableSemantics(keys=...) on `{model.__name__}` names `{key}`, which is not a "
                f"field of the model. Fields: {', '.join(sorted(model.model_fields))}."
            )
        out.append(name)
    return tuple(out)


def contract_from_model(
    source: str, table: ExpectedTable, model: type[Any], naming: Any
) -> ResourceContract:
    """The contract `model` declares for `table` (a resource's `ExpectedTable` from
    discovery), with `naming` the source schema's dlt naming convention."""
    columns = field_columns(model, naming)
    owner = {c: f for f, names in columns.items() for c in names}
    contract_columns = tuple(
        _column(model, owner.get(col.name), col, naming) for col in table.columns
    )
    declared = table_semantics(model)
    return ResourceContract(
        source=source,
        resource=table.resource,
        table=table.table,
        columns=contract_columns,
        keys=_keys(model, naming, columns),
        grain=declared.grain if declared is not None else None,
        model=table.model_name or model.__name__,
    )
