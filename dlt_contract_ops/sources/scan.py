"""Which of a project's Python files `init` imports, decided by reading their code first, and
the guard it imports them under.

Importing a module runs its top level. `init` therefore imports only the files whose code
defines a dlt source or resource (`defines_sources`), leaves out those that visibly run a
pipeline at module level (`runs_on_import`), and imports the rest under `runs_refused`: a
run the reading could not see (a `main()` called at module level) is refused, not made.
"""

from __future__ import annotations

import ast
import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dlt_contract_ops.dlt_private as dlt_private
from dlt_contract_ops.errors import RunsOnImportError

#: folders `init` never looks into: environments, build output, caches, tests
SKIPPED_DIRS = frozenset({
    "__pycache__", "venv", "env", "site-packages", "node_modules", "build", "dist", "tests",
    "test",
})
#: calls that run a pipeline: a module making one at import time is not imported by `init`
RUNNING_CALLS = frozenset({"run", "extract", "normalize"})
#: the `Pipeline` methods `runs_refused` refuses: the steps, and what else moves data or
#: local state (`run` syncs the destination and loads pending packages before it extracts)
REFUSED_STEPS = ("run", "extract", "normalize", "load", "sync_destination", "drop")


@dataclass(frozen=True)
class ProjectModule:
    """A project file `init` imports: its module name and its path shown in notes."""

    name: str
    shown: str


def _is_main_guard(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def runs_on_import(code: str) -> str | None:
    """The call that runs a pipeline when `code` is imported (outside functions, classes
    and `if __name__ == "__main__":`), e.g. `pipeline.run`; None when there is none.

    >>> runs_on_import("import dlt\\ndlt.pipeline('p').run([1])"), runs_on_import("x = 1")
    ('run', None)
    """
    tree = ast.parse(code)
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or (
            _is_main_guard(stmt)
        ):
            continue
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in RUNNING_CALLS
            ):
                return node.func.attr
    return None


def defines_sources(code: str) -> bool:
    """Whether `code` defines a dlt source or resource: a function decorated with dlt's
    `source`, `resource` or `transformer`, or a call of one (`dlt.resource(rows, ...)`),
    under any name dlt's are imported as. Read, not run. SyntaxError for code that is not
    Python; ValueError for a decorator dlt's reader cannot read.

    >>> defines_sources("import dlt\\n@dlt.source\\ndef s():\\n    return []")
    True
    >>> defines_sources("import dlt\\ndlt.pipeline('p').run([1])")
    False
    """
    return dlt_private.defines_sources(ast.parse(code), code)


def project_modules(project_dir: str) -> tuple[list[ProjectModule], list[str]]:
    """(modules, notes): the project's Python files that define a dlt source or resource;
    one that would run a pipeline when imported is left out with a note. Files that define
    none (a helper script, a pipeline script that imports its source) are not imported."""
    modules: list[ProjectModule] = []
    notes: list[str] = []
    for folder, dirs, files in os.walk(project_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        rel = Path(folder).relative_to(project_dir)
        for file in sorted(f for f in files if f.endswith(".py")):
            parts = [*rel.parts, file[:-3]]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts or not all(p.isidentifier() for p in parts):
                continue
            path = Path(folder, file)
            code = path.read_text(encoding="utf-8", errors="replace")
            if "dlt" not in code:
                continue
            shown = path.relative_to(project_dir).as_posix()
            try:
                if not defines_sources(code):
                    continue
                call = runs_on_import(code)
            except SyntaxError as exc:
                notes.append(f"`{shown}`: not valid Python ({exc.msg}, line {exc.lineno}): skipped")
                continue
            except ValueError as exc:
                notes.append(f"`{shown}`: cannot read its decorators ({exc.args[-1]}): not "
                             "imported; declare its sources by hand")
                continue
            if call:
                notes.append(
                    f"`{shown}` calls `.{call}(...)` when imported: skipped (move "
                    'that under `if __name__ == "__main__":` to have it scanned)'
                )
                continue
            modules.append(ProjectModule(".".join(parts), shown))
    return modules, notes


@contextlib.contextmanager
def runs_refused() -> Iterator[None]:
    """While it is open, a pipeline step or a resource's extraction raises
    RunsOnImportError instead of running (in every thread: the methods are patched), and
    dlt's data dir is a throwaway folder: a pipeline made at import (`dlt.pipeline(...)` at
    module level, which writes its state, and with `dev_mode` wipes it) leaves the real
    pipelines' local state alone.

    dlt's own guard for importing a script (`dlt.reflection.script_inspector.
    no_pipeline_execution`) refuses making a `DltSource`, which a module may do to be a
    `ref`, and lets `Pipeline.run` sync the destination and load pending packages before it
    stops the extraction: this one refuses the pipeline's steps themselves.
    """
    import tempfile
    from unittest.mock import patch

    from dlt.common.known_env import DLT_DATA_DIR
    from dlt.pipeline.pipeline import Pipeline

    def refused(step: str) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            name = getattr(self, "pipeline_name", None)
            raise RunsOnImportError(f"pipeline `{name}`: `{step}`" if name else step)

        return call

    with contextlib.ExitStack() as stack:
        for step in REFUSED_STEPS:
            stack.enter_context(patch.object(Pipeline, step, refused(step)))
        stack.enter_context(
            patch.object(dlt_private.pipe_iterator(), "__init__", refused("extracting a resource"))
        )
        throwaway = stack.enter_context(tempfile.TemporaryDirectory(prefix="contract-ops-init-"))
        # only this key is put back: what else the module sets in the environment at import
        # (a source's settings) stays for the build
        previous = os.environ.get(DLT_DATA_DIR)
        os.environ[DLT_DATA_DIR] = throwaway
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop(DLT_DATA_DIR, None)
            else:
                os.environ[DLT_DATA_DIR] = previous
