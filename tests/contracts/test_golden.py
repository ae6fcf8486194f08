"""Golden outputs: every format of a few representative reports, byte for byte.

Regenerate after an intended change with `make golden` (`python -m tests.regen_golden`) and
review the diff of tests/contracts/golden/ like code. The test run itself never writes them.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from dlt_contract_ops.contracts.model import Locations, Version
from dlt_contract_ops.contracts.release import ReleaseReport, Waiver, assess, first_release
from dlt_contract_ops.output.contract import FORMATS, render
from tests.contracts.builders import col, release, res
from tests.contracts.test_diff import V1, V2

GOLDEN = Path(__file__).parent / "golden"
TODAY = dt.date(2026, 3, 1)


def atlasmart() -> tuple[ReleaseReport, Locations]:
    return ReleaseReport((assess(V1, V2, today=TODAY),)), {}


def atlasmart_schema_only() -> tuple[ReleaseReport, Locations]:
    return ReleaseReport((assess(V1, V2, schema_only=True, today=TODAY),)), {}


def waivers() -> tuple[ReleaseReport, Locations]:
    old = release("2.3.0", res(col("id"), col("amount", "double", unit="USD"),
                               col("status", "text", categories=("open", "paid")),
                               resource="invoices"))
    new = release("2.3.1", res(col("id", description="invoice number"),
                               col("amount", "double", unit="USD_cents"),
                               col("status", "text", categories=("open",)),
                               resource="invoices"))
    accepted = [
        Waiver("unit.changed", "invoices", "amount", "billing moves to cents (FIN-231)",
               dt.date(2026, 6, 30), "contracts/billing/waivers.toml, waiver #1"),
        Waiver("categories.removed", "invoices", "status", "paid moved to its own table",
               dt.date(2026, 2, 1), "contracts/billing/waivers.toml, waiver #2"),
    ]
    return ReleaseReport((assess(old, new, waivers=accepted, today=TODAY),)), {}


def transitive() -> tuple[ReleaseReport, Locations]:
    v100 = release("1.0.0", res(col("id"), col("email", "text")))
    v110 = release("1.1.0", res(col("id"), col("email", "text", True)))
    current = release("1.2.0", res(col("id"), col("email", "text", True),
                                   col("plan", "text", True, categories=("free", "team"))))
    report = ReleaseReport(
        (assess(v100, current, today=TODAY), assess(v110, current, today=TODAY)),
        ("contracts/erp/waivers.toml, waiver #1: waiver for `unit.changed` on `orders.price` "
         "matched no change; delete it if it is stale",),
        kind="check",
    )
    locations = {("orders", "email"): ("pipelines/erp.py", 14), ("orders", None):
                 ("pipelines/erp.py", 10)}
    return report, locations


def first() -> tuple[ReleaseReport, Locations]:
    return ReleaseReport((first_release("erp", Version(1, 0, 0), "contracts"),), kind="check"), {}


SCENARIOS: dict[str, Callable[[], tuple[ReleaseReport, Locations]]] = {
    "atlasmart": atlasmart,
    "atlasmart_schema_only": atlasmart_schema_only,
    "waivers": waivers,
    "transitive": transitive,
    "first_release": first,
}
_EXT = {"text": "txt", "json": "json", "junit": "xml", "github": "github.txt"}


def rendered(scenario: str, fmt: str) -> str:
    """What golden file `golden/<scenario>.<ext>` must hold."""
    report, locations = SCENARIOS[scenario]()
    return render(report, fmt, locations)


def golden_files() -> dict[Path, str]:
    """Every golden file and what it must hold (`python -m tests.regen_golden` writes them)."""
    return {GOLDEN / f"{scenario}.{_EXT[fmt]}": rendered(scenario, fmt)
            for scenario in sorted(SCENARIOS) for fmt in FORMATS}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_golden(scenario: str, fmt: str) -> None:
    got = rendered(scenario, fmt)
    path = GOLDEN / f"{scenario}.{_EXT[fmt]}"
    assert path.exists(), f"missing golden {path}: run `make golden` and review it"
    assert got == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_junit_counts_agree_with_the_report(scenario: str) -> None:
    report, _ = SCENARIOS[scenario]()
    root = ET.fromstring(render(report, "junit"))
    cases = root.findall("./testsuite/testcase")
    assert int(root.get("tests", "-1")) == len(cases)
    assert int(root.get("failures", "-1")) == len(root.findall("./testsuite/testcase/failure"))
    assert int(root.get("skipped", "-1")) == len(root.findall("./testsuite/testcase/skipped"))
    bump_failed = [c for c in cases if c.get("name") == "version bump" and c.find("failure")
                   is not None]
    assert len(bump_failed) == sum(1 for a in report.assessments if not a.ready)


def test_github_commands_escape_data_and_properties() -> None:
    old = release("1.0.0", res(col("a,b: c", "double", unit="100%")))
    new = release("1.0.1", res(col("a,b: c", "double", unit="1%\nx")))
    out = render(ReleaseReport((assess(old, new, today=TODAY),)), "github")
    first_line = out.splitlines()[0]
    assert first_line.startswith("::error title=unit.changed orders.a%2Cb%3A c (breaking)::")
    assert "100%25 → 1%25%0Ax" in first_line
    assert len(out.splitlines()) == 2  # one change, one verdict: no raw newline leaked
