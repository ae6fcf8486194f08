"""Onboarding: a project's modelled dlt sources and the local pipelines that load them.

Behind `dlt-contract-ops init` (declare every source found in `.dlt/config.toml`), behind
reconcile when a source's `pipeline_name` is not configured (the local pipeline whose stored
schema is the source's), behind `dlt pipeline <name> reconcile` (the sources of a
pipeline), and behind `reconcile -s <source>` (the tables of a source's pipelines). A local
pipeline is one with a working folder in dlt's pipelines dir.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from dlt_contract_ops.errors import ConfigError, ContractOpsError, NotLoadedError

if TYPE_CHECKING:
    from dlt_contract_ops.settings.project import SourceSettings
    from dlt_contract_ops.sources.discovery import BuiltSource


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


#: the pipelines attached in the current `attach_scope` (pipelines dir, name) -> the pipeline,
#: or the exception attaching raised; None outside one
_ATTACHED: ContextVar[dict[tuple[str, str], Any] | None] = ContextVar(
    "dlt_contract_ops_attached", default=None
)


@contextlib.contextmanager
def attach_scope() -> Iterator[None]:
    """Within it, each local pipeline is attached (its state and schemas read) once: a run
    asks for a source's pipeline to find it, to read its destination and dataset, and to
    read what it loaded. Nothing loads during a run, so the state read first holds."""
    token = _ATTACHED.set({})
    try:
        yield
    finally:
        _ATTACHED.reset(token)


def attached(name: str) -> Any:
    """`dlt.attach(name)`: once per `attach_scope` (the error it raised, raised again)."""
    import dlt

    memo = _ATTACHED.get()
    if memo is None:
        return dlt.attach(name)
    key = (pipelines_dir(), name)
    if key not in memo:
        try:
            memo[key] = dlt.attach(name)
        except Exception as exc:
            memo[key] = exc
    found = memo[key]
    if isinstance(found, Exception):
        raise found
    return found


def local_pipeline_names() -> list[str]:
    """Folders in dlt's pipelines dir, sorted (each holds a pipeline's local state)."""
    root = Path(pipelines_dir())
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def local_pipelines() -> tuple[LocalPipeline, ...]:
    """Every pipeline dlt can attach to in its pipelines dir, with its stored schemas."""
    out = []
    for name in local_pipeline_names():
        try:
            pipeline = attached(name)
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
    every: bool = False,
) -> list[LocalPipeline]:
    """The pipelines whose stored schema is the source's, best first: schema `schema_name`
    holding the most of `tables` (at least one of them, when any are given). With
    `any_schema` (a standalone resource, which lands in the pipeline's own schema) a schema
    of any name qualifies when it holds every one of `tables`.

    Only the best are returned: one pipeline, or the ones tied for best; with `every`, all
    that qualify (the source loaded by several pipelines, into several destinations), best
    first.
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
    if every:
        return [pipeline for _, pipeline in sorted(scored, key=lambda s: -s[0])]
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


def selected_sources(names: Iterable[str], *, one: bool = False) -> list[str]:
    """The declared sources `-s NAME` selects, for every command that takes `-s` (the sweep's
    `run`, and the others through `commands.common.selected_by`): the table `NAME` and every
    table whose `source_name` is `NAME` (the same dlt source loaded by another pipeline),
    each once, in the order given. A name that selects nothing is kept, for its
    unknown-source error; a `source_name` is read from the TOML files and the environment as
    the tables are found.

    `one`: for a command that acts on one table (`gate check`, `profile`, `contract
    snapshot`, ...): the table `NAME` when it is declared, else the one table whose
    `source_name` is `NAME`; a ConfigError naming the tables when it has several."""
    from dlt_contract_ops.settings.project import declared_sources, source_groups

    declared = declared_sources()
    group = source_groups()
    out: list[str] = []
    for name in names:
        own = [name] if name in declared or name not in group else []
        tables = own + group.get(name, [])
        if one and len(tables) > 1:
            tables = own or _one_of(name, tables)
        out.extend(tables)
    return list(dict.fromkeys(out))


def _one_of(name: str, tables: Sequence[str]) -> NoReturn:
    raise ConfigError(
        f"`-s {name}` selects the {len(tables)} declared tables of source `{name}` (one per "
        f"pipeline: {', '.join(tables)}), and this command takes one: name one "
        f"(`-s {tables[0]}`), or run the command once for each."
    )
