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
    assert {"additive", "capacity", "columns", "naming", "timeaxis"} <= set(modules)


def test_public_api_is_pinned() -> None:
    assert dlt_contract_ops.__all__ == [
        "DEFAULT_BASELINE_THRESHOLD",
        "DEFAULT_BASELINE_WINDOW",
        "DEFAULT_RECENT_THRESHOLD",
        "DEFAULT_RECENT_WINDOW",
        "AlertSink",
        "Coverage",
        "DestinationAdapter",
        "Detector",
        "DetectorRun",
        "DriftFinding",
        "Duration",
        "ErrorEvent",
        "GateBusyError",
        "GateRejected",
        "GateReport",
        "ReconcileResult",
        "Semantics",
        "TableSemantics",
        "detect_removal",
        "gated_run",
        "reconcile_all",
        "reconcile_source",
    ]
    for name in dlt_contract_ops.__all__:
        assert getattr(dlt_contract_ops, name) is not None


# -- the import graph ----------------------------------------------------------------------
def _import_graph() -> dict[str, set[str]]:
    """Module -> package modules it imports, at module level or inside a function (a lazy
    import is still a dependency); `if TYPE_CHECKING:` blocks are left out."""
    import ast
    import pkgutil
    from pathlib import Path

    root = Path(dlt_contract_ops.__file__).parent
    modules = {
        m.name for m in pkgutil.walk_packages(dlt_contract_ops.__path__, "dlt_contract_ops.")
    }
    graph: dict[str, set[str]] = {}
    for name in modules:
        rel = name.split(".")[1:]
        path = root.joinpath(*rel)
        file = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        tree = ast.parse(file.read_text(encoding="utf-8"))
        targets: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            for sub in _walk_runtime(node):
                if isinstance(sub, ast.ImportFrom) and sub.module:
                    base = sub.module
                    for alias in sub.names:
                        full = f"{base}.{alias.name}"
                        targets.add(full if full in modules else base)
                elif isinstance(sub, ast.Import):
                    targets.update(a.name for a in sub.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _walk_runtime(node: object) -> list[object]:
    """`ast.walk` minus `if TYPE_CHECKING:` bodies at any depth."""
    import ast

    out: list[object] = []
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.If) and "TYPE_CHECKING" in ast.unparse(current.test):
            todo.extend(current.orelse)
            continue
        out.append(current)
        todo.extend(ast.iter_child_nodes(current))  # type: ignore[arg-type]
    return out


def test_no_import_cycles() -> None:
    graph = _import_graph()
    assert "dlt_contract_ops.engine.reconcile" in graph  # the walk saw the package
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_nothing_in_the_package_imports_its_root() -> None:
    """The root re-exports lazily; a module importing it would pull in the whole API."""
    import ast
    from pathlib import Path

    root = Path(dlt_contract_ops.__file__).parent
    offenders = []
    for file in root.rglob("*.py"):
        if file == root / "__init__.py":
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            from_root = isinstance(node, ast.ImportFrom) and node.module == "dlt_contract_ops"
            root_import = isinstance(node, ast.Import) and any(
                a.name == "dlt_contract_ops" for a in node.names
            )
            if from_root or root_import:
                offenders.append(str(file.relative_to(root)))
    assert offenders == []
