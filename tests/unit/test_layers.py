"""Layer properties: the pure core imports no driver, SDK or CLI; the public API is pinned."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import dlt_contract_ops

BLOCKED = ("duckdb", "psycopg2", "sentry_sdk", "click", "pymysql", "sqlalchemy")

_PROBE = """
import importlib, importlib.abc, pkgutil, sys

BLOCKED = {blocked!r}

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked import of {{name}}")
        return None

sys.meta_path.insert(0, Block())

import dlt_contract_ops.core as core
names = sorted(m.name for m in pkgutil.iter_modules(core.__path__))
for name in names:
    importlib.import_module(f"dlt_contract_ops.core.{{name}}")

# and the pure functions run, not only import
from pydantic import BaseModel
from dlt.common.normalizers.naming.snake_case import NamingConvention
from dlt_contract_ops.core.additive import detect_additive
from dlt_contract_ops.core.columns import LiveColumn, LiveTable
from dlt_contract_ops.core.naming import expected_table
from dlt_contract_ops.core.timeaxis import choose_time_axis

class M(BaseModel):
    userId: int

exp = expected_table("r", "OrderItems", M, NamingConvention())
names = ("user_id", "x", "_dlt_load_id")
live = LiveTable("order_items", {{n: LiveColumn(n, "INT") for n in names}})
assert detect_additive(exp, live).columns == ("x",)
assert choose_time_axis(live, None, None).column == "_dlt_load_id"
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not loaded, loaded
print(" ".join(sorted(m.name for m in pkgutil.iter_modules(core.__path__))))
"""


def test_core_imports_without_drivers_sdks_or_cli() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_PROBE.format(blocked=BLOCKED))],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    modules = proc.stdout.split()
    # the probe really imported the core modules
    assert {"additive", "columns", "naming", "timeaxis"} <= set(modules)


def test_public_api_is_pinned() -> None:
    assert dlt_contract_ops.__all__ == [
        "DEFAULT_BASELINE_THRESHOLD",
        "DEFAULT_BASELINE_WINDOW",
        "DEFAULT_RECENT_THRESHOLD",
        "DEFAULT_RECENT_WINDOW",
        "AlertSink",
        "Coverage",
        "DestinationAdapter",
        "DriftFinding",
        "ErrorEvent",
        "ReconcileResult",
        "Semantics",
        "TableSemantics",
        "detect_removal",
        "reconcile_all",
        "reconcile_source",
    ]
    for name in dlt_contract_ops.__all__:
        assert getattr(dlt_contract_ops, name) is not None
