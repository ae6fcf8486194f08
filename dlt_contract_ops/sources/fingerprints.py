"""What a cached source's entry depends on, as fingerprints: the source's module files, the
project's config files, the library versions and the interpreter with its `sys.path`
(`static_key`), and every module the build imported (`module_prints`), so a changed file, an
upgraded or removed package, or another environment makes the entry stale."""

from __future__ import annotations

import csv
import hashlib
import importlib.machinery
import json
import os
import site
import sys
import time
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
#: when this module was imported: before any build of this process. A package installed
#: after it, whose modules an earlier run of a long-lived process imported, may be newer on
#: disk than in memory (see `module_prints`)
_IMPORTED_NS = time.time_ns()


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
        # the environment the build imports from: another venv or interpreter, a changed
        # `PYTHONPATH`, may hold other code or none at all
        "interpreter": [sys.executable, sys.prefix, search_path(project_dir)],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def search_path(project_dir: str) -> list[str]:
    """`sys.path` as the build searches it: the project folder first (`discovery`'s
    `_import_module` puts it there; an earlier run of the process may have already), each
    entry absolute (a relative one is the working directory's)."""
    project = os.path.abspath(project_dir)
    rest = [absolute_path(entry) for entry in sys.path]
    return [project, *(entry for entry in rest if entry != project)]


def _excluded_roots() -> list[str]:
    """Where installed code lives: a virtualenv inside the project is not the project."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's old `site` module may lack them
        pass
    return [os.path.join(os.path.abspath(r), "") for r in roots if r]


def _site_dirs() -> list[str]:
    """Where pip installs packages: the interpreter's and the user's site-packages and any
    `site-packages`/`dist-packages` folder on `sys.path`; the deepest first."""
    dirs = {entry for entry in sys.path
            if os.path.basename(os.path.normpath(entry)) in ("site-packages", "dist-packages")}
    try:
        dirs.update(site.getsitepackages())
        dirs.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's old `site` module may lack them
        pass
    return sorted({os.path.join(absolute_path(d), "") for d in dirs if d}, key=len, reverse=True)


#: the suffixes of a module's file: only those are looked up in a distribution's RECORD
_MODULE_SUFFIXES = tuple(importlib.machinery.all_suffixes())
#: site dir -> (its mtime_ns, {a module file's path relative to it: the RECORD listing it})
_RECORDS: dict[str, tuple[int, dict[str, str]]] = {}


def _records(site_dir: str) -> dict[str, str]:
    """Which distribution's RECORD lists each module file in `site_dir`. Read once a process
    while the folder's time holds: an install, upgrade or removal renames a `.dist-info`
    folder in it, which changes that time."""
    mtime = os.stat(site_dir).st_mtime_ns
    known = _RECORDS.get(site_dir)
    if known is not None and known[0] == mtime:
        return known[1]
    index: dict[str, str] = {}
    with os.scandir(site_dir) as entries:
        for entry in entries:
            if not entry.name.endswith(".dist-info"):
                continue
            record = os.path.join(entry.path, "RECORD")
            try:
                with open(record, encoding="utf-8", newline="") as fh:
                    for row in csv.reader(fh):
                        if row and row[0].endswith(_MODULE_SUFFIXES):
                            index[os.path.normpath(row[0])] = record
            except (OSError, UnicodeDecodeError, csv.Error):
                continue  # no RECORD (an old installer), unreadable: the module's own file
    _RECORDS[site_dir] = (mtime, index)
    return index


def _installed_print(path: str, site_dir: str) -> str:
    """What stands for an installed module's code: the RECORD of the distribution that
    installed it (its name and version are in the folder's name, the hash of every file it
    installed in its content; one file per distribution, where a package has hundreds of
    modules), else, for a module no distribution lists, its own file."""
    return _records(site_dir).get(path[len(site_dir):], path)


def _library_roots() -> list[str]:
    """Where code that is no user's lives even when installed editable: this package, dlt,
    Pydantic (every model's base). Their versions are in `static_key`, so a build need not
    look for their distributions in site-packages (`_records`)."""
    import dlt
    import pydantic

    package = os.path.dirname(os.path.abspath(__file__))  # this package, not importing its root
    return [
        os.path.join(os.path.dirname(os.path.abspath(str(dlt.__file__))), ""),
        os.path.join(os.path.dirname(os.path.abspath(str(pydantic.__file__))), ""),
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
) -> list[tuple[str, Any, str, bool]]:
    """(name, module, the file that stands for its code, whether it is installed) of every
    module loaded from `project_dir` (not its installed packages), of `module_name` itself
    wherever it lives, and of `user_modules` (what the build imported, the models' modules):
    a model in a folder on `PYTHONPATH` outside the project is the user's code as much as the
    project's is, and so is a models package pip installed into site-packages (`pip install
    acme-models`), stood for by its distribution's RECORD (`_installed_print`). Not the
    standard library, dlt, Pydantic or this package, whose versions are in `static_key`."""
    root = os.path.join(os.path.abspath(project_dir), "")
    installed = _excluded_roots()
    excluded = [r for r in installed if not root.startswith(r)]
    sites = _site_dirs()
    libraries = _library_roots()
    out: list[tuple[str, Any, str, bool]] = []
    for mod_name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue
        path = absolute_path(path)
        user = mod_name in user_modules
        if not (user or path.startswith(root) or mod_name == module_name):
            continue  # most of thousands: neither inside nor named
        site_dir = next((d for d in sites if path.startswith(d)), None)
        if mod_name == module_name:  # its own file, even installed: the ref names it
            out.append((mod_name, module, path, site_dir is not None))
        elif site_dir is not None:
            # a package in a venv inside the project counts only when the build imported it
            if user and not any(path.startswith(r) for r in libraries):
                out.append((mod_name, module, _installed_print(path, site_dir), True))
        elif (path.startswith(root) and not any(path.startswith(r) for r in excluded)) or (
            user and not any(path.startswith(r) for r in (*installed, *libraries))
        ):
            out.append((mod_name, module, path, False))
    return sorted(out, key=lambda m: m[2])


def fingerprint(path: str) -> list[Any]:
    """[path, size, mtime_ns, SHA-256] of a file."""
    st = os.stat(path)
    return [path, st.st_size, st.st_mtime_ns, _sha256(path)]


#: module name -> (module, the fingerprint of its file just after the build that imported it)
_AS_IMPORTED: dict[str, tuple[Any, list[Any]]] = {}


def module_prints(
    modules: Sequence[tuple[str, Any, str, bool]], started_ns: int
) -> tuple[list[list[Any]], list[str]]:
    """The fingerprints of the modules' files, and the modules whose code may not be what
    their file holds now: edited (or installed) during the build (`started_ns`), or imported
    before this run (a long-lived process) and either edited since it was fingerprinted as
    imported or, never fingerprinted, a project module or one installed after this process
    began (an upgrade under a running scheduler)."""
    from dlt_contract_ops.sources.project_imports import imported_this_run

    prints: dict[str, list[Any]] = {}  # one RECORD stands for many modules: hashed once
    doubtful: list[str] = []
    for name, module, path, installed in modules:
        fp = prints.get(path)
        if fp is None:
            fp = prints[path] = fingerprint(path)
        if fp[2] >= started_ns - _CLOCK_SLACK_NS:
            doubtful.append(name)
        elif imported_this_run(name, module):
            _AS_IMPORTED[name] = (module, fp)
        else:
            seen = _AS_IMPORTED.get(name)
            if seen is None and installed and fp[2] < _IMPORTED_NS - _CLOCK_SLACK_NS:
                _AS_IMPORTED[name] = seen = (module, fp)  # installed before the process
            if seen is None or seen[0] is not module or seen[1] != fp:
                doubtful.append(name)
    return list(prints.values()), doubtful


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
