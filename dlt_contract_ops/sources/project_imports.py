"""Importing the project's own modules: afresh once per run, the project first on the path.

A long-lived process (a scheduler, an orchestrator) runs many sweeps; each sees the models as
their files say now (`begin_run`), and one project's package never stands in for another's.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from pathlib import Path
from typing import Any

#: (project dir, top-level package) imported afresh in this run (see `begin_run`)
_FRESH: set[tuple[str, str]] = set()


#: the modules loaded when this run began (see `imported_this_run`)
_RUN_MODULES: dict[str, Any] = {}


def begin_run() -> None:
    """A new run: the project's own modules will be imported afresh once more, so a
    long-lived process (a scheduler, an orchestrator) sees a model edited since."""
    _FRESH.clear()
    _RUN_MODULES.clear()
    _RUN_MODULES.update(sys.modules)


def imported_this_run(name: str, module: Any) -> bool:
    """Whether module `name` was (re)imported since the run began: else its code may be
    older than its file (a project module outside the ref's package, loaded by an earlier
    run of a long-lived process)."""
    return _RUN_MODULES.get(name) is not module


def _project_has(top: str, project_dir: str) -> bool:
    """Whether the project itself holds the top-level module or package `top`."""
    return os.path.isdir(os.path.join(project_dir, top)) or os.path.isfile(
        os.path.join(project_dir, f"{top}.py")
    )


def _import_module(module_name: str, project_dir: str) -> Any:
    """Import `module_name` with `project_dir` first on the path.

    When the project holds the module's top-level package, that package is imported afresh:
    one imported earlier from elsewhere (another project in the same process) must not stand
    in for this one's, and one imported by an earlier run of this process (a scheduler, an
    orchestrator) may describe a model that has changed since. A ref into an installed
    package (`dlt.sources...`) evicts nothing: re-importing a library the process already
    uses would split its classes in two.
    """
    top = module_name.split(".")[0]
    if _project_has(top, project_dir) and (project_dir, top) not in _FRESH:
        for loaded in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
            del sys.modules[loaded]
        _FRESH.add((project_dir, top))  # once per run: two sources of one module share it
    # first on the path even when an earlier run put it further back: another project's
    # package of the same name must not shadow this one's
    while project_dir in sys.path:
        sys.path.remove(project_dir)
    sys.path.insert(0, project_dir)
    importlib.invalidate_caches()
    return importlib.import_module(module_name)


def write_module(path: os.PathLike[str] | str, text: str) -> None:
    """Write a project's Python file (a patched or generated model) and forget its compiled
    copy: Python trusts a `__pycache__` file whose source has the same size and the same
    modification second, so a same-size edit (`int` -> `str`) within the second of the last
    write would import the old code in the next sweep. Written atomically."""
    from importlib.util import cache_from_source

    from dlt_contract_ops.statefile import write_text

    Path(path).touch()  # a new file gets the mode the process's umask gives, as any editor's
    mode = os.stat(path).st_mode & 0o7777  # an existing one keeps its permissions
    write_text(Path(path), text)
    os.chmod(path, mode)
    with contextlib.suppress(OSError, NotImplementedError, ValueError):
        os.remove(cache_from_source(os.fspath(path)))
