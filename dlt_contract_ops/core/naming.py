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
                ),
            )
    return ExpectedTable(
        resource=resource_name,
        table=naming.normalize_tables_path(table_name),
        columns=tuple(columns.values()),
        write_disposition=write_disposition,
        model_name=getattr(model, "__name__", str(model)),
    )
