"""What a source's models expect, kept on disk between runs, so a cron run need not build it.

Building a source costs a fresh process the import of the user's module and one call of the
source function, where dlt builds a Pydantic validator per model: about 7 ms per resource.
A reconcile needs only the expected columns of most sources, and those change only when the
code does. This cache keeps them (tables, columns, naming, notes) in dlt's data dir:

    <data dir>/contract_ops/source_cache/<project>-<hash of project dir and source>.json

An entry is served only while its fingerprint holds:

- every Python file the build loaded from the project (the source's module and the project
  modules it imports), every module the build imported from elsewhere (a models package on
  `PYTHONPATH` outside the project; not the standard library, dlt, Pydantic or this
  package), the modules that define the models and their bases, and the ref's own module
  file wherever it is: path, size, `mtime_ns` and a SHA-256 of the content. A module pip
  installed into a site-packages folder (`pip install acme-models`) is stood for by its
  distribution's `RECORD` (name and version in its folder's name, every installed file's
  hash in it): an upgrade or an uninstall makes the entry stale; a module no distribution
  lists by its own file;
- this package's, dlt's, Pydantic's and Python's versions, the interpreter
  (`sys.executable`, `sys.prefix`) and `sys.path` (so `PYTHONPATH` and the virtualenv), the
  source name, its `ref` and the project folder;
- the content of every TOML file dlt reads in the project context (a source function may
  read its configuration) and the environment variables that may shape the source
  (`fingerprints.shaping_env`: dlt's `SOURCES__`, `SCHEMA__`, `NORMALIZE__`, `DESTINATION__`
  and `<PIPELINE>__` sections, and the `DLT_*` paths; not a cron's `RUN_ID` or
  `JOB__STARTED_AT`).

Anything else a source function reads (a data file, the network) is not seen, nor a file
edited by hand inside site-packages (its distribution's `RECORD` is unchanged): turn the cache
off with `source_cache = false` in `[contract_ops]` for such a source. A corrupt or
unreadable entry is ignored (debug log) and rebuilt; a cache that cannot be written never
fails a run.

A hit is a `BuiltSource` whose `models` and `obj` build the real source on first access
(`discovery.Deferred`): the detectors that need a model (contract, long names shortened for
PostgreSQL) get exactly what a build gives. The declared code sets the load profiles count
(`BuiltSource.code_sets`) are kept too, computed from the models when the entry is written.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable
from dlt_contract_ops.settings.project import DEFAULT_SOURCE_BUILD_TIMEOUT
from dlt_contract_ops.sources.discovery import (
    BuiltSource,
    Deferred,
    DeferredModels,
    ModelledResource,
    build_source,
)
from dlt_contract_ops.sources.fingerprints import (
    FORMAT,
    _files_hold,
    loaded_modules,
    model_modules,
    module_prints,
    static_key,
)
from dlt_contract_ops.statefile import project_key, state_dir

log = logging.getLogger("dlt_contract_ops")

#: the only naming conventions an entry may name: dlt's own, whose state is `max_length`
_NAMING_PACKAGE = "dlt.common.normalizers.naming."


def cache_path(project_dir: str, name: str, data_dir: str | None = None) -> Path:
    """`<data dir>/contract_ops/source_cache/<project>-<hash>.json` of source `name`
    (`data_dir` None: the current run context's)."""
    return state_dir(data_dir) / "source_cache" / f"{project_key(project_dir, name, 16)}.json"


# -- the entry --------------------------------------------------------------------------------
def _naming_ref(naming: Any) -> dict[str, Any] | None:
    """How to make `naming` again; None for a convention the cache cannot remake exactly."""
    cls = type(naming)
    if not cls.__module__.startswith(_NAMING_PACKAGE):
        return None
    return {"class": f"{cls.__module__}:{cls.__qualname__}",
            "max_length": getattr(naming, "max_length", None)}


def _naming(doc: dict[str, Any]) -> Any:
    import importlib

    module, _, qualname = str(doc["class"]).partition(":")
    if not module.startswith(_NAMING_PACKAGE):
        raise ValueError(f"naming {doc['class']!r} is not dlt's")
    cls: Any = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    return cls(max_length=doc["max_length"])


def _table_doc(t: ExpectedTable) -> dict[str, Any]:
    return {
        "resource": t.resource,
        "table": t.table,
        "write_disposition": t.write_disposition,
        "model_name": t.model_name,
        "parent": t.parent,
        "root": t.root,
        "columns": [[c.name, c.data_type, c.nullable, c.field, c.precision, c.scale,
                     c.deprecated] for c in t.columns],
    }


def _table(doc: dict[str, Any], seen: dict[tuple[Any, ...], ExpectedColumn]) -> ExpectedTable:
    """`seen`: the columns made so far, by their entry. Columns are immutable, so tables that
    declare the same column (an `id`, a `created_at`) share one object instead of each
    building its own."""
    columns = []
    for entry in doc["columns"]:
        key = tuple(entry)
        column = seen.get(key)
        if column is None:
            name, data_type, nullable, fld, precision, scale, *deprecated = entry
            column = seen[key] = ExpectedColumn(
                str(name), data_type, bool(nullable), str(fld), precision, scale,
                bool(deprecated and deprecated[0]),
            )
        columns.append(column)
    return ExpectedTable(
        resource=str(doc["resource"]),
        table=str(doc["table"]),
        columns=tuple(columns),
        write_disposition=str(doc["write_disposition"]),
        model_name=str(doc["model_name"]),
        parent=str(doc["parent"]),
        root=str(doc["root"]),
    )


def source_doc(built: BuiltSource) -> dict[str, Any] | None:
    """What the cache keeps of a built source; None when it cannot keep it exactly."""
    naming = _naming_ref(built.naming)
    if naming is None:
        return None
    return {
        "name": built.name,
        "schema_name": built.schema_name,
        "naming": naming,
        "tables": [_table_doc(t) for t in built.tables],
        "nested": [_table_doc(t) for t in built.nested],
        "models": sorted(built.models),
        "notes": list(built.notes),
        "resources": [[r.resource, r.table_name, r.write_disposition] for r in built.resources],
        "standalone": built.standalone,
        "codes": {t.table: built.code_sets(t) for t in built.tables},
    }


def cached_built(doc: dict[str, Any], real: Deferred) -> BuiltSource:
    """The BuiltSource an entry holds; its models and dlt object come from `real`."""
    seen: dict[tuple[Any, ...], ExpectedColumn] = {}
    return BuiltSource(
        name=str(doc["name"]),
        schema_name=str(doc["schema_name"]),
        naming=_naming(doc["naming"]),
        tables=tuple(_table(t, seen) for t in doc["tables"]),
        nested=tuple(_table(t, seen) for t in doc["nested"]),
        models=DeferredModels([str(m) for m in doc["models"]], real),
        notes=tuple(str(n) for n in doc["notes"]),
        resources=tuple(ModelledResource(str(a), str(b), str(c)) for a, b, c in doc["resources"]),
        standalone=bool(doc["standalone"]),
        real=real,
        codes={
            str(table): {str(c): tuple(values) for c, values in sets.items()}
            for table, sets in doc["codes"].items()
        },
    )


def _read(path: Path, key: str, real: Deferred) -> BuiltSource | None:
    """The entry at `path` when it was written for `key` and its files still hold."""
    from dlt_contract_ops.statefile import read_json

    doc = read_json(path)
    if not doc:
        return None
    if doc.get("format") != FORMAT or doc.get("key") != key:
        log.debug("source cache `%s`: written for other versions or settings: rebuilding", path)
        return None
    if not _files_hold(doc["files"]):
        log.debug("source cache `%s`: the source's code changed: rebuilding", path)
        return None
    return cached_built(doc["source"], real)


def _write(path: Path, key: str, built: BuiltSource, files: list[list[Any]]) -> None:
    from dlt_contract_ops.statefile import locked, write_json

    source = source_doc(built)
    if source is None:
        log.debug("source cache: naming %r of `%s` is not dlt's own: not cached",
                  type(built.naming).__qualname__, built.name)
        return
    doc = {"format": FORMAT, "key": key, "files": files, "source": source}
    with locked(path, timeout=2.0):
        write_json(path, doc)


def cached_source(
    name: str,
    ref: str,
    project_dir: str,
    timeout: float = DEFAULT_SOURCE_BUILD_TIMEOUT,
    pipeline_name: str | None = None,
    *,
    bound: Sequence[tuple[str, str]] = (),
) -> BuiltSource:
    """Source `name` from the cache when its fingerprint holds, else built (and cached).
    `pipeline_name`: the source's pipeline, whose configuration section is part of the key;
    `bound`: the models bound by configuration (`build_source`), part of the key too.

    Call inside the project context (dlt's data dir and configuration are the project's).
    """

    def build() -> BuiltSource:
        return build_source(name, ref, project_dir, timeout=timeout, bound=bound)

    try:
        path = cache_path(project_dir, name)
        key = static_key(name, ref, project_dir, pipeline_name)
        if bound:  # set from the environment too, which the config files' prints miss
            key += repr(tuple(bound))
    except Exception as exc:  # no data dir, an unreadable config file: build as without
        log.debug("source cache unavailable for `%s`: %s", name, exc)
        return build()
    try:
        hit = _read(path, key, Deferred(build))
    except Exception as exc:  # corrupt, unreadable, an older layout: rebuild over it
        log.debug("source cache `%s` unreadable, rebuilding: %s", path, exc)
        hit = None
    if hit is not None:
        return hit
    started = time.time_ns()
    before = set(sys.modules)
    built = build()
    try:
        # every module the build imported, and the models' own (imported earlier, maybe)
        user_modules = (set(sys.modules) - before) | model_modules(built)
        files, doubtful = module_prints(
            loaded_modules(project_dir, ref.partition(":")[0], user_modules), started
        )
        if doubtful:
            log.debug("source cache `%s`: the code of %s may differ from its file (edited "
                      "during the build, or imported before this run): not cached",
                      path, ", ".join(doubtful))
        else:
            _write(path, key, built, files)
    except Exception as exc:  # a read-only data dir, a held lock: the next run builds again
        log.debug("source cache `%s` not written: %s", path, exc)
    return built
