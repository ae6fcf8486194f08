"""The renderers are pure: they import and run without a database driver, SDK or click."""

from __future__ import annotations

import subprocess
import sys
import textwrap

_PROBE = """
import importlib.abc, sys

BLOCKED = {"duckdb", "psycopg2", "sentry_sdk", "click", "pymysql", "sqlalchemy"}

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked import of {name}")
        return None

sys.meta_path.insert(0, Block())

from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.output import FORMATS, render
from dlt_contract_ops.output.html import to_html

finding = DriftFinding(drift_type="additive", source="s", resource="r", table="t",
                       columns=["c"])
results = [ReconcileResult(source="s", findings=[finding])]
for fmt in FORMATS:
    assert "t" in render(results, fmt), fmt
assert "<code class=\\"col\\">c</code>" in to_html(results)
"""


def test_renderers_need_no_driver_sdk_or_click() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_PROBE)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
