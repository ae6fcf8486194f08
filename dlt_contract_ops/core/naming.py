"""Expected destination columns from a Pydantic model, through dlt's own naming.

dlt names a model field's column `field.alias or name` (see
`dlt.common.libs.pydantic.pydantic_to_table_schema_columns`), then normalizes it with the source
schema's naming convention. Its validator dumps rows by alias, so a field with a
`serialization_alias` lands its values under that name too: both names are expected.
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

    raw = pydantic_to_table_schema_columns(model)
    ser_aliases = _serialization_aliases(model)
    columns: dict[str, ExpectedColumn] = {}
    for raw_name, col in raw.items():
        nullable = bool(col.get("nullable", True))
        data_type = col.get("data_type")
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
                    precision=col.get("precision"),
                    scale=col.get("scale"),
                ),
            )
    return ExpectedTable(
        resource=resource_name,
        table=naming.normalize_tables_path(table_name),
        columns=tuple(columns.values()),
        write_disposition=write_disposition,
        model_name=getattr(model, "__name__", str(model)),
    )
