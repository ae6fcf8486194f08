"""The contracts core is pure: it imports no driver, SDK or click, and does no I/O on import;
its reports render (`output/contract*.py`) without them too."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

BLOCKED = ("duckdb", "psycopg2", "sentry_sdk", "click", "pymysql", "sqlalchemy")
PURE = ("rules", "model", "diff", "change", "release", "canonical", "waivers", "semantics",
        "extract", "annotations", "declarations", "units", "timezones", "constraints", "lint",
        "verify", "odcs", "odcs_types", "odcs_read")
RENDERERS = ("contract", "contract_ci", "contract_lint", "contract_wording")

_PROBE = """
import datetime as dt, importlib, importlib.abc, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError(f"blocked import of {{name}}")
        return None

sys.meta_path.insert(0, Block())
for name in {pure!r}:
    importlib.import_module(f"dlt_contract_ops.contracts.{{name}}")
for name in {renderers!r}:
    importlib.import_module(f"dlt_contract_ops.output.{{name}}")

# and the core runs end to end: diff, release check, every renderer
from dlt_contract_ops.contracts import ColumnContract as C, Release, ResourceContract, Version
from dlt_contract_ops.contracts import ReleaseReport, assess
from dlt_contract_ops.output.contract import FORMATS, render
old = Release("s", Version(1, 0, 0), (ResourceContract("s", "r", "r", (C("p", "double", False,
              unit="USD"),)),))
new = Release("s", Version(1, 1, 0), (ResourceContract("s", "r", "r", (C("p", "double", False,
              unit="USD_cents"),)),))
report = ReleaseReport((assess(old, new, today=dt.date(2026, 1, 1)),))
assert report.verdict == "BLOCKED"
for fmt in FORMATS:
    render(report, fmt)
print(sorted(m for m in sys.modules if m.split(".")[0] in {blocked!r}))
"""


def test_contracts_core_imports_and_runs_without_drivers_sdks_or_click() -> None:
    code = textwrap.dedent(_PROBE.format(blocked=BLOCKED, pure=PURE, renderers=RENDERERS))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_the_0_1_0_name_of_the_release_report_still_imports() -> None:
    import dlt_contract_ops.contracts as contracts

    with pytest.warns(DeprecationWarning, match="ReleaseReport"):
        old = contracts.GateReport
    assert old is contracts.ReleaseReport
