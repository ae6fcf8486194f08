"""`models infer --from-odcs FILE`: an ODCS document -> Pydantic models that guard the loads.

Round trip through real projects and the CLI: a source with declared semantics is exported,
the document imported into a project whose resources have no models, and the contracts that
project then declares (snapshot, diff, export) are the ones exported."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dlt_contract_ops.contracts.canonical import from_document
from dlt_contract_ops.contracts.odcs_read import contracts_from_odcs
from tests.contracts.test_odcs import SHOP
from tests.contracts.test_odcs_mapping import FOREIGN
from tests.projects import Project, checker_env

#: the shop source of `test_odcs.SHOP` with the same resources and dlt hints, no models
SHOP_UNMODELLED = '''
import dlt


@dlt.resource(name="order-lines", primary_key="order_id", merge_key="order_id",
              write_disposition="merge")
def order_lines():
    yield from ()


@dlt.resource(primary_key="id")
def customers():
    yield from ()


@dlt.source(name="shop")
def shop():
    return order_lines, customers
'''


#: every declaration a column can carry, inside json columns too, and child tables two deep
RICH = '''
from datetime import date, datetime, time
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Literal, Optional

import dlt
from pydantic import BaseModel, Field

from dlt_contract_ops import Semantics as S, TableSemantics


class Dims(BaseModel):
    depth: Annotated[float, S(unit="cm", description="front to back")] = Field(ge=0)
    code: Annotated[str, S(category_pattern="^[A-Z]+$")] = "X"


@TableSemantics(keys=("class",), grain="one row per reading")
class Reading(BaseModel):
    class_: int = Field(alias="class", gt=0, lt=1000)
    small: Annotated[int, S(precision=16)] = Field(multiple_of=5)
    ratio: Annotated[Optional[float], S(precision=32, unit="kg")] = Field(default=None, le=0.5)
    price: Decimal = Field(max_digits=12, decimal_places=4, ge=Decimal("0.01"))
    day: date = Field(ge=date(2020, 1, 1))
    at: Annotated[time, S(timezone="UTC")]
    seen: Annotated[datetime, S(timezone="UTC", value_format="RFC 3339", precision=6)]
    place: Annotated[Optional[str], S(crs="EPSG:4326")] = None
    name: Annotated[str, S(renamed_from="title", precision=40)] = Field(
        max_length=30, pattern="^[a-z]+$")
    blob: Optional[bytes] = Field(default=None, max_length=64)
    dims: Optional[Dims] = None
    tags: list[Annotated[str, S(categories=("a", "b"))]] = []
    nested: dict[str, list[Annotated[int, Field(ge=1)]]] = {}


class Part(BaseModel):
    sku: Literal["p1", "p2"]


class Box(BaseModel):
    weight: Optional[float] = None
    parts: list[Part] = []


class Shipment(BaseModel):
    dlt_config: ClassVar[dict[str, Any]] = {"skip_nested_types": True}

    id: int
    boxes: list[Box] = []


@dlt.resource(columns=Reading, primary_key="class", merge_key="day")
def readings():
    yield from ()


@dlt.resource(columns=Shipment)
def shipments():
    yield from ()


@dlt.source(name="rich")
def rich():
    return readings, shipments
'''

RICH_UNMODELLED = '''
import dlt


@dlt.resource(primary_key="class", merge_key="day")
def readings():
    yield from ()


@dlt.resource
def shipments():
    yield from ()


@dlt.source(name="rich")
def rich():
    return readings, shipments
'''


def _ok(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    proc = project.cli(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _fails(project: Project, *args: str) -> str:
    proc = project.cli("models", "infer", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    return proc.stderr


def _lint(*paths: Path) -> None:
    """ruff and mypy (strict) accept the generated modules."""
    for tool in (["ruff", "check", "--no-cache", "--isolated"],
                 ["mypy", "--strict", "--follow-imports=silent"]):
        proc = subprocess.run([sys.executable, "-m", *tool, *map(str, paths)],
                              capture_output=True, text=True, check=False, env=checker_env())
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("name", "modelled", "unmodelled"), [
    ("shop", SHOP, SHOP_UNMODELLED), ("rich", RICH, RICH_UNMODELLED)])
def test_export_then_import_declares_the_same_contracts(
    tmp_path: Path, name: str, modelled: str, unmodelled: str
) -> None:
    exporter = Project(tmp_path / "a")
    exporter.module(f"pipelines.{name}", modelled)
    exporter.source(name, f"pipelines.{name}:{name}")
    _ok(exporter, "contract", "export", "--format", "odcs", "-s", name, "--out", "doc.yaml")
    _ok(exporter, "contract", "snapshot", "-s", name, "--version", "1.0.0")

    importer = Project(tmp_path / "b")
    importer.module(f"pipelines.{name}", unmodelled)
    importer.source(name, f"pipelines.{name}:{name}")
    document = exporter.root / "doc.yaml"
    proc = _ok(importer, "models", "infer", "--from-odcs", str(document))
    roots = [o for o in yaml.safe_load(document.read_text())["schema"]
             if "parentTable" not in str(o.get("customProperties"))]
    written = importer.root / "inferred_models" / name
    assert sorted(p.name for p in written.glob("*.py")) == sorted(
        ["__init__.py", *(f"{o['physicalName']}.py" for o in roots)])
    assert proc.stdout.count("wrote `") == len(roots), proc.stdout
    config = (importer.root / ".dlt" / "config.toml").read_text()
    for o in roots:
        assert f'{o["name"]} = "inferred_models.{name}.{o["physicalName"]}:' in config, config

    # the snapshot of the importing project is the exporter's, byte for byte
    _ok(importer, "contract", "snapshot", "-s", name, "--version", "1.0.0")
    old, new = (p.root / "contracts" / name / "1.0.0" for p in (exporter, importer))
    assert sorted(f.name for f in new.iterdir()) == sorted(f.name for f in old.iterdir())
    for f in old.iterdir():
        assert (new / f.name).read_text() == f.read_text(), f.name
    diff = json.loads(_ok(importer, "contract", "diff", str(old), str(new), "--format",
                          "json").stdout)
    assert [a["changes"] for a in diff["assessments"]] == [[]], diff
    # ...and so is its export, child tables included
    again = _ok(importer, "contract", "export", "--format", "odcs", "-s", name).stdout
    assert yaml.safe_load(again) == yaml.safe_load(document.read_text())
    _lint(*written.glob("*.py"))


#: FOREIGN with a list of objects, typed, declared in part
LINES = """
name: lines
logicalType: array
required: true
items:
  logicalType: object
  properties:
    - name: sku
      logicalType: string
      quality:
        - {metric: invalidValues, arguments: {validValues: [a, b]}, mustBe: 0}
    - {name: qty, logicalType: integer, logicalTypeOptions: {minimum: 1}}
    - {name: note, logicalType: string}
"""

PAYMENTS = """
import dlt


@dlt.resource(name="payments", table_name="tbl_payments", primary_key="pmt_id")
def payments():
    yield from ()


@dlt.source(name="seller_payments")
def seller_payments():
    return payments
"""


def test_a_foreign_document_gives_importable_models(project: Project) -> None:
    """Another tool's document: models ruff and mypy accept, that validate rows as the
    document says, and whose contracts are the document's."""
    document = yaml.safe_load(FOREIGN)
    document["schema"][0]["properties"].append(yaml.safe_load(LINES))
    (project.root / "payments.yaml").write_text(yaml.safe_dump(document))
    proc = _ok(project, "models", "infer", "--from-odcs", "payments.yaml", "--out", "models")
    assert "source `seller_payments` is not declared in this project" in proc.stdout
    module = project.root / "models" / "seller_payments" / "tbl_payments.py"
    text = module.read_text()
    assert 'Semantics(timezone="Australia/Sydney")' in text, text
    assert 'Semantics(categories=("paid", "refunded"))' in text, text
    _lint(module)
    check = project.python('''
        import pydantic
        from models.seller_payments.tbl_payments import TblPayments
        row = dict(pmt_id="p1", amount=1.5, paid_at=None, status="paid",
                   lines=[{"sku": "a", "qty": 2, "note": "x", "more": 1}])
        print(TblPayments(**row).model_dump()["lines"])
        for bad in ({"lines": [{"qty": 0}]}, {"pmt_id": "p" * 19}):
            try:
                TblPayments(**{**row, **bad})
            except pydantic.ValidationError as exc:
                print(exc.errors()[0]["loc"])
    ''')
    assert check.stdout.splitlines() == [
        "[{'sku': 'a', 'qty': 2, 'note': 'x', 'more': 1}]", "('lines', 0, 'qty')",
        "('pmt_id',)"]
    # declared as the document's source, the models are bound and declare its contracts
    project.module("pipelines.payments", PAYMENTS)
    project.source("seller_payments", "pipelines.payments:seller_payments")
    _ok(project, "models", "infer", "--from-odcs", "payments.yaml", "--force")
    _ok(project, "contract", "snapshot", "-s", "seller_payments", "--version", "1.0.0")
    (expected,), _ = contracts_from_odcs(document)
    snapshot = project.root / "contracts" / "seller_payments" / "1.0.0" / "payments.json"
    declared, _ = from_document(snapshot.read_text(), str(snapshot))
    assert declared == dataclasses.replace(expected, model="TblPayments")


def test_bad_input_is_one_line_exit_2(project: Project) -> None:
    assert "`missing.yaml`: no such file" in _fails(project, "--from-odcs", "missing.yaml")
    (project.root / "bad.yaml").write_text("name: [unclosed\n")
    assert "`bad.yaml` is not YAML (line 2)" in _fails(project, "--from-odcs", "bad.yaml")
    invalid = yaml.safe_load(FOREIGN)
    invalid["schema"][0]["properties"][1]["logicalType"] = "money"
    (project.root / "invalid.yaml").write_text(yaml.safe_dump(invalid))
    err = _fails(project, "--from-odcs", "invalid.yaml")
    assert "`invalid.yaml` is not a valid ODCS v3 document: at " \
           "`schema[0].properties[1].logicalType`" in err, err
    (project.root / "list.yaml").write_text("- a\n- b\n")
    assert "`list.yaml` is not an ODCS document" in _fails(project, "--from-odcs", "list.yaml")
    (project.root / "ok.yaml").write_text(FOREIGN)
    _ok(project, "models", "infer", "--from-odcs", "ok.yaml")
    module = project.root / "inferred_models" / "seller_payments" / "tbl_payments.py"
    before = module.read_bytes()
    err = _fails(project, "--from-odcs", "ok.yaml")
    assert f"`{module}` exists (1 module(s) would be overwritten): pass `--force`" in err
    assert module.read_bytes() == before
    _ok(project, "models", "infer", "--from-odcs", "ok.yaml", "--force")
    assert "Pass one of" in _fails(project, "--from-odcs", "ok.yaml", "--all")


#: a child table (custom `parentTable`, as an export writes it) whose column declares a unit
CHILD_UNIT = """
apiVersion: v3.1.0
kind: DataContract
id: 1e0c7a3e-55b4-4f0e-9f39-4c7f1f3c1b11
version: 1.0.0
status: active
name: fleet
schema:
  - name: trucks
    properties:
      - {name: id, logicalType: integer, required: true}
  - name: trucks__loads
    customProperties:
      - {property: resource, value: trucks}
      - {property: parentTable, value: trucks}
    properties:
      - name: weight
        logicalType: number
        customProperties: [{property: unit, value: t}]
      - {name: plate, logicalType: string, logicalTypeOptions: {maxLength: 8, pattern: "^[A-Z]"}}
"""


def test_dry_run_and_what_a_model_cannot_declare(project: Project) -> None:
    project.module("pipelines.fleet", "import dlt\n\n\n@dlt.resource\ndef trucks():\n"
                   "    yield from ()\n\n\n@dlt.source(name='fleet')\ndef fleet():\n"
                   "    return trucks\n")
    project.source("fleet", "pipelines.fleet:fleet")
    (project.root / "fleet.yaml").write_text(CHILD_UNIT)
    config = (project.root / ".dlt" / "config.toml").read_text()
    proc = _ok(project, "models", "infer", "--from-odcs", "fleet.yaml", "--dry-run")
    assert proc.stdout == ('[sources.fleet.contract_ops.models]\n'
                           'trucks = "inferred_models.fleet.trucks:Trucks"\n')
    assert "would write `" in proc.stderr
    # the unit on a child table's column has no place in a model: said, not dropped silently
    assert ("note: table `trucks__loads`: column `weight` of a child table declares "
            'Semantics(unit="t"), which a model cannot declare there: left out') in proc.stderr
    assert ("note: table `trucks__loads`: column `plate` of a child table declares "
            'Field(max_length=8, pattern="^[A-Z]"), which a model cannot declare there: '
            "left out") in proc.stderr
    assert not (project.root / "inferred_models").exists()
    assert (project.root / ".dlt" / "config.toml").read_text() == config
    report = json.loads(_ok(project, "models", "infer", "--from-odcs", "fleet.yaml",
                            "--format", "json").stdout)
    assert [(m["resource"], m["table"], m["ref"]) for m in report["models"]] == [
        ("trucks", "trucks", "inferred_models.fleet.trucks:Trucks")]
    text = (project.root / "inferred_models" / "fleet" / "trucks.py").read_text()
    assert "loads: list[TrucksLoads] = []" in text, text
    assert "    plate: str | None = None\n" in text, text
    # the models these notes are about guard the resource: its contract reads
    _ok(project, "contract", "snapshot", "-s", "fleet", "--version", "1.0.0")
