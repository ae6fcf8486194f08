"""Expected columns and table names, derived from Pydantic models through dlt's naming."""

from __future__ import annotations

from typing import Any

import pytest
from dlt.common.normalizers.naming import direct, snake_case, sql_ci_v1, sql_cs_v1
from pydantic import BaseModel, ConfigDict, Field, Json
from pydantic.alias_generators import to_camel

from dlt_contract_ops.core.naming import expected_table

NAMINGS = {
    "snake_case": snake_case.NamingConvention(),
    "direct": direct.NamingConvention(),
    "sql_cs_v1": sql_cs_v1.NamingConvention(),
    "sql_ci_v1": sql_ci_v1.NamingConvention(),
}


class Camel(BaseModel):
    startTime: str
    userId: int


class Aliased(BaseModel):
    x: int = Field(alias="userId")


class SerAliased(BaseModel):
    s: str = Field(serialization_alias="serAlias")


class BothAliases(BaseModel):
    a: str = Field(alias="inName", serialization_alias="outName")


class ValidationAliased(BaseModel):
    v: str = Field(validation_alias="vIn")


class OddAliases(BaseModel):
    ip: str | None = Field(default=None, alias="ip-address")
    weird: str | None = Field(default=None, alias='Weird "Name"')
    size: int | None = Field(default=None, alias="größe")


class Inner(BaseModel):
    k: int


class Nested(BaseModel):
    id: int
    payload: Inner
    tags: list[str]


class Untyped(BaseModel):
    id: int
    anything: Any = None
    maybe_any: Any | None = None
    raw: Json[Any] | None = None


class Generated(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    order_total: float
    shipped_at: str


@pytest.mark.parametrize(
    ("model", "naming", "expected"),
    [
        # camelCase attributes: dlt's default convention snake-cases them
        (Camel, "snake_case", {"start_time", "user_id"}),
        (Camel, "sql_ci_v1", {"starttime", "userid"}),
        # a source whose schema uses a case-sensitive convention keeps the case
        (Camel, "direct", {"startTime", "userId"}),
        (Camel, "sql_cs_v1", {"startTime", "userId"}),
        # the alias names the column; the attribute name of an aliased field is not used
        (Aliased, "snake_case", {"user_id"}),
        (Aliased, "direct", {"userId"}),
        # the validator dumps by alias: a serialization_alias is an extra landed name
        (SerAliased, "snake_case", {"s", "ser_alias"}),
        (SerAliased, "sql_cs_v1", {"s", "serAlias"}),
        (BothAliases, "snake_case", {"in_name", "out_name"}),
        # a validation_alias only changes what is read: the column keeps the attribute name
        (ValidationAliased, "snake_case", {"v"}),
        # odd identifiers are data
        (OddAliases, "snake_case", {"ip_address", "weird_namex", "gr_e"}),
        (OddAliases, "direct", {"ip-address", "Weird _Name_", "größe"}),
        (OddAliases, "sql_cs_v1", {"ip_address", "Weird_Name", "gr_e"}),
        # a nested model and a list are one json column each
        (Nested, "snake_case", {"id", "payload", "tags"}),
        # `Any` fields: dlt infers their type from data, but they land under their name
        (Untyped, "snake_case", {"id", "anything", "maybe_any", "raw"}),
        # an alias generator is an alias like any other
        (Generated, "snake_case", {"order_total", "shipped_at"}),
        (Generated, "direct", {"orderTotal", "shippedAt"}),
    ],
)
def test_expected_column_names(model: type[BaseModel], naming: str, expected: set[str]) -> None:
    table = expected_table("r", "t", model, NAMINGS[naming])
    assert table.names == expected
    # one ExpectedColumn per name, no duplicates
    assert len(table.columns) == len(expected)


@pytest.mark.parametrize(
    ("model", "column", "data_type", "nullable"),
    [
        (Camel, "start_time", "text", False),
        (Camel, "user_id", "bigint", False),
        (OddAliases, "gr_e", "bigint", True),
        (Nested, "payload", "json", False),
        (Nested, "tags", "json", False),
        (Untyped, "anything", None, True),
        (SerAliased, "ser_alias", "text", False),
    ],
)
def test_expected_column_types(
    model: type[BaseModel], column: str, data_type: str | None, nullable: bool
) -> None:
    table = expected_table("r", "t", model, NAMINGS["snake_case"])
    by_name = {c.name: c for c in table.columns}
    assert by_name[column].data_type == data_type
    assert by_name[column].nullable is nullable


@pytest.mark.parametrize(
    ("table_name", "naming", "expected"),
    [
        ("OrderItems", "snake_case", "order_items"),
        ("OrderItems", "direct", "OrderItems"),
        ("OrderItems", "sql_cs_v1", "OrderItems"),
        ("OrderItems", "sql_ci_v1", "orderitems"),
        ("plain_tbl", "snake_case", "plain_tbl"),
        ("plain_tbl", "direct", "plain_tbl"),
        ("Weird Table", "snake_case", "weird_table"),
        ("events", "snake_case", "events"),
    ],
)
def test_table_name_normalization(table_name: str, naming: str, expected: str) -> None:
    table = expected_table("resource", table_name, Camel, NAMINGS[naming])
    assert table.table == expected
    assert table.resource == "resource"  # the resource keeps its own name


def test_expected_table_carries_disposition_and_model() -> None:
    table = expected_table("r", "t", Camel, NAMINGS["snake_case"], "merge")
    assert (table.write_disposition, table.model_name) == ("merge", "Camel")
