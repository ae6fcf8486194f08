"""What a cached source's entry depends on, as fingerprints: the source's module files, the
project's config files and the library versions (`static_key`), and every module the build
imported (`module_prints`), so a changed file makes the entry stale."""

from __future__ import annotations

import hashlib
import json
import os
import site
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from dlt_contract_ops.sources.discovery import BuiltSource

#: bumped whenever what an entry holds, or how it is read, changes
FORMAT = 4  # 3: model-declared max_length, max_digits, decimal_places; 4: nested tables
_READ_CHUNK = 1 << 20
#: file times come from a coarser clock than `time.time_ns()`: a file whose time is this close
#: to the build's start may have been written during it
_CLOCK_SLACK_NS = 20_000_000


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_READ_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _config_files() -> list[str]:
    """Every TOML file dlt's providers read in the current project context."""
    import dlt

    base = Path(os.path.abspath(dlt.current.run_context().run_dir))
    out: list[str] = []
    for provider in dlt.config.config_providers:
        for location in getattr(provider, "locations", None) or []:
            path = Path(location)
            path = path if path.is_absolute() else base / path
            if path.is_file() and str(path) not in out:
                out.append(str(path))
    return out


#: first sections of the environment variables that may shape a built source: any source's
#: configuration (a source's dlt section is its module's name, not the declared name), the
#: schema's naming and normalizers, and the destination's settings
SHAPING_SECTIONS = frozenset({"SOURCES", "SCHEMA", "NORMALIZE", "DESTINATION"})


def shaping_env(
    environ: Mapping[str, str], pipeline_name: str | None = None
) -> list[tuple[str, str]]:
    """The environment variables a built source may depend on, sorted: dlt's configuration
    in `SHAPING_SECTIONS` or in the pipeline's own section (`<PIPELINE>__...`), and dlt's
    `DLT_*` paths. A variable of any other section (a cron's `RUN_ID`, `JOB__STARTED_AT`)
    does not touch the entry.

    >>> shaping_env({"SOURCES__SHOP__API_KEY": "k", "RUN__ID": "7", "DLT_DATA_DIR": "/d",
    ...              "SHOP_PIPE__DESTINATION__X": "1", "TIMESTAMP": "t"}, "shop_pipe")
    [('DLT_DATA_DIR', '/d'), ('SHOP_PIPE__DESTINATION__X', '1'), ('SOURCES__SHOP__API_KEY', 'k')]
    """
    sections = SHAPING_SECTIONS | ({pipeline_name.upper()} if pipeline_name else set())
    out = []
    for key, value in environ.items():
        head, nested, _ = key.strip("_").partition("__")
        if key.upper().startswith("DLT_") or (nested and head.upper() in sections):
            out.append((key, value))
    return sorted(out)


def static_key(name: str, ref: str, project_dir: str, pipeline_name: str | None = None) -> str:
    """The digest of everything an entry depends on besides the module files."""
    import dlt
    import pydantic

    from dlt_contract_ops.version import __version__

    parts: dict[str, Any] = {
        "format": FORMAT,
        "package": __version__,
        "dlt": dlt.__version__,
        "pydantic": pydantic.VERSION,
        "python": sys.version,
        "source": name,
        "ref": ref,
        "project": os.path.abspath(project_dir),
        "config": [(path, _sha256(path)) for path in _config_files()],
        "env": shaping_env(os.environ, pipeline_name),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _excluded_roots() -> list[str]:
    """Where installed code lives: a virtualenv inside the project is not the project."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's old `site` module may lack them
        pass
    return [os.path.join(os.path.abspath(r), "") for r in roots if r]


def _library_roots() -> list[str]:
    """Where code that is no user's lives even when installed editable: this package, dlt."""
    import dlt

    package = os.path.dirname(os.path.abspath(__file__))  # this package, not importing its root
    return [
        os.path.join(os.path.dirname(os.path.abspath(str(dlt.__file__))), ""),
        os.path.join(package, ""),
    ]


def model_modules(built: BuiltSource) -> set[str]:
    """The modules that define the source's models and their bases (a model imported from a
    shared package on `PYTHONPATH`, wherever it lives)."""
    names: set[str] = set()
    for model in built.models.values():
        names.update(klass.__module__ for klass in getattr(model, "__mro__", ()))
    return names


#: `os.path.abspath` of the absolute module paths seen (a relative one depends on the cwd)
_ABSOLUTE: dict[str, str] = {}


def absolute_path(path: str) -> str:
    """`os.path.abspath(path)`, remembered for an absolute `path` (a module's file: thousands
    of them looked at per build)."""
    absolute = _ABSOLUTE.get(path)
    if absolute is None:
        absolute = os.path.abspath(path)
        if os.path.isabs(path):
            _ABSOLUTE[path] = absolute
    return absolute


def loaded_modules(
    project_dir: str, module_name: str, user_modules: Collection[str] = ()
) -> list[tuple[str, Any, str]]:
    """(name, module, file) of every module loaded from `project_dir` (not its installed
    packages), of `module_name` itself wherever it lives, and of `user_modules` (what the
    build imported, the models' modules) unless installed: a model in a folder on
    `PYTHONPATH` outside the project is the user's code as much as the project's is."""
    root = os.path.join(os.path.abspath(project_dir), "")
    installed = _excluded_roots()
    excluded = [r for r in installed if not root.startswith(r)]
    libraries = [*installed, *_library_roots()]
    out: list[tuple[str, Any, str]] = []
    for mod_name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue
        path = absolute_path(path)
        if not (path.startswith(root) or mod_name in user_modules or mod_name == module_name):
            continue  # most of thousands: neither inside nor named
        in_site = "site-packages" in path.split(os.sep)
        inside = (
            path.startswith(root) and not any(path.startswith(r) for r in excluded) and not in_site
        )
        user = (
            mod_name in user_modules
            and not in_site
            and not any(path.startswith(r) for r in libraries)
        )
        if inside or user or mod_name == module_name:
            out.append((mod_name, module, path))
    return sorted(out, key=lambda m: m[2])


def fingerprint(path: str) -> list[Any]:
    """[path, size, mtime_ns, SHA-256] of a file."""
    st = os.stat(path)
    return [path, st.st_size, st.st_mtime_ns, _sha256(path)]


#: module name -> (module, the fingerprint of its file just after the build that imported it)
_AS_IMPORTED: dict[str, tuple[Any, list[Any]]] = {}


def module_prints(
    modules: Sequence[tuple[str, Any, str]], started_ns: int
) -> tuple[list[list[Any]], list[str]]:
    """The fingerprints of the modules' files, and the modules whose code may not be what
    their file holds now: edited during the build (`started_ns`), or imported before this run
    (a long-lived process) and either never fingerprinted as imported or edited since."""
    from dlt_contract_ops.sources.project_imports import imported_this_run

    prints: list[list[Any]] = []
    doubtful: list[str] = []
    for name, module, path in modules:
        fp = fingerprint(path)
        prints.append(fp)
        if fp[2] >= started_ns - _CLOCK_SLACK_NS:
            doubtful.append(name)
        elif imported_this_run(name, module):
            _AS_IMPORTED[name] = (module, fp)
        else:
            seen = _AS_IMPORTED.get(name)
            if seen is None or seen[0] is not module or seen[1] != fp:
                doubtful.append(name)
    unique = {fp[0]: fp for fp in prints}
    return list(unique.values()), doubtful


def _files_hold(recorded: Sequence[Sequence[Any]]) -> bool:
    """Whether every recorded file is still there, the same size, time and content."""
    for path, size, mtime_ns, digest in recorded:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if st.st_size != size or st.st_mtime_ns != mtime_ns or _sha256(path) != digest:
            return False
    return True
