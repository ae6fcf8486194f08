"""`models infer --from-odcs FILE`: an ODCS document -> Pydantic models that guard the loads.

Round trip through real projects and the CLI: a source with declared semantics is exported,
the document imported into a project whose resources have no models, and the contracts that
project then declares (snapshot, diff, export) are the ones exported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.contracts.test_odcs import SHOP
from tests.contracts.test_odcs_mapping import FOREIGN
from tests.projects import Project

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
                 ["mypy", "--strict", "--no-incremental", "--follow-imports=silent"]):
        proc = subprocess.run([sys.executable, "-m", *tool, *map(str, paths)],
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_export_then_import_declares_the_same_contracts(tmp_path: Path) -> None:
    exporter = Project(tmp_path / "a")
    exporter.module("pipelines.shop", SHOP)
    exporter.source("shop", "pipelines.shop:shop")
    _ok(exporter, "contract", "export", "--format", "odcs", "-s", "shop", "--out", "shop.yaml")
    _ok(exporter, "contract", "snapshot", "-s", "shop", "--version", "1.0.0")

    importer = Project(tmp_path / "b")
    importer.module("pipelines.shop", SHOP_UNMODELLED)
    importer.source("shop", "pipelines.shop:shop")
    document = exporter.root / "shop.yaml"
    proc = _ok(importer, "models", "infer", "--from-odcs", str(document))
    assert "wrote `" in proc.stdout, proc.stdout
    written = importer.root / "inferred_models" / "shop"
    assert sorted(p.name for p in written.glob("*.py")) == [
        "__init__.py", "customers.py", "order_lines.py"]
    config = (importer.root / ".dlt" / "config.toml").read_text()
    assert 'order-lines = "inferred_models.shop.order_lines:OrderLine"' in config, config

    # the snapshot of the importing project is the exporter's, byte for byte
    _ok(importer, "contract", "snapshot", "-s", "shop", "--version", "1.0.0")
    old, new = (p.root / "contracts" / "shop" / "1.0.0" for p in (exporter, importer))
    assert sorted(f.name for f in new.iterdir()) == sorted(f.name for f in old.iterdir())
    for f in old.iterdir():
        assert (new / f.name).read_text() == f.read_text(), f.name
    diff = json.loads(_ok(importer, "contract", "diff", str(old), str(new), "--format",
                          "json").stdout)
    assert [a["changes"] for a in diff["assessments"]] == [[]], diff
    # ...and so is its export, child tables included
    again = _ok(importer, "contract", "export", "--format", "odcs", "-s", "shop").stdout
    assert yaml.safe_load(again) == yaml.safe_load(document.read_text())
    _lint(*written.glob("*.py"))


def test_a_foreign_document_gives_importable_models(project: Project) -> None:
    (project.root / "payments.yaml").write_text(FOREIGN)
    proc = _ok(project, "models", "infer", "--from-odcs", "payments.yaml", "--out", "models")
    assert "not declared in this project" in proc.stdout + proc.stderr
    module = project.root / "models" / "seller_payments" / "tbl_payments.py"
    text = module.read_text()
    assert 'Semantics(timezone="Australia/Sydney")' in text, text
    assert 'Semantics(categories=("paid", "refunded"))' in text, text
    _lint(module)
    check = project.python('''
        from decimal import Decimal
        from models.seller_payments.tbl_payments import TblPayments
        row = TblPayments(pmt_id="p1", amount=1.5, paid_at=None, status="paid")
        print(row.pmt_id, row.amount)
    ''')
    assert check.stdout.split() == ["p1", "1.5"]


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
    (project.root / "ok.yaml").write_text(FOREIGN)
    _ok(project, "models", "infer", "--from-odcs", "ok.yaml")
    module = project.root / "inferred_models" / "seller_payments" / "tbl_payments.py"
    before = module.read_bytes()
    err = _fails(project, "--from-odcs", "ok.yaml")
    assert f"`{module}` exists (1 module(s) would be overwritten): pass `--force`" in err
    assert module.read_bytes() == before
    _ok(project, "models", "infer", "--from-odcs", "ok.yaml", "--force")
    assert "Pass one of" in _fails(project, "--from-odcs", "ok.yaml", "--all")
