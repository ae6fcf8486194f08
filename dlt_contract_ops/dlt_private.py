"""Every use of dlt's private API, in one place, checked against the dlt range it is tested on.

The ingest gate stages a batch in a pipeline of its own and hands an accepted one over with
dlt's own routines (`Pipeline._install_state_and_schemas`, the `load/normalized` folder), sees
what a source sent through dlt's own normalizer (`JsonLItemsNormalizer._normalize_chunk`), and
reads and changes a resource's hints and pipe (`DltResource._hints`, `._pipe`); `init` reads a
project's files with dlt's script reader (`dlt.reflection`) and refuses a resource's extraction
while it imports them (`ManagedPipeIterator`). None of these is dlt's public API: any dlt
release may rename or drop them. So:

- nothing else in this package touches a private member of dlt (an underscore name on a dlt
  object, or a dlt module dlt does not document);
- the first call into this module checks that every member it needs exists, with the
  parameters it passes (`check`), and a missing one is one line naming the supported dlt range
  (`UnsupportedDltError`, CLI exit code 2), not an `AttributeError` half way through a hand-over;
- `pyproject.toml` declares the same range (`SUPPORTED_DLT`; a test keeps them equal), and
  `make test` runs the gate's tests against the oldest dlt of it (`make test-compat`) as well as
  against the newest the dev install resolves to.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import UnsupportedDltError

#: the dlt releases this package is tested against: the oldest by `make test-compat`, the
#: newest by `make test`; the upper bound is the next minor release, not yet tested
SUPPORTED_DLT = ">=1.30.0,<1.32"


@dataclass(frozen=True)
class Member:
    """A private member of a dlt class this module uses: `owner.name`, taking `params` (the
    parameters it is passed; none for an attribute that is not called)."""

    owner: str
    name: str
    params: tuple[str, ...] = ()


#: every class-level member used below; instance attributes (`_hints`, `_pipe`,
#: `_schema_storage_config`) are checked where they are read (`_attribute`)
NEEDED = (
    Member("Pipeline", "_install_state_and_schemas", ("state", "schemas", "replace")),
    Member("Pipeline", "_state_to_props", ("state",)),
    Member("Pipeline", "_load_storage_config"),
    Member("Pipeline", "_set_destinations", ("destination", "staging", "destination_credentials")),
    Member("Pipeline", "_set_dataset_name", ("new_dataset_name",)),
    Member("Pipeline", "_get_destination_capabilities"),
    Member("LoadStorage", "__init__", ("is_owner", "supported_file_formats", "config")),
    Member("LoadStorage", "NORMALIZED_FOLDER"),
    Member("JsonLItemsNormalizer", "__init__",
           ("item_storage", "load_storage", "normalize_storage", "schema", "load_id", "config")),
    Member("JsonLItemsNormalizer", "_normalize_chunk",
           ("root_table_name", "items", "may_have_pua", "skip_write")),
    # the extract file's line encoding (`TypedJsonlListWriter`) and its reading (`Normalize`)
    Member("json", "typed_dumpb", ("obj",)),
    Member("json", "loadb", ("s",)),
    Member("json", "may_have_pua", ("line",)),
)


def check(owners: Mapping[str, Any], needed: Iterable[Member] = NEEDED) -> None:
    """Raise `UnsupportedDltError` for the first member of `needed` that `owners` (class name:
    class) lacks, or that does not take the parameters it is passed."""
    for member in needed:
        owner = owners.get(member.owner)
        found = getattr(owner, member.name, None) if owner is not None else None
        if found is None:
            raise _unsupported(f"no `{member.owner}.{member.name}`")
        if not member.params:
            continue
        try:
            taken = set(inspect.signature(found).parameters)
        except (TypeError, ValueError):  # not introspectable: a changed member
            taken = set()
        missing = [p for p in member.params if p not in taken]
        if missing:
            raise _unsupported(f"`{member.owner}.{member.name}` takes no `{missing[0]}`")


def _unsupported(what: str) -> UnsupportedDltError:
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("dlt")
    except PackageNotFoundError:
        installed = "?"
    return UnsupportedDltError(
        f"dlt-contract-ops needs dlt{SUPPORTED_DLT}; the installed dlt {installed} has {what}: "
        f"install a supported dlt, e.g. `pip install 'dlt{SUPPORTED_DLT}'`."
    )


def owners() -> dict[str, Any]:
    """The installed dlt's classes that `NEEDED` names."""
    from types import SimpleNamespace

    from dlt.common.json import json, may_have_pua
    from dlt.common.storages import LoadStorage
    from dlt.normalize.items_normalizers import JsonLItemsNormalizer
    from dlt.pipeline.pipeline import Pipeline

    return {"Pipeline": Pipeline, "LoadStorage": LoadStorage,
            "JsonLItemsNormalizer": JsonLItemsNormalizer,
            "json": SimpleNamespace(typed_dumpb=json.typed_dumpb, loadb=json.loadb,
                                    may_have_pua=may_have_pua)}


@functools.cache
def _checked() -> None:
    """`check` once a process (a failed check is not cached: it raises again next time)."""
    check(owners())


def _attribute(obj: Any, name: str) -> Any:
    """An instance attribute dlt sets in `__init__`, which only an instance shows."""
    _checked()
    try:
        return getattr(obj, name)
    except AttributeError:
        raise _unsupported(f"no `{type(obj).__name__}.{name}`") from None


# --- pipelines -----------------------------------------------------------------------------


def destination_capabilities(pipeline: Any) -> Any:
    """The capabilities `pipeline.normalize()` infers columns with."""
    _checked()
    return pipeline._get_destination_capabilities()


def set_target(
    pipeline: Any, destination: Any, staging: Any, credentials: Any, dataset_name: Any
) -> None:
    """What `pipeline.run(destination=..., staging=..., credentials=..., dataset_name=...)`
    does with those keywords before it extracts."""
    _checked()
    pipeline._set_destinations(destination=destination, staging=staging,
                               destination_credentials=credentials)
    pipeline._set_dataset_name(dataset_name)


def import_schema_path(pipeline: Any) -> str | None:
    """The pipeline's `import_schema_path` (None when it has none)."""
    config = _attribute(pipeline, "_schema_storage_config")
    return getattr(config, "import_schema_path", None)


def normalized_folder(pipeline: Any, *, create: bool = False) -> Path:
    """The folder of the pipeline's normalized load packages (one folder a package, renamed
    in whole by the hand-over). With `create`, dlt's own storage makes the load folders, as
    the normalize step does on a first run."""
    _checked()
    from dlt.common.storages import LoadStorage

    config = pipeline._load_storage_config()
    if create:
        LoadStorage(True, [], config)  # as owner: creates the folders
    return Path(config.load_volume_path) / LoadStorage.NORMALIZED_FOLDER


def install_state_and_schemas(pipeline: Any, state: Any, schemas: list[Any]) -> None:
    """dlt's own routine for installing a (state, schemas) pair into a working folder, without
    wiping the schemas first (a crash between wipe and write would lose them)."""
    _checked()
    pipeline._state_to_props(state)
    pipeline._install_state_and_schemas(state, schemas, replace=False)


# --- the normalizer ------------------------------------------------------------------------


def jsonl_normalizer(schema: Any, config: Any) -> Any:
    """dlt's JSON normalizer over `schema`, with no storages: it infers, never writes."""
    _checked()
    from dlt.normalize.items_normalizers import JsonLItemsNormalizer

    return JsonLItemsNormalizer(None, None, None, schema, "gate", config)  # type: ignore[arg-type]


def normalize_row(normalizer: Any, table: str, row: dict[str, Any]) -> None:
    """Infer `row` into the normalizer's schema as a row of `table` (nothing written), as
    `pipeline.normalize()` would: through the extract file's encoding first (dlt's typed JSON
    line, read back as the normalize step reads it), so the normalizer gets the values it gets
    from a package (dlt 1.30's takes only pendulum datetimes, which that decoding makes)."""
    from dlt.common.json import json, may_have_pua

    try:
        line = json.typed_dumpb([row])
    except (TypeError, ValueError, OverflowError):
        # a value the extract file cannot hold (an integer over 64 bits): dlt's extract of the
        # batch fails too, and the gate rejects it; the row is still seen as it was sent
        normalizer._normalize_chunk(table, [row], False, True)
        return
    normalizer._normalize_chunk(table, json.loadb(line), may_have_pua(line), True)


# --- resources -----------------------------------------------------------------------------


def resource_hints(resource: Any) -> Any:
    """The resource's hints as dlt keeps them (a dict, or None), to read and to change."""
    return _attribute(resource, "_hints")


def remove_steps(resource: Any, step: Any) -> None:
    """Take every occurrence of `step` out of the resource's pipe."""
    pipe = _attribute(resource, "_pipe")
    for at in [i for i, s in enumerate(pipe.steps) if s is step][::-1]:
        pipe.remove_step(at)


# --- reading a project's scripts (`init`; dlt's script reader is not documented API) --------


def defines_sources(tree: ast.Module, code: str) -> bool:
    """Whether dlt's script reader finds a source or resource defined in `code` (parsed as
    `tree`): a decorated function, or a call of `source`/`resource`/`transformer`, under any
    name dlt's are imported as; taught two more spellings (an `async def` resource, and
    `src = dlt.source` used as `@src`)."""
    try:
        from dlt.common.reflection.utils import set_ast_parents
        from dlt.reflection import names
        from dlt.reflection.script_visitor import PipelineScriptVisitor
    except ImportError:
        raise _unsupported("no script reader (`dlt.reflection.script_visitor`)") from None

    class SourceVisitor(PipelineScriptVisitor):
        def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
            return self.visit_FunctionDef(node)  # type: ignore[arg-type]  # same fields

        def visit_Assign(self, node: ast.Assign) -> Any:
            # `src = dlt.source`: a name for a decorator, used as `@src` further down
            if self._curr_pass == 1 and isinstance(node.value, ast.Name | ast.Attribute):
                fn = self.func_aliases.get(ast.unparse(node.value))
                for target in node.targets:
                    if fn and isinstance(target, ast.Name):
                        self.func_aliases[target.id] = fn
            self.generic_visit(node)

    set_ast_parents(tree)  # dlt's reader needs each node's parent
    visitor = SourceVisitor(code)
    visitor.visit_passes(tree)
    made = (names.SOURCE, names.RESOURCE, names.TRANSFORMER)
    return bool(visitor.known_sources_resources) or any(visitor.known_calls.get(f) for f in made)


def pipe_iterator() -> Any:
    """The class that iterates a resource's pipe when a pipeline extracts (refused while
    `init` imports a project's files)."""
    try:
        from dlt.extract.pipe_iterator import ManagedPipeIterator
    except ImportError:
        raise _unsupported("no `dlt.extract.pipe_iterator.ManagedPipeIterator`") from None
    return ManagedPipeIterator


# --- SQLAlchemy ----------------------------------------------------------------------------


def sqlite_dataset_file(client: Any, dataset: str) -> Any:
    """The file dlt's SQLAlchemy destination keeps a SQLite dataset in (it attaches one
    database file a dataset)."""
    method = _attribute(client, "_sqlite_dataset_filename")
    return method(dataset)
