"""Expected destination columns from a Pydantic model, through dlt's own naming.

dlt names a model field's column `field.alias or name` (see
`dlt.common.libs.pydantic.pydantic_to_table_schema_columns`), then normalizes it with the source
schema's naming convention. Its validator dumps rows by alias, so a field with a
`serialization_alias` lands its values under that name too: both names are expected.

dlt leaves `Any` (and `Json[Any]`) fields out of its table columns so their type is inferred
from the data, but a scalar value still lands under the field's name: those fields are
expected too, with no declared type.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable


def _serialization_aliases(model: type[Any]) -> dict[str, str]:
    """field column name (alias or name) -> serialization alias, for fields that have one."""
    out: dict[str, str] = {}
    for name, info in getattr(model, "model_fields", {}).items():
        ser = getattr(info, "serialization_alias", None)
        if ser and ser != (info.alias or name):
            out[info.alias or name] = ser
    return out


def _declared(info: Any, attribute: str) -> int | None:
    """An integer constraint a field declares (`max_length`, `max_digits`, ...), wherever
    pydantic keeps it: the field's metadata or an `Annotated` inside its annotation."""
    from typing import Annotated, get_args, get_origin

    stack: list[Any] = list(getattr(info, "metadata", None) or [])
    annotations: list[Any] = [getattr(info, "annotation", None)]
    while annotations:
        current = annotations.pop()
        if get_origin(current) is Annotated:
            stack.extend(current.__metadata__)
        annotations.extend(get_args(current))
    while stack:
        item = stack.pop()
        value = getattr(item, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        stack.extend(getattr(item, "metadata", None) or [])  # a FieldInfo inside Annotated
    return None


def _declared_size(info: Any, data_type: Any) -> tuple[int | None, int | None]:
    """(precision, scale) the field declares, in dlt's convention: a text's or binary's
    `max_length`, a decimal's `max_digits` and `decimal_places` (dlt itself ignores them)."""
    if info is None:
        return None, None
    if data_type in ("text", "binary"):
        return _declared(info, "max_length"), None
    if data_type == "decimal":
        return _declared(info, "max_digits"), _declared(info, "decimal_places")
    return None, None


def _is_any_field(info: Any) -> bool:
    """True for a field dlt skips because its type is `Any` (inferred from the data)."""
    from typing import get_args

    from dlt.common.typing import extract_inner_type, is_union_type
    from pydantic import Json

    annotation = getattr(info.annotation, "inner_type", None) or info.annotation
    inner = extract_inner_type(annotation)
    if is_union_type(inner):
        inner = extract_inner_type(get_args(inner)[0])
    return inner is Any or inner is Json


def _any_columns(model: type[Any], raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Column hints for the `Any` fields `pydantic_to_table_schema_columns` leaves out."""
    out: dict[str, dict[str, Any]] = {}
    for name, info in getattr(model, "model_fields", {}).items():
        column = info.alias or name
        if column not in raw and _is_any_field(info):
            out[column] = {"name": column, "nullable": True}
    return out


def expected_table(
    resource_name: str,
    table_name: str,
    model: type[Any],
    naming: Any,
    write_disposition: str = "append",
) -> ExpectedTable:
    """Columns the model declares, normalized with `naming` (a dlt NamingConvention).

    >>> from pydantic import BaseModel, Field
    >>> from dlt.common.normalizers.naming.snake_case import NamingConvention
    >>> class M(BaseModel):
    ...     startTime: str
    ...     x: int = Field(alias="userId")
    >>> sorted(expected_table("r", "T", M, NamingConvention()).names)
    ['start_time', 'user_id']
    """
    from dlt.common.libs.pydantic import pydantic_to_table_schema_columns

    raw: dict[str, Any] = dict(pydantic_to_table_schema_columns(model))
    raw.update(_any_columns(model, raw))
    ser_aliases = _serialization_aliases(model)
    fields = {info.alias or name: info
              for name, info in getattr(model, "model_fields", {}).items()}
    columns: dict[str, ExpectedColumn] = {}
    for raw_name, col in raw.items():
        nullable = bool(col.get("nullable", True))
        data_type = col.get("data_type")
        precision, scale = col.get("precision"), col.get("scale")
        if precision is None and scale is None:
            precision, scale = _declared_size(fields.get(raw_name), data_type)
        names = [raw_name]
        if raw_name in ser_aliases:
            names.append(ser_aliases[raw_name])
        field = naming.normalize_path(raw_name)
        for n in names:
            norm = naming.normalize_path(n)
            columns.setdefault(
                norm,
                ExpectedColumn(
                    norm,
                    data_type,
                    nullable,
                    field=field,
                    precision=precision,
                    scale=scale,
                    deprecated=bool(getattr(fields.get(raw_name), "deprecated", None)),
                ),
            )
    return ExpectedTable(
        resource=resource_name,
        table=naming.normalize_tables_path(table_name),
        columns=tuple(columns.values()),
        write_disposition=write_disposition,
        model_name=getattr(model, "__name__", str(model)),
    )


def _skips_nested(model: type[Any]) -> bool:
    config = getattr(model, "dlt_config", None) or {}
    return bool(config.get("skip_nested_types", config.get("skip_complex_types", False)))


def _list_item(info: Any) -> Any | None:
    """The item type of a `list[...]` field (read as dlt reads field types), else None."""
    from typing import get_args

    from dlt.common.typing import extract_inner_type, is_list_generic_type, is_union_type

    annotation = getattr(info.annotation, "inner_type", None) or info.annotation
    inner = extract_inner_type(annotation)
    if is_union_type(inner):
        inner = extract_inner_type(get_args(inner)[0])
    if not is_list_generic_type(inner):
        return None
    args = get_args(inner)
    return extract_inner_type(args[0]) if args else None


def _as_rows(model: type[Any]) -> type[Any]:
    """`model` as dlt's normalizer lands its items in a child table: nested models flattened
    into `a__b` columns and lists into tables of their own (what `skip_nested_types` says; a
    child table takes no column hints from the model, so it is unnested whatever the model's
    own `dlt_config`)."""
    from typing import ClassVar

    if _skips_nested(model):
        return model
    config = {**(getattr(model, "dlt_config", None) or {}), "skip_nested_types": True}
    namespace = {"__annotations__": {"dlt_config": ClassVar[dict[str, Any]]},
                 "dlt_config": config, "__module__": model.__module__}
    return type(model.__name__, (model,), namespace)


def nested_tables(root: ExpectedTable, model: type[Any], naming: Any) -> list[ExpectedTable]:
    """The child tables dlt lands a model's `list[...]` fields in when the model sets
    `dlt_config = {"skip_nested_types": True}` (else a list is one json column of its table):
    `list[Label]` -> `users__labels` with `Label`'s columns, `list[str]` -> a `value` column;
    a list inside an item model -> a grandchild table. dlt's `_dlt_*` link columns are not
    listed (never drift).

    >>> from typing import ClassVar
    >>> from pydantic import BaseModel
    >>> from dlt.common.normalizers.naming.snake_case import NamingConvention
    >>> class User(BaseModel):
    ...     dlt_config: ClassVar[dict[str, bool]] = {"skip_nested_types": True}
    ...     id: int
    ...     fanTags: list[str] = []
    >>> n = NamingConvention()
    >>> [(t.table, sorted(t.names)) for t in nested_tables(expected_table("u", "users", User, n),
    ...                                                    User, n)]
    [('users__fan_tags', ['value'])]
    """
    return [table for table, _ in nested_models(root, model, naming)]


def nested_models(
    root: ExpectedTable, model: type[Any], naming: Any, *,
    _parent: tuple[ExpectedTable, tuple[str, ...]] | None = None,
) -> list[tuple[ExpectedTable, type[Any] | None]]:
    """`nested_tables`, each with the model its rows are (None for a list of scalars), so a
    child table's declarations can be read from its item model."""
    from dlt.common.data_types import py_type_to_sc_type
    from dlt.common.typing import is_subclass
    from pydantic import BaseModel

    # dlt names a child table by the whole path of normalized names, shortened once: a
    # grandchild's name is not built from its parent's shortened one
    parent, path = _parent or (root, (root.table,))
    if _parent is None and not _skips_nested(model):
        return []
    out: list[tuple[ExpectedTable, type[Any] | None]] = []
    for name, info in getattr(model, "model_fields", {}).items():
        item = _list_item(info)
        if item is None:
            continue
        child_path = (*path, naming.normalize_identifier(info.alias or name))
        table = naming.shorten_fragments(*child_path)
        if is_subclass(item, BaseModel):
            rows = _as_rows(item)
            child = expected_table(root.resource, table, rows, naming, root.write_disposition)
            child = replace(child, table=table, parent=parent.table, root=root.table)
            out.append((child, rows))
            out.extend(nested_models(root, rows, naming, _parent=(child, child_path)))
            continue
        try:
            data_type: str | None = py_type_to_sc_type(item)
        except TypeError:  # a type dlt infers from the data
            data_type = None
        column = ExpectedColumn(naming.normalize_identifier("value"), data_type, field=name)
        out.append((ExpectedTable(root.resource, table, (column,), root.write_disposition,
                                  getattr(item, "__name__", str(item)), parent.table, root.table),
                    None))
    return out
