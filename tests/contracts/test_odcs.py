"""`contract export --format odcs`: real sources with declared semantics, exported through the
CLI in a subprocess, every document valid against the vendored ODCS v3.1.0 JSON schema."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import yaml

from dlt_contract_ops.contracts.canonical import column_document
from dlt_contract_ops.contracts.schemas import odcs_schema
from tests.projects import Project

SHOP = '''
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, ClassVar, Literal, Optional

import dlt
from pydantic import BaseModel, Field

from dlt_contract_ops import contracts as c


class Leg(BaseModel):
    carrier: Literal["dhl", "ups"]
    weight: Annotated[float, c.Semantics(unit="kg")]


@c.TableSemantics(keys=("orderId", "lineNo"), grain="one row per order line",
                  owner="Order Platform", consumer_owners=("Analytics",),
                  change_key="updatedAt")
class OrderLine(BaseModel):
    """An order line."""

    orderId: str = Field(max_length=12, description="The order number")
    lineNo: int = Field(ge=1)
    unitPrice: Annotated[Decimal, c.Semantics(unit="USD")] = Field(max_digits=10,
                                                                   decimal_places=2)
    updatedAt: Annotated[datetime, c.Semantics(timezone="Europe/Berlin")]
    status: Literal["paid", "pending"]
    sku: Annotated[str, c.Semantics(category_pattern="^[A-Z]{3}-[0-9]+$")] = Field(
        min_length=5)
    shipTo: Annotated[Optional[str], c.Semantics(description="ISO country")] = Field(
        default=None, alias="Ship To (ISO)")
    legs: list[Leg] = []
    dims_cm: dict[str, Annotated[float, c.Semantics(unit="cm")]] = {}


class Tag(BaseModel):
    # a Semantics inside a list `skip_nested_types` leaves out is refused (a snapshot does not
    # record child tables); a child table exports types, nullability and Literal code sets
    label: Literal["gift", "fragile"]
    score: Optional[float] = None


class Customer(BaseModel):
    dlt_config: ClassVar[dict[str, bool]] = {"skip_nested_types": True}

    id: int
    email: Optional[str] = None
    tags: list[Tag] = []
    aliases: list[str] = []


@dlt.resource(name="order-lines", columns=OrderLine, primary_key="orderId",
              merge_key="orderId", write_disposition="merge")
def order_lines():
    yield from ()


@dlt.resource(columns=Customer, primary_key="id")
def customers():
    yield from ()


@dlt.source(name="shop")
def shop():
    return order_lines, customers
'''

BARE = '''
import dlt
from pydantic import BaseModel


class Thing(BaseModel):
    id: int


@dlt.resource(columns=Thing)
def things():
    yield from ()


@dlt.source(name="bare")
def bare():
    return things
'''


@pytest.fixture
def shop(project: Project) -> Project:
    project.module("pipelines.shop", SHOP)
    project.module("pipelines.bare", BARE)
    project.source("shop", "pipelines.shop:shop")
    project.source("bare", "pipelines.bare:bare")
    return project


def validate(text: str) -> dict[str, Any]:
    document = yaml.safe_load(text)
    jsonschema.Draft201909Validator(odcs_schema()).validate(document)
    assert isinstance(document, dict)
    return document


def objects(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o["name"]: o for o in document["schema"]}


def props(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in obj["properties"]}


def custom(element: dict[str, Any]) -> dict[str, Any]:
    return {c["property"]: c["value"] for c in element.get("customProperties", [])}


def exported(project: Project, *args: str) -> str:
    proc = project.cli("contract", "export", "--format", "odcs", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_every_declaration_lands_where_odcs_has_a_place(shop: Project) -> None:
    document = validate(exported(shop, "-s", "shop"))
    assert (document["apiVersion"], document["kind"], document["name"]) == (
        "v3.1.0", "DataContract", "shop")
    assert (document["version"], document["status"]) == ("0.0.0", "draft")
    tables = objects(document)
    assert set(tables) == {"order-lines", "customers", "customers__tags", "customers__aliases"}
    lines = tables["order-lines"]
    assert (lines["physicalName"], lines["dataGranularityDescription"]) == (
        "order_lines", "one row per order line")
    assert custom(lines) == {
        "model": "OrderLine", "keys": ["line_no", "order_id"],
        "dltHints": {"primary_key": ["order_id"], "merge_key": ["order_id"]},
        "owner": "Order Platform", "changeKey": "updated_at", "consumerOwners": ["Analytics"],
    }
    assert lines["quality"][0]["metric"] == "duplicateValues"
    assert lines["quality"][0]["arguments"] == {"properties": ["line_no", "order_id"]}
    p = props(lines)
    # the dlt primary key is the ODCS primary key; text width and declared bounds are options;
    # the source's configured destination (duckdb) gives the physical type, dlt's type stays
    assert document["customProperties"] == [{"property": "dltDestination", "value": "duckdb"}]
    assert p["order_id"] == {
        "name": "order_id", "logicalType": "string", "physicalType": "VARCHAR",
        "description": "The order number", "required": True, "primaryKey": True,
        "primaryKeyPosition": 1, "logicalTypeOptions": {"maxLength": 12},
        "customProperties": [{"property": "dltDataType", "value": "text(12)"}],
    }
    assert p["line_no"]["logicalTypeOptions"] == {"format": "i64", "minimum": 1}
    assert (p["unit_price"]["logicalType"], p["unit_price"]["physicalType"]) == (
        "number", "DECIMAL(10,2)")
    assert custom(p["unit_price"]) == {"dltDataType": "decimal(10,2)", "unit": "USD"}
    assert p["updated_at"]["logicalTypeOptions"] == {"defaultTimezone": "Europe/Berlin"}
    (code_set,) = p["status"]["quality"]
    assert (code_set["metric"], code_set["arguments"], code_set["mustBe"]) == (
        "invalidValues", {"validValues": ["paid", "pending"]}, 0)
    assert p["sku"]["quality"][0]["arguments"] == {"pattern": "^[A-Z]{3}-[0-9]+$"}
    assert p["sku"]["logicalTypeOptions"] == {"minLength": 5}
    assert (p["ship_to_isox"]["required"], p["ship_to_isox"]["description"]) == (
        False, "ISO country")
    # a list of models in a json column: an array of objects, declarations on the fields
    legs = p["legs"]
    assert (legs["logicalType"], legs["physicalType"]) == ("array", "JSON")
    leg = props(legs["items"])
    assert legs["items"]["logicalType"] == "object"
    assert leg["carrier"]["quality"][0]["arguments"] == {"validValues": ["dhl", "ups"]}
    assert custom(leg["weight"]) == {"unit": "kg"}
    # a mapping's values have no ODCS nesting: their declarations are custom members
    assert custom(p["dims_cm"]) == {"dltDataType": "json",
                                    "members": [{"path": "{}", "unit": "cm"}]}
    # child tables of a skip_nested_types model: schema objects of their own
    tags = tables["customers__tags"]
    assert custom(tags) == {"resource": "customers", "parentTable": "customers", "model": "Tag"}
    assert custom(tables["customers__aliases"]) == {"resource": "customers",
                                                    "parentTable": "customers"}
    assert (props(tags)["score"]["logicalType"], props(tags)["score"]["required"]) == (
        "number", False)
    assert props(tags)["label"]["quality"][0]["arguments"] == {"validValues": ["fragile", "gift"]}
    assert set(props(tables["customers__aliases"])) == {"value"}
    assert "tags" not in props(tables["customers"])


def test_export_agrees_with_the_snapshot(shop: Project) -> None:
    """Every column and declared property of the snapshot is in the export."""
    assert shop.cli("contract", "snapshot", "-s", "shop", "--version", "1.2.0").returncode == 0
    document = validate(exported(shop, "-s", "shop", "--version", "1.2.0"))
    assert (document["version"], document["status"]) == ("1.2.0", "active")
    tables = objects(document)
    for path in sorted((shop.root / "contracts" / "shop" / "1.2.0").iterdir()):
        snapshot = json.loads(path.read_text())
        obj = tables[snapshot["resource"]]
        assert obj["physicalName"] == snapshot["table"]
        assert sorted(props(obj)) == [c["name"] for c in snapshot["columns"]]
        for column in snapshot["columns"]:
            prop = props(obj)[column["name"]]
            assert prop["required"] is not column["nullable"]
            assert custom(prop)["dltDataType"].split("(")[0] == column["type"]
            text = json.dumps(prop)
            declared = {k: v for k, v in column.items()
                        if k not in ("name", "type", "nullable", "members")}
            for value in declared.values():
                for part in value if isinstance(value, list) else [value]:
                    assert json.dumps(part)[1:-1] in text or str(part) in text, (column, part)


UNMODELLED = """
import dlt


@dlt.resource
def raw():
    yield {"id": 1}


@dlt.source(name="raw")
def raw_source():
    return raw
"""


def test_out_folder_file_and_all(shop: Project) -> None:
    shop.module("pipelines.raw", UNMODELLED)
    shop.source("raw", "pipelines.raw:raw_source")
    proc = shop.cli("contract", "export", "--all", "--out", "odcs")
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in (shop.root / "odcs").iterdir())
    assert written == ["bare.odcs.yaml", "shop.odcs.yaml"]
    assert "Skipped `raw`: no resource has a Pydantic model." in proc.stderr
    # named, a source without models is an error
    assert "has no resource with a Pydantic model" in _fails(shop, "-s", "raw")
    for name in written:
        validate((shop.root / "odcs" / name).read_text())
    assert "Exported `shop` (odcs): odcs/shop.odcs.yaml" in proc.stdout
    # one source to one file; the same bytes as the folder's
    assert shop.cli("contract", "export", "-s", "shop", "--out", "one.yaml").returncode == 0
    assert (shop.root / "one.yaml").read_text() == (shop.root / "odcs" / "shop.odcs.yaml"
                                                    ).read_text()
    # printed, several sources form one YAML stream
    docs = list(yaml.safe_load_all(exported(shop, "-s", "bare", "-s", "shop")))
    assert [d["name"] for d in docs] == ["bare", "shop"]


def test_destination_types(shop: Project) -> None:
    """--destination names the types dlt creates there; without any, the dlt types stand."""
    p = props(objects(validate(exported(shop, "-s", "shop", "--destination", "postgres")))[
        "order-lines"])
    assert (p["order_id"]["physicalType"], p["unit_price"]["physicalType"]) == (
        "varchar(12)", "numeric(10,2)")
    # the source without a configured destination
    (shop.root / ".dlt" / "config.toml").write_text(
        '[sources.shop.contract_ops]\nref = "pipelines.shop:shop"\n')
    document = validate(exported(shop, "-s", "shop"))
    assert "customProperties" not in document
    p = props(objects(document)["order-lines"])
    assert (p["order_id"]["physicalType"], custom(p["order_id"])) == ("text(12)", {})
    err = _fails(shop, "-s", "shop", "--destination", "postgress")
    assert "Destination `postgress` is not a destination dlt knows. Did you mean `postgres`?" in err
    # a destination without SQL types: the dlt types stand
    p = props(objects(validate(exported(shop, "-s", "shop", "--destination", "filesystem")))[
        "order-lines"])
    assert p["order_id"]["physicalType"] == "text(12)"


def _fails(project: Project, *args: str) -> str:
    proc = project.cli("contract", "export", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    return proc.stderr


def test_bad_input_is_one_line_exit_2(shop: Project) -> None:
    assert "`nope`" in _fails(shop, "-s", "nope")
    assert shop.cli("contract", "export", "-s", "shop", "--out", "x.yaml").returncode == 0
    before = (shop.root / "x.yaml").read_bytes()
    err = _fails(shop, "-s", "shop", "--out", "x.yaml")
    assert "`x.yaml` exists: pass --force" in err
    assert (shop.root / "x.yaml").read_bytes() == before
    assert shop.cli("contract", "export", "-s", "shop", "--out", "x.yaml",
                    "--force").returncode == 0
    err = _fails(shop, "-s", "shop", "-s", "bare", "--out", "x.yaml")
    assert "give a folder" in err
    err = _fails(shop, "-s", "shop", "--version", "1.0")
    assert "--version" in err
    both = shop.cli("contract", "export", "-s", "shop", "--all")  # click's usage error
    assert both.returncode == 2
    assert "Give either -s/--source NAME (repeatable) or --all, not both." in both.stderr
    (shop.root / ".dlt" / "config.toml").write_text("")
    assert "No source is declared, so there is nothing to export" in _fails(shop, "--all")


def test_unwritable_out_is_one_line_exit_2(shop: Project) -> None:
    # a folder below a regular file can be created by nobody, root included
    (shop.root / "plain").write_text("a file\n")
    err = _fails(shop, "-s", "shop", "--out", "plain/odcs")
    assert "Cannot write `" in err
    assert "plain/odcs/shop.odcs.yaml" in err
    assert "Give a writable --out" in err


def test_column_document_keys_all_have_an_odcs_home() -> None:
    """A property the snapshot records but the export ignores would be lost silently."""
    from dlt_contract_ops.contracts.model import ColumnContract

    every = ColumnContract("x", "text", True, 10, None, "m", "UTC", ("a",), None, "EPSG:4326",
                           "d", "y", "RFC", "1", None, "9", None, None, 1, 5, "^a")
    handled = {"name", "type", "nullable", "precision", "scale", "unit", "timezone",
               "categories", "category_pattern", "crs", "description", "renamed_from",
               "value_format", "ge", "gt", "le", "lt", "multiple_of", "min_length",
               "max_length", "pattern", "members"}
    assert set(column_document(every)) <= handled
    assert set(ColumnContract.__dataclass_fields__) == handled
