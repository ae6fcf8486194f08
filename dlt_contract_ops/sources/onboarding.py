"""Onboarding: a project's modelled dlt sources and the local pipelines that load them.

Behind `dlt-contract-ops init` (declare every source found in `.dlt/config.toml`), behind
reconcile when a source's `pipeline_name` is not configured (the local pipeline whose stored
schema is the source's), and behind `dlt pipeline <name> reconcile` (the sources of a
pipeline). A local pipeline is one with a working folder in dlt's pipelines dir.
"""

from __future__ import annotations

import ast
import inspect
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_contract_ops.errors import ConfigError, ContractOpsError, NotLoadedError

if TYPE_CHECKING:
    from dlt_contract_ops.settings.project import SourceSettings
    from dlt_contract_ops.sources.discovery import BuiltSource

#: folders `init` never looks into: environments, build output, caches, tests
SKIPPED_DIRS = frozenset({
    "__pycache__", "venv", "env", "site-packages", "node_modules", "build", "dist", "tests",
    "test",
})
#: calls that run a pipeline: a module making one at import time is not imported by `init`
RUNNING_CALLS = frozenset({"run", "extract", "normalize"})


# -- local pipelines ------------------------------------------------------------------------
@dataclass(frozen=True)
class LocalPipeline:
    """A pipeline with local state: its schemas (name -> data tables) and where it loads."""

    name: str
    schemas: tuple[tuple[str, frozenset[str]], ...]
    destination_type: str | None = None
    destination_name: str | None = None
    dataset_name: str | None = None

    def tables(self, schema: str) -> frozenset[str] | None:
        return next((tables for name, tables in self.schemas if name == schema), None)

    @property
    def shown(self) -> str:
        names = ", ".join(f"`{name}`" for name, _ in self.schemas) or "none"
        return f"`{self.name}` (schemas {names})"


def pipelines_dir() -> str:
    from dlt.common.pipeline import get_dlt_pipelines_dir

    return get_dlt_pipelines_dir()


def local_pipeline_names() -> list[str]:
    """Folders in dlt's pipelines dir, sorted (each holds a pipeline's local state)."""
    root = Path(pipelines_dir())
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def local_pipelines() -> tuple[LocalPipeline, ...]:
    """Every pipeline dlt can attach to in its pipelines dir, with its stored schemas."""
    import dlt

    out = []
    for name in local_pipeline_names():
        try:
            pipeline = dlt.attach(name)
            schemas = tuple(
                (schema, frozenset(pipeline.schemas[schema].data_table_names(
                    include_incomplete=True)))
                for schema in pipeline.schema_names
            )
            factory = pipeline.destination
        except Exception:  # not a pipeline's folder, or state dlt cannot read: no candidate
            continue
        out.append(LocalPipeline(
            name=name,
            schemas=schemas,
            destination_type=(
                str(factory.destination_type).rsplit(".", 1)[-1] if factory else None
            ),
            destination_name=factory.destination_name if factory else None,
            dataset_name=pipeline.dataset_name,
        ))
    return tuple(out)


def matching_pipelines(
    schema_name: str,
    tables: Iterable[str],
    pipelines: Sequence[LocalPipeline],
    *,
    any_schema: bool = False,
) -> list[LocalPipeline]:
    """The pipelines whose stored schema is the source's, best first: schema `schema_name`
    holding the most of `tables` (at least one of them, when any are given). With
    `any_schema` (a standalone resource, which lands in the pipeline's own schema) a schema
    of any name qualifies when it holds every one of `tables`.

    Only the best are returned: one pipeline, or the ones tied for best.
    """
    wanted = frozenset(tables)
    if any_schema and not wanted:
        return []  # a resource without a table of its own matches nothing
    scored: list[tuple[int, LocalPipeline]] = []
    for pipeline in pipelines:
        candidates = (
            [t for _, t in pipeline.schemas] if any_schema
            else [t for t in [pipeline.tables(schema_name)] if t is not None]
        )
        best = max((len(wanted & t) for t in candidates
                    if not any_schema or wanted <= t), default=-1)
        if best > 0 or (best == 0 and not wanted):
            scored.append((best, pipeline))
    top = max((score for score, _ in scored), default=None)
    return [pipeline for score, pipeline in scored if score == top]


def _target(built: BuiltSource | None, name: str) -> tuple[str, frozenset[str], bool]:
    """(schema name, tables, standalone resource) of a source, for matching pipelines."""
    if built is None:  # only the declared name is known: it is the schema's name
        return name, frozenset(), False
    return (built.schema_name, frozenset(t.table for t in built.tables), built.standalone)


def pipeline_of(
    settings: SourceSettings,
    built: BuiltSource | None = None,
    pipelines: Sequence[LocalPipeline] | None = None,
) -> str:
    """The pipeline of a source whose `pipeline_name` is not configured.

    The source's name when `destination` and `dataset_name` are configured (they say where
    its data is) or a pipeline of that name has local state: both as before there was
    discovery. Else the one local pipeline whose stored schema is the source's (`built`
    gives the schema name and tables; without it, the schema named as the source). When none
    or several match, a ConfigError listing the candidates seen.
    """
    default = settings.name
    if settings.destination and settings.dataset_name:
        return default
    if pipelines is None:
        if default in local_pipeline_names():
            return default
        pipelines = local_pipelines()
    elif any(p.name == default for p in pipelines):
        return default
    schema, tables, standalone = _target(built, settings.name)
    found = matching_pipelines(schema, tables, pipelines, any_schema=standalone)
    if len(found) == 1:
        return found[0].name
    from dlt_contract_ops.settings.project import source_section

    fix = (f"Set `pipeline_name` in `[{source_section(settings.name)}]` (or `destination` and "
           "`dataset_name`)")
    if found:
        raise ConfigError(
            f"Source `{settings.name}`: `pipeline_name` is not set and {len(found)} local "
            f"pipelines hold its schema `{schema}`: {', '.join(p.shown for p in found)}. {fix}."
        )
    seen = "; ".join(p.shown for p in pipelines) or "none"
    raise NotLoadedError(
        f"Source `{settings.name}`: `pipeline_name` is not set, no local pipeline is named "
        f"`{default}` and none holds its schema `{schema}`. Local pipelines in "
        f"`{pipelines_dir()}`: {seen}. {fix}, or run the pipeline on this machine once."
    )


def sources_of_pipeline(pipeline_name: str, project_dir: str | None = None) -> list[str]:
    """The declared sources whose pipeline is `pipeline_name`: configured as their
    `pipeline_name`, else found by `pipeline_of` (by the schema named as the source).

    A source whose settings cannot be read belongs to the pipeline named as it (reconcile
    then reports its error). ConfigError listing each source's pipeline when none matches.
    """
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.project import (
        ProjectSettings,
        declared_sources,
        load_source_settings,
    )

    with project_context(project_dir):
        pipelines: Sequence[LocalPipeline] | None = None
        of: dict[str, str] = {}
        for name in declared_sources():
            try:
                settings = load_source_settings(name, ProjectSettings(), check_keys=False)
            except ContractOpsError:
                of[name] = name
                continue
            if settings.pipeline_name:
                of[name] = settings.pipeline_name
                continue
            pipelines = local_pipelines() if pipelines is None else pipelines
            try:
                of[name] = pipeline_of(settings, pipelines=pipelines)
            except ConfigError:
                of[name] = name
    own = [name for name, pipeline in of.items() if pipeline == pipeline_name]
    if own:
        return own
    known = ", ".join(f"`{s}` -> `{p}`" for s, p in of.items()) or "none"
    raise ConfigError(
        f"No declared source belongs to pipeline `{pipeline_name}` (declared sources and "
        f"their pipelines: {known}). Set `pipeline_name = \"{pipeline_name}\"` in "
        "`[sources.<name>.contract_ops]`, or run `dlt-contract-ops init` to declare the "
        "project's sources."
    )


# -- init: scanning a project ---------------------------------------------------------------
@dataclass(frozen=True)
class FoundSource:
    """A dlt source (or standalone resource) with models, as `init` declares it."""

    name: str  # the dlt source name: `[sources.<name>.contract_ops]`
    ref: str
    resources: tuple[str, ...]
    pipeline_name: str | None = None
    destination: str | None = None
    dataset_name: str | None = None
    #: where it is declared already (then kept as it is); None for a new declaration
    declared_in: str | None = None

    def values(self) -> dict[str, str]:
        """The keys `init` writes, in order; unknown ones left out."""
        pairs = (("ref", self.ref), ("pipeline_name", self.pipeline_name),
                 ("destination", self.destination), ("dataset_name", self.dataset_name))
        return {k: v for k, v in pairs if v}


@dataclass(frozen=True)
class InitReport:
    """What `init` found, what it added (`toml`) and where; `notes` say what it skipped."""

    config_file: Path
    sources: tuple[FoundSource, ...]
    notes: tuple[str, ...]
    toml: str
    written: bool

    @property
    def added(self) -> tuple[FoundSource, ...]:
        return tuple(s for s in self.sources if s.declared_in is None)


def _is_main_guard(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__")


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
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in RUNNING_CALLS):
                return node.func.attr
    return None


def project_modules(project_dir: str) -> tuple[list[str], list[str]]:
    """(module names, notes) of the project's Python files that mention dlt; a file that
    would run a pipeline when imported is left out with a note."""
    modules: list[str] = []
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
                call = runs_on_import(code)
            except SyntaxError as exc:
                notes.append(f"`{shown}`: not valid Python ({exc.msg}, line {exc.lineno}): "
                             "skipped")
                continue
            if call:
                notes.append(f"`{shown}` calls `.{call}(...)` when imported: skipped (move "
                             "that under `if __name__ == \"__main__\":` to have it scanned)")
                continue
            modules.append(".".join(parts))
    return modules, notes


def _candidates(modules: list[str], project_dir: str) -> tuple[list[tuple[str, Any]], list[str]]:
    """(ref, object) of every dlt source factory, source and resource the modules define,
    each object once (under the module that defines it), factories first."""
    from dlt.extract import DltResource, DltSource
    from dlt.extract.reference import SourceFactory

    from dlt_contract_ops.sources.discovery import _import_module  # reconcile's own import rules

    by_id: dict[int, tuple[str, Any]] = {}
    notes = []
    for module_name in modules:
        try:
            module = _import_module(module_name, project_dir)
        except (Exception, SystemExit) as exc:
            notes.append(f"cannot import `{module_name}`: {type(exc).__name__}: {exc}")
            continue
        for attr, obj in sorted(vars(module).items()):
            if attr.startswith("_") or not isinstance(obj, SourceFactory | DltSource | DltResource):
                continue
            home = getattr(obj, "__module__", None) == module_name
            if id(obj) not in by_id or home:
                by_id[id(obj)] = (f"{module_name}:{attr}", obj)
    rank = {SourceFactory: 0, DltSource: 1, DltResource: 2}

    def order(item: tuple[str, Any]) -> tuple[int, str]:
        return next(r for cls, r in rank.items() if isinstance(item[1], cls)), item[0]

    return sorted(by_id.values(), key=order), notes


def _required_args(obj: Any) -> list[str]:
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.default is inspect.Parameter.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def scan_project(project_dir: str) -> tuple[list[tuple[str, BuiltSource]], list[str]]:
    """(ref, built source) of every dlt source and standalone resource under `project_dir`
    with at least one Pydantic model, and notes on what was skipped. Runs inside the
    project's context (a source's own configuration resolves as in reconcile)."""
    from dlt.extract import DltResource
    from dlt.extract.reference import SourceFactory

    from dlt_contract_ops.sources.discovery import build_source

    modules, notes = project_modules(project_dir)
    candidates, import_notes = _candidates(modules, project_dir)
    notes += import_notes
    found: list[tuple[str, BuiltSource]] = []
    standalone: dict[str, str] = {}  # dlt name of a standalone resource declared -> its ref
    for ref, obj in candidates:
        if isinstance(obj, SourceFactory) and (required := _required_args(obj)):
            notes.append(f"`{ref}` needs arguments ({', '.join(required)}): skipped; declare "
                         "it by hand with a `ref` to a function that passes them")
            continue
        name = str(getattr(obj, "name", ref.rpartition(":")[2]))
        if isinstance(obj, DltResource) and obj.name in standalone:
            # another resource of the same dlt name: one `[sources.<name>.contract_ops]`
            # table and one schema name cannot hold both, so say so rather than drop it
            notes.append(
                f"`{ref}`: resource `{obj.name}` has the dlt name of `{standalone[obj.name]}`, "
                f"declared as source `{obj.name}`: not declared; declare it by hand under "
                f'another name (`[sources.<name>.contract_ops]` with `ref = "{ref}"`) or give '
                "it its own `name=`"
            )
            continue
        if isinstance(obj, DltResource) and any(
            obj.name in {r.resource for r in b.resources} for _, b in found
        ):
            continue  # a resource of a source found already: declared with it
        try:
            built = build_source(name, ref, project_dir)
        except ContractOpsError as exc:
            notes.append(f"`{ref}`: {exc}")
            continue
        if not built.models:
            notes.append(f"`{ref}`: no resource declares a Pydantic model (`columns=Model`)")
            continue
        if any(b.schema_name == built.schema_name for _, b in found):
            notes.append(f"`{ref}`: source `{built.schema_name}` was found already: skipped")
            continue
        found.append((ref, built))
        if isinstance(obj, DltResource):
            standalone[obj.name] = ref
    return found, notes


def _declared(source: FoundSource, pipelines: Sequence[LocalPipeline], built: BuiltSource,
              notes: list[str]) -> FoundSource:
    """`source` with the local pipeline whose schema is its own, when there is exactly one."""
    schema, tables, standalone = _target(built, source.name)
    found = matching_pipelines(schema, tables, pipelines, any_schema=standalone)
    if len(found) != 1:
        why = (f"{len(found)} local pipelines hold its schema: "
               f"{', '.join(p.shown for p in found)}" if found
               else "no local pipeline holds its schema")
        notes.append(f"source `{source.name}`: {why}; set `pipeline_name` by hand")
        return source
    pipeline = found[0]
    destination = pipeline.destination_name
    if destination and destination != pipeline.destination_type:
        # a named destination made in code may not resolve by name: the pipeline's state has it
        notes.append(f"source `{source.name}`: pipeline `{pipeline.name}` loads into the named "
                     f"destination `{destination}`: `destination` left to the pipeline's state")
        destination = None
    return replace(source, pipeline_name=pipeline.name, destination=destination,
                   dataset_name=pipeline.dataset_name)


def toml_tables(sources: Iterable[FoundSource]) -> str:
    """`[sources.<name>.contract_ops]` tables of `sources`, keys and values quoted by tomlkit.

    >>> print(toml_tables([FoundSource("gh", "pipelines.gh:github", ("issues",))]), end="")
    [sources.gh.contract_ops]
    ref = "pipelines.gh:github"
    """
    import tomlkit

    out = []
    for source in sources:
        header = ".".join(tomlkit.key(k).as_string() for k in ("sources", source.name,
                                                                 "contract_ops"))
        lines = [f"[{header}]"] + [f"{tomlkit.key(k).as_string()} = "
                                   f"{tomlkit.string(v).as_string()}"
                                   for k, v in source.values().items()]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def init_project(project_dir: str | None = None, *, dry_run: bool = False) -> InitReport:
    """Declare every modelled dlt source of the project in its `.dlt/config.toml`.

    Each source gets `[sources.<dlt source name>.contract_ops]` with `ref` and, from the
    local pipeline whose stored schema is the source's, `pipeline_name`, `destination` and
    `dataset_name`. The tables are appended: the file's content stays as it was, and a source
    declared already (in any of dlt's TOML files or the environment) is kept, not
    overwritten. `dry_run` writes nothing; `InitReport.toml` holds what would be appended.
    """
    from dlt_contract_ops.settings.files import locate, project_context
    from dlt_contract_ops.settings.project import declared_sources, source_section

    with project_context(project_dir) as target:
        found, notes = scan_project(target)
        declared = set(declared_sources())
        pipelines = local_pipelines() if found else ()
        sources = []
        for ref, built in found:
            source = FoundSource(built.schema_name, ref, tuple(r.resource for r in built.resources))
            if source.name in declared:
                where = locate(source_section(source.name)) or "the environment"
                sources.append(replace(source, declared_in=where))
            else:
                sources.append(_declared(source, pipelines, built, notes))
    config = Path(target, ".dlt", "config.toml")
    report = InitReport(config, tuple(sources), tuple(notes), "", written=False)
    toml = toml_tables(report.added)
    if not toml or dry_run:
        return replace(report, toml=toml)
    _append(config, toml)
    return replace(report, toml=toml, written=True)


def _append(config: Path, toml: str) -> None:
    """Append `toml` to `config`, checking the whole file still parses first."""
    import tomlkit

    from dlt_contract_ops.statefile import write_text

    old = config.read_text(encoding="utf-8") if config.is_file() else ""
    gap = "" if not old else ("\n" if old.endswith("\n") else "\n\n")
    new = old + gap + toml
    try:
        tomlkit.parse(new)
    except Exception as exc:  # e.g. `sources.x` is an inline table: no table can extend it
        raise ConfigError(
            f"Cannot add the source tables to `{config}`: the file would not parse ({exc}). "
            "Run `dlt-contract-ops init --dry-run` and add them by hand."
        ) from exc
    write_text(config, new)
