"""The ODCS mapping as pure values: every dlt type and declaration, valid against the vendored
ODCS v3.1.0 JSON schema whatever the combination, the type mapping readable back, and one
golden document byte for byte (`make golden` rewrites it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from dlt_contract_ops.contracts.model import ColumnContract, Version
from dlt_contract_ops.contracts.odcs import ChildTable, to_odcs, to_yaml
from dlt_contract_ops.contracts.odcs_read import contracts_from_odcs
from dlt_contract_ops.contracts.odcs_types import LOGICAL_TYPES, dlt_type_of, parse_dlt_type
from dlt_contract_ops.contracts.schemas import odcs_schema
from tests.contracts.builders import col, member, res

GOLDEN = Path(__file__).parent / "golden" / "erp.odcs.yaml"
VALIDATOR = jsonschema.Draft201909Validator(odcs_schema())

#: every declaration a column can carry, one at a time
DECLARATIONS: list[dict[str, Any]] = [
    {},
    {"unit": "USD"},
    {"timezone": "UTC"},
    {"categories": ("a", "b")},
    {"category_pattern": "^[a-z]+$"},
    {"crs": "EPSG:4326"},
    {"description": "what it is"},
    {"renamed_from": "old_name"},
    {"value_format": "RFC 3339"},
    {"ge": "1", "lt": "10.5"},
    {"ge": "1.50", "le": "1e-3", "gt": "-0", "lt": "nan"},
    {"gt": "2020-01-01", "le": "2030-01-01"},
    {"multiple_of": "0.5"},
    {"multiple_of": "-1"},
    {"min_length": 1, "max_length": 9, "pattern": "^x"},
    {"precision": 32},
    {"precision": 10, "scale": 2},
    {"members": (member("[]", unit="m"),)},
    {"members": (member("[].price", unit="USD"), member("[].tags[]", categories=("x",)))},
    {"members": (member("weight", unit="kg"), member("dims.height", unit="cm"))},
    {"members": (member("{}", unit="cm"), member("{}.x", timezone="UTC"))},
]
TYPES = [*sorted(LOGICAL_TYPES), None]


def validate(document: dict[str, Any]) -> None:
    # through YAML and back, as a reader of the file gets it
    VALIDATOR.validate(yaml.safe_load(to_yaml(document)))


@pytest.mark.parametrize("dlt_type", TYPES)
def test_every_declaration_on_every_type_is_valid_odcs(dlt_type: str | None) -> None:
    columns = [col(f"c{i}", dlt_type, i % 2 == 0, **props)
               for i, props in enumerate(DECLARATIONS)]
    document = to_odcs("erp", [res(*columns, keys=("c0",), grain="one row per c0",
                                   primary_key=("c1",), partition=("c2", "c3"),
                                   unique=("c4",), cluster=("c5",), owner="Team")])
    validate(document)
    props = {p["name"]: p for p in document["schema"][0]["properties"]}
    assert set(props) == {c.name for c in columns}
    assert all(p["required"] is (i % 2 != 0) for i, p in enumerate(
        props[f"c{i}"] for i in range(len(columns))))


def _declared_values(props: dict[str, Any]) -> list[str]:
    """The declared values of `props` as text, members' own declarations included."""
    out: list[str] = []
    for key, value in props.items():
        if key in ("precision", "scale"):
            continue  # the physicalType (test_type_mapping_reads_back)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, ColumnContract):
                out += [v for v in (item.unit, item.timezone) if v]
                out += list(item.categories or ())
            else:
                out.append(str(item))
    return out


@pytest.mark.parametrize("dlt_type", TYPES)
def test_nothing_declared_is_dropped(dlt_type: str | None) -> None:
    """Each declaration's value is somewhere in the property it belongs to."""
    for props in DECLARATIONS:
        (obj,) = to_odcs("erp", [res(col("c", dlt_type, True, **props))])["schema"]
        text = to_yaml(obj["properties"][0])
        for value in _declared_values(props):
            assert value in text, (dlt_type, props, value, text)


#: (column, the logical type, the ODCS options the type is written with)
TYPE_CASES = [
    (col("a", "text"), "string", None),
    (col("a", "text", precision=255), "string", {"maxLength": 255}),
    (col("a", "binary"), "string", {"format": "binary"}),
    (col("a", "bool"), "boolean", None),
    (col("a", "bigint"), "integer", {"format": "i64"}),
    (col("a", "bigint", precision=16), "integer", {"format": "i16"}),
    (col("a", "wei"), "integer", None),
    (col("a", "double"), "number", {"format": "f64"}),
    (col("a", "double", precision=32), "number", {"format": "f32"}),
    (col("a", "decimal", precision=10, scale=2), "number", None),
    (col("a", "timestamp", timezone="UTC"), "timestamp", {"defaultTimezone": "UTC"}),
    (col("a", "date"), "date", None),
    (col("a", "time"), "time", None),
    (col("a", "json"), "object", None),
    (col("a", "json", members=(member("[]", unit="m"),)), "array", None),
    (col("a", None), None, None),
]


@pytest.mark.parametrize(("column", "logical", "options"), TYPE_CASES,
                         ids=[f"{c.type_label}-{lt}" for c, lt, _ in TYPE_CASES])
def test_type_mapping_reads_back(
    column: ColumnContract, logical: str | None, options: dict[str, Any] | None
) -> None:
    (obj,) = to_odcs("erp", [res(column)])["schema"]
    prop = obj["properties"][0]
    assert prop.get("logicalType") == logical
    assert prop.get("logicalTypeOptions") == options
    if column.type is None:
        assert "physicalType" not in prop
        return
    # an importer reads the dlt type back from physicalType, exactly
    back = dlt_type_of(prop.get("logicalType"), prop["physicalType"], options)
    assert back == (column.type, column.precision, column.scale)
    # and from a document without one (another tool's), the nearest dlt type
    nearest = dlt_type_of(prop.get("logicalType"), "VARCHAR(3)", options)
    assert nearest[0] == ("binary" if column.type == "binary" else {
        "wei": "bigint", "decimal": "double"}.get(column.type, column.type))


def test_parse_dlt_type_refuses_destination_types() -> None:
    assert parse_dlt_type("decimal(?,2)") == ("decimal", None, 2)
    assert parse_dlt_type("NUMERIC(5,2)") is None
    assert parse_dlt_type("varchar") is None


def golden_document() -> str:
    """A source with every kind of declaration, hint and table (`make golden` writes it)."""
    orders = res(
        col("order_id", "text", precision=12, description="The order number"),
        col("line_no", "bigint", ge="1"),
        col("unit_price", "decimal", precision=10, scale=2, unit="USD"),
        col("updated_at", "timestamp", timezone="Europe/Berlin"),
        col("status", "text", categories=("paid", "pending")),
        col("sku", "text", category_pattern="^[A-Z]{3}-[0-9]+$", min_length=5),
        col("ship_to", "text", True, description="ISO country", renamed_from="country"),
        col("legs", "json", members=(member("[].carrier", categories=("dhl", "ups")),
                                     member("[].weight", unit="kg"))),
        col("region", "text"),
        resource="order-lines", table="order_lines", keys=("line_no", "order_id"),
        grain="one row per order line", primary_key=("order_id",), merge_key=("order_id",),
        partition=("region",), owner="Order Platform", consumer_owners=("Analytics",),
        change_key="updated_at",
    )
    tags = res(col("label", "text", categories=("fragile", "gift")),
               col("score", "double", True), resource="order-lines", table="order_lines__tags")
    document = to_odcs("erp", [orders], version=Version(1, 0, 0),
                       children=[ChildTable(tags, "order_lines")])
    return to_yaml(document)


def golden_files() -> dict[Path, str]:
    return {GOLDEN: golden_document()}


def test_golden_document() -> None:
    text = golden_document()
    VALIDATOR.validate(yaml.safe_load(text))
    assert GOLDEN.exists(), f"missing golden {GOLDEN}: run `make golden` and review it"
    assert text == GOLDEN.read_text(encoding="utf-8")


@pytest.mark.parametrize("bad", [
    {"logicalType": "string", "logicalTypeOptions": {"defaultTimezone": "UTC"}},
    {"logicalType": "integer", "logicalTypeOptions": {"format": "i256"}},
    {"logicalType": "number", "unit": "USD"},
    {"logicalType": "text"},
])
def test_the_vendored_schema_refuses_what_odcs_forbids(bad: dict[str, Any]) -> None:
    """The validation above means something: the schema is strict where the export is careful."""
    document = to_odcs("erp", [res(col("c", "text"))])
    document["schema"][0]["properties"] = [{"name": "c", **bad}]
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(document)


@pytest.mark.parametrize("dlt_type", TYPES)
def test_export_reads_back_to_the_same_contracts(dlt_type: str | None) -> None:
    """An importer gets back exactly what was exported: nothing lost, nothing invented."""
    columns = [col(f"c{i}", dlt_type, i % 2 == 0, **props)
               for i, props in enumerate(DECLARATIONS)
               if dlt_type is not None or "precision" not in props]
    root = res(*columns, keys=("c0",), grain="one row per c0", primary_key=("c1",),
               partition=("c2", "c3"), unique=("c4",), cluster=("c5",), merge_key=("c1",),
               owner="Team", consumer_owners=("BI", "Finance"), change_key="c3")
    child = ChildTable(res(col("value", dlt_type, True), resource="orders",
                           table="orders__tags"), "orders")
    text = to_yaml(to_odcs("erp", [root], children=[child], version=Version(1, 2, 3)))
    roots, children = contracts_from_odcs(yaml.safe_load(text))
    assert roots == [root]
    assert children == [child]


FOREIGN = """
apiVersion: v3.1.0
kind: DataContract
id: 53581432-6c55-4ba2-a65f-72344a91553a
version: 1.1.0
status: active
name: seller_payments
schema:
  - name: payments
    physicalName: tbl_payments
    logicalType: object
    dataGranularityDescription: one row per payment
    properties:
      - name: pmt_id
        primaryKey: true
        primaryKeyPosition: 1
        logicalType: string
        physicalType: varchar(18)
        logicalTypeOptions: {maxLength: 18}
        required: true
      - name: amount
        logicalType: number
        physicalType: NUMERIC(10,2)
        logicalTypeOptions: {minimum: 0}
      - name: paid_at
        logicalType: timestamp
        logicalTypeOptions: {defaultTimezone: Australia/Sydney}
      - name: status
        logicalType: string
        unique: false
        quality:
          - metric: invalidValues
            arguments: {validValues: [paid, refunded]}
            mustBe: 0
"""


def test_a_document_another_tool_wrote_reads_as_far_as_odcs_says() -> None:
    document = yaml.safe_load(FOREIGN)
    VALIDATOR.validate(document)
    (payments,), children = contracts_from_odcs(document)
    assert children == []
    assert (payments.source, payments.resource, payments.table, payments.grain) == (
        "seller_payments", "payments", "tbl_payments", "one row per payment")
    assert payments.hints.primary_key == ("pmt_id",)
    assert payments.keys is None
    assert payments.column("pmt_id") == col("pmt_id", "text", precision=18)
    assert payments.column("amount") == col("amount", "double", True, ge="0")
    assert payments.column("paid_at") == col("paid_at", "timestamp", True,
                                             timezone="Australia/Sydney")
    assert payments.column("status") == col("status", "text", True,
                                            categories=("paid", "refunded"))
