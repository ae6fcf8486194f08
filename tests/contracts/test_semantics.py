"""Declaring semantics on Pydantic models, and reading them back as contracts with the
columns named as dlt lands them."""

from __future__ import annotations

import enum
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional

import pytest
from dlt.common.normalizers.naming import direct, snake_case, sql_ci_v1
from pydantic import BaseModel, Field

from dlt_contract_ops.contracts.extract import contract_from_model
from dlt_contract_ops.contracts.model import ColumnContract, ResourceContract
from dlt_contract_ops.contracts.semantics import Semantics, TableSemantics
from dlt_contract_ops.core.naming import expected_table
from dlt_contract_ops.errors import DeclarationError

SNAKE = snake_case.NamingConvention()


def read(model: type[Any], naming: Any = SNAKE, table: str = "order_lines") -> ResourceContract:
    """What `contract snapshot` reads: discovery's ExpectedTable plus the declarations."""
    return contract_from_model("erp", expected_table("lines", table, model, naming), model, naming)


def column(contract: ResourceContract, name: str) -> ColumnContract:
    found = contract.column(name)
    assert found is not None, f"{name} not in {contract.names}"
    return found


class Status(str, enum.Enum):
    PAID = "paid"
    PENDING = "pending"


@TableSemantics(keys=("orderId", "line_no"), grain="one row per order line")
class OrderLine(BaseModel):
    orderId: str
    line_no: int
    unit_price: Annotated[Decimal, Semantics(unit="USD"), Field(max_digits=12, decimal_places=2)]
    updated_at: Annotated[datetime, Semantics(timezone="UTC", description="last change")]
    status: Status
    channel: Literal["web", "store"] | None = None
    discount_code: Annotated[str, Field(max_length=16)] | None = None
    region: Annotated[str | None, Semantics(category_pattern=r"^[A-Z]{2}$")] = None
    geom: Annotated[str, Semantics(crs="EPSG:4326")] = Field(description="WKT point")
    size_code: Annotated[int, Semantics(categories=(3, 1, 2), precision=16)]
    price_cents: Annotated[int, Semantics(unit="USD_cents", renamed_from="priceCentsOld")]


def test_declarations_become_the_contract() -> None:
    c = read(OrderLine)
    assert (c.table, c.keys, c.grain, c.model) == (
        "order_lines", ("line_no", "order_id"), "one row per order line", "OrderLine",
    )
    expected = {
        "order_id": ColumnContract("order_id", "text", False),
        "line_no": ColumnContract("line_no", "bigint", False),
        "unit_price": ColumnContract("unit_price", "decimal", False, precision=12, scale=2,
                                     unit="USD"),
        "updated_at": ColumnContract("updated_at", "timestamp", False, timezone="UTC",
                                     description="last change"),
        "status": ColumnContract("status", "text", False, categories=("paid", "pending")),
        "channel": ColumnContract("channel", "text", True, categories=("store", "web")),
        "discount_code": ColumnContract("discount_code", "text", True, precision=16),
        "region": ColumnContract("region", "text", True, category_pattern="^[A-Z]{2}$"),
        "geom": ColumnContract("geom", "text", False, crs="EPSG:4326", description="WKT point"),
        "size_code": ColumnContract("size_code", "bigint", False, precision=16,
                                    categories=("1", "2", "3")),
        "price_cents": ColumnContract("price_cents", "bigint", False, unit="USD_cents",
                                      renamed_from="price_cents_old"),
    }
    assert {col.name: col for col in c.columns} == expected


def test_nullability_comes_from_the_declaration_only() -> None:
    class M(BaseModel):
        required_with_default: int = 0
        optional: int | None = None
        # typing.Optional and `X | None` are different objects at runtime: read both
        optional_without_default: Optional[int]  # noqa: UP045

    c = read(M)
    assert {col.name: col.nullable for col in c.columns} == {
        "required_with_default": False,  # a default is not a NULL promise: dlt lands NOT NULL
        "optional": True,
        "optional_without_default": True,
    }


@pytest.mark.parametrize(
    ("naming", "expected"),
    [
        (SNAKE, {"unit_price", "order_id", "preisx"}),
        (direct.NamingConvention(), {"unitPrice", "order-id", "Preis €"}),
        (sql_ci_v1.NamingConvention(), {"unitprice", "order_id", "preis"}),
    ],
    ids=["snake_case", "direct", "sql_ci_v1"],
)
def test_column_names_are_landed_names_of_the_schema_naming(
    naming: Any, expected: set[str]
) -> None:
    class M(BaseModel):
        unitPrice: Annotated[float, Semantics(unit="USD")]
        order_id: str = Field(alias="order-id")
        preis: Annotated[float, Semantics(unit="EUR")] = Field(alias="Preis €")

    c = read(M, naming)
    assert set(c.names) == expected
    # and they are exactly the names core/naming expects to land
    assert set(c.names) == expected_table("r", "t", M, naming).names
    units = {col.name: col.unit for col in c.columns if col.unit}
    assert sorted(units.values()) == ["EUR", "USD"]


def test_serialization_alias_lands_under_both_names_with_the_same_semantics() -> None:
    class M(BaseModel):
        amount: Annotated[float, Semantics(unit="USD")] = Field(serialization_alias="amountUsd")

    c = read(M)
    assert {(col.name, col.unit) for col in c.columns} == {("amount", "USD"), ("amount_usd", "USD")}


def test_keys_may_name_field_alias_or_landed_column() -> None:
    @TableSemantics(keys=("Order-Id", "line_no", "createdAt"))
    class M(BaseModel):
        order: str = Field(alias="Order-Id")
        lineNo: int = Field(alias="line_no")
        createdAt: datetime

    assert read(M).keys == ("created_at", "line_no", "order_id")


def test_table_semantics_are_inherited() -> None:
    class Child(OrderLine):
        extra: int | None = None

    assert read(Child).grain == "one row per order line"


DECLARATION_ERRORS: list[tuple[str, Any, str]] = [
    ("categories and pattern", lambda: Semantics(categories=("a",), category_pattern="^a"),
     "both `categories`"),
    ("bad pattern", lambda: Semantics(category_pattern="(unclosed"), "not a regular expression"),
    ("one string as categories", lambda: Semantics(categories="paid"), "not one string"),
    ("empty categories", lambda: Semantics(categories=()), "is empty"),
    ("blank unit", lambda: Semantics(unit="  "), r"unit=\.\.\.\) must be a non-empty string"),
    ("negative precision", lambda: Semantics(precision=-1), "non-negative int"),
    ("empty keys", lambda: TableSemantics(keys=()), "one or more field names"),
    ("decorating a non-model", lambda: TableSemantics(grain="x")(int), "not one"),
]


@pytest.mark.parametrize(("build", "message"), [d[1:] for d in DECLARATION_ERRORS],
                         ids=[d[0] for d in DECLARATION_ERRORS])
def test_bad_declarations_fail_where_they_are_written(build: Any, message: str) -> None:
    with pytest.raises(DeclarationError, match=message):
        build()


def test_a_key_that_names_no_field_says_which_model_and_lists_the_fields() -> None:
    @TableSemantics(keys=("order_idd",))
    class Orders(BaseModel):
        order_id: str
        total: float

    with pytest.raises(DeclarationError) as err:
        read(Orders)
    assert str(err.value) == (
        "@TableSemantics(keys=...) on `Orders` names `order_idd`, which is not a field of the "
        "model. Fields: order_id, total."
    )


def test_two_semantics_on_one_field_is_an_error() -> None:
    class M(BaseModel):
        x: Annotated[int, Semantics(unit="m")] | None = None
        y: Annotated[Annotated[int, Semantics(unit="kg")] | None, Semantics(unit="s")] = None

    with pytest.raises(DeclarationError, match=r"`M.y` declares Semantics 2 times"):
        read(M)


def test_semantics_do_not_change_validation_or_landed_types() -> None:
    class Plain(BaseModel):
        price: float
        at: datetime

    class Declared(BaseModel):
        price: Annotated[float, Semantics(unit="USD")]
        at: Annotated[datetime, Semantics(timezone="UTC")]

    plain, declared = (expected_table("r", "t", m, SNAKE) for m in (Plain, Declared))
    assert plain.columns == declared.columns
    row = {"price": "1.5", "at": "2026-01-01T00:00:00Z"}
    assert Plain.model_validate(row).model_dump() == Declared.model_validate(row).model_dump()
