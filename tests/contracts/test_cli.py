"""End to end through real projects on disk: `dlt-contract-ops contract ...` in a subprocess,
models discovered from a real dlt source, data landed by a real pipeline in DuckDB."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.projects import Project

SOURCE = '''
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Optional

import dlt
from pydantic import BaseModel, Field

from dlt_contract_ops import contracts as c


@c.TableSemantics(keys=("orderId", "lineNo"), grain="one row per order line")
class OrderLine(BaseModel):
    orderId: str
    lineNo: int
    unitPrice: Annotated[float, c.Semantics(unit="{unit}")]
    updatedAt: Annotated[datetime, c.Semantics(timezone="UTC")]
    status: Literal["paid", "pending"]
    shipTo: Annotated[Optional[str], c.Semantics(description="ISO country")] = Field(
        default=None, alias="Ship To (ISO)"
    )
{extra}

@dlt.resource(name="order-lines", columns=OrderLine, primary_key="orderId")
def order_lines():
    yield {{"orderId": "A-1", "lineNo": 1, "unitPrice": 6.9,
           "updatedAt": datetime(2026, 1, 5, 12, 0), "status": "paid", "Ship To (ISO)": "DE"}}


@dlt.source(name="shop")
def shop():
    return order_lines
'''


def write_source(project: Project, *, unit: str = "USD", extra: str = "") -> None:
    project.module("pipelines.shop", SOURCE.format(unit=unit, extra=extra))
    # a rewrite within the same second must not run a stale bytecode cache
    shutil.rmtree(project.root / "pipelines" / "__pycache__", ignore_errors=True)


@pytest.fixture
def shop(project: Project) -> Project:
    write_source(project)
    project.source("shop", "pipelines.shop:shop", pipeline_name="shop_pipe",
                   dataset_name="shop_data")
    return project


def run(project: Project, *args: str) -> tuple[int, str, str]:
    proc = project.cli("contract", *args)
    return proc.returncode, proc.stdout, proc.stderr


def snapshot_files(project: Project, version: str) -> dict[str, bytes]:
    folder = project.root / "contracts" / "shop" / version
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_dollars_to_cents_blocks_the_release(shop: Project) -> None:
    code, out, err = run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")
    assert code == 0, err
    assert "written" in out
    (doc_path,) = (shop.root / "contracts" / "shop" / "1.0.0").iterdir()
    doc = json.loads(doc_path.read_text())
    assert doc["resource"] == "order-lines"
    assert doc["keys"] == ["line_no", "order_id"]
    assert {c["name"]: c.get("unit") for c in doc["columns"]}["unit_price"] == "USD"

    code, out, _ = run(shop, "check", "-s", "shop")
    assert (code, out.splitlines()[-1]) == (0, "Verdict: READY")

    write_source(shop, unit="USD_cents")
    code, out, err = run(shop, "check", "-s", "shop")
    assert code == 1, out + err
    assert "✗ breaking  unit.changed  order-lines.unit_price  USD → USD_cents" in out
    assert "Verdict: BLOCKED" in out
    # a names-and-types check sees nothing at all
    code, out, _ = run(shop, "check", "-s", "shop", "--schema-only")
    assert code == 0
    assert "✓ no contract changes" in out
    # declaring a minor release does not help; a major one does
    assert run(shop, "check", "-s", "shop", "--version", "1.1.0")[0] == 1
    assert run(shop, "check", "-s", "shop", "--version", "2.0.0")[0] == 0


def test_snapshot_twice_is_byte_identical_and_a_release_is_immutable(shop: Project) -> None:
    assert run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")[0] == 0
    first = snapshot_files(shop, "1.0.0")
    code, out, _ = run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")
    assert code == 0
    assert "unchanged" in out
    assert snapshot_files(shop, "1.0.0") == first

    write_source(shop, unit="USD_cents")
    code, _, err = run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")
    assert code == 2
    assert "Release 1.0.0 of `shop` is already snapshotted" in err
    assert snapshot_files(shop, "1.0.0") == first


def test_snapshot_names_columns_as_dlt_lands_them(shop: Project) -> None:
    assert run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")[0] == 0
    (doc_path,) = (shop.root / "contracts" / "shop" / "1.0.0").iterdir()
    snapshot_columns = {c["name"] for c in json.loads(doc_path.read_text())["columns"]}
    shop.python(
        """
        import dlt
        from pipelines.shop import shop
        p = dlt.pipeline("shop_pipe", destination=dlt.destinations.duckdb("shop.duckdb"),
                         dataset_name="shop_data")
        p.run(shop())
        """
    )
    landed = shop.python(
        """
        import duckdb, json
        con = duckdb.connect("shop.duckdb")
        rows = con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'shop_data' and table_name = 'order_lines'"
        ).fetchall()
        print(json.dumps([r[0] for r in rows]))
        """
    )
    live = {c for c in json.loads(landed.stdout) if not c.startswith("_dlt_")}
    assert snapshot_columns == live
    # dlt's snake_case turns the alias "Ship To (ISO)" into ship_to_isox; so does the snapshot
    assert live == {
        "order_id", "line_no", "unit_price", "updated_at", "status", "ship_to_isox",
    }


def test_transitive_check_names_the_version_a_change_breaks(shop: Project) -> None:
    # 1.0.0 promised a UTC time zone; 1.1.0 was snapshotted without it (no release check ran)
    assert run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")[0] == 0
    shop.module("pipelines.shop", (shop.root / "pipelines" / "shop.py").read_text().replace(
        'c.Semantics(timezone="UTC")', "c.Semantics()"))
    shutil.rmtree(shop.root / "pipelines" / "__pycache__", ignore_errors=True)
    assert run(shop, "snapshot", "-s", "shop", "--version", "1.1.0")[0] == 0

    code, out, _ = run(shop, "check", "-s", "shop", "--version", "1.1.1")
    assert code == 0, out  # against the latest release only, nothing changed
    code, out, _ = run(shop, "check", "-s", "shop", "--version", "1.1.1", "--transitive",
                       "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert report["blocked_versions"] == ["1.0.0"]
    assert [(a["old_version"], a["verdict"]) for a in report["assessments"]] == [
        ("1.0.0", "BLOCKED"), ("1.1.0", "READY"),
    ]
    assert [c["rule"] for c in report["assessments"][0]["changes"]] == ["timezone.dropped"]


def _waiver(expires: dt.date) -> str:
    return (
        "[[waivers]]\n"
        'rule = "unit.changed"\nresource = "order-lines"\ncolumn = "unit_price"\n'
        f'reason = "cents migration agreed (FIN-231)"\nexpires = {expires.isoformat()}\n'
    )


def test_waiver_lets_a_break_through_until_it_expires(shop: Project) -> None:
    assert run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")[0] == 0
    write_source(shop, unit="USD_cents")
    waivers = shop.root / "contracts" / "shop" / "waivers.toml"

    waivers.write_text(_waiver(dt.date.today() + dt.timedelta(days=7)))
    code, out, _ = run(shop, "check", "-s", "shop")
    assert code == 0, out
    assert "~ breaking  unit.changed" in out
    assert "waived until" in out

    waivers.write_text(_waiver(dt.date.today() - dt.timedelta(days=1)))
    code, out, _ = run(shop, "check", "-s", "shop")
    assert code == 1
    assert "its waiver expired on" in out
    assert "it blocks again" in out


def test_ci_formats_through_the_cli(shop: Project) -> None:
    assert run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")[0] == 0
    write_source(shop, unit="USD_cents", extra="    coupon: Optional[str] = None\n")

    code, out, _ = run(shop, "check", "-s", "shop", "--version", "1.1.0", "--format", "github")
    assert code == 1
    error = next(line for line in out.splitlines() if "unit.changed" in line)
    source_lines = (shop.root / "pipelines" / "shop.py").read_text().splitlines()
    line_no = next(i for i, t in enumerate(source_lines, 1) if t.strip().startswith("unitPrice:"))
    assert error.startswith(f"::error file=pipelines/shop.py,line={line_no},title=unit.changed")

    code, out, _ = run(shop, "check", "-s", "shop", "--version", "1.1.0", "--format", "junit")
    assert code == 1
    root = ET.fromstring(out)
    failed = {c.get("name") for c in root.iter("testcase") if c.find("failure") is not None}
    assert failed == {"unit.changed unit_price", "version bump"}


def test_diff_of_two_snapshot_folders(shop: Project) -> None:
    assert run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")[0] == 0
    write_source(shop, unit="USD_cents")
    assert run(shop, "snapshot", "-s", "shop", "--version", "1.0.1")[0] == 0
    old, new = "contracts/shop/1.0.0", "contracts/shop/1.0.1"
    code, out, _ = run(shop, "diff", old, new, "--format", "json")
    assert code == 1
    assert json.loads(out)["assessments"][0]["required_bump"] == "major"
    assert run(shop, "diff", old, new, "--schema-only")[0] == 0
    assert run(shop, "diff", old, old)[0] == 0


USAGE_ERRORS: list[tuple[str, list[str], str]] = [
    ("unknown source", ["check", "-s", "nope"], "Unknown source `nope`"),
    ("bad version", ["snapshot", "-s", "shop", "--version", "1.0"],
     "--version: `1.0` is not a release version"),
    ("missing snapshot folder", ["check", "-s", "shop", "--against", "missing"],
     "`missing` is not a folder of contract snapshots"),
    ("diff of missing paths", ["diff", "a", "b"], "`a` does not exist"),
    ("bad waiver file", ["check", "-s", "shop", "--waivers", "w.toml"],
     "w.toml, waiver #1: `expires` is missing"),
    ("edited release", ["check", "-s", "shop"], "`hash` does not match the content"),
]


@pytest.mark.parametrize(("args", "message"), [u[1:] for u in USAGE_ERRORS],
                         ids=[u[0] for u in USAGE_ERRORS])
def test_usage_and_config_errors_exit_2_and_say_where(
    shop: Project, args: list[str], message: str
) -> None:
    assert run(shop, "snapshot", "-s", "shop", "--version", "1.0.0")[0] == 0
    (shop.root / "w.toml").write_text(
        '[[waivers]]\nrule = "unit.changed"\nresource = "r"\nreason = "x"\n'
    )
    (doc,) = (shop.root / "contracts" / "shop" / "1.0.0").iterdir()
    if "edited" in message or "hash" in message:
        doc.write_text(doc.read_text().replace('"unit":"USD"', '"unit":"EUR"'))
    code, out, err = run(shop, *args)
    assert code == 2, out + err
    assert message in err


def test_first_check_without_snapshots_passes_with_a_note(shop: Project) -> None:
    (shop.root / "contracts").mkdir()
    code, out, _ = run(shop, "check", "-s", "shop", "--version", "1.0.0")
    assert code == 0
    assert "no released snapshot of `shop`" in out
    assert "Verdict: READY (first release)" in out


def test_contract_commands_are_listed_and_help_is_cheap() -> None:
    probe = (
        "import sys; from click.testing import CliRunner; "
        "from dlt_contract_ops.cli import main; "
        "r = CliRunner().invoke(main, ['contract', '--help']); print(r.output); "
        "print('LOADED', sorted(m for m in sys.modules "
        "if m.startswith('dlt_contract_ops.contracts')))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    for command in ("snapshot", "diff", "check"):
        assert command in proc.stdout
    # --help imports the click layer only (commands/), not the contracts core, dlt or discovery
    loaded = proc.stdout.split("LOADED", 1)[1].strip()
    assert loaded == "[]"


def test_public_names_resolve() -> None:
    import dlt_contract_ops.contracts as contracts

    assert contracts.__all__ == sorted(contracts._EXPORTS)
    for name in contracts.__all__:
        assert getattr(contracts, name) is not None
    with pytest.raises(AttributeError):
        _ = contracts.Nope  # type: ignore[attr-defined]
