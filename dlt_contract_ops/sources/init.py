"""`dlt-contract-ops init`: find the project's dlt sources (without running a pipeline) and
declare each one not declared yet in `.dlt/config.toml`: those with models, and those without
one that a local pipeline has loaded (`models infer` then writes their models)."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_contract_ops.errors import ConfigError, ContractOpsError
from dlt_contract_ops.sources.onboarding import (
    LocalPipeline,
    _target,
    local_pipelines,
    matching_pipelines,
)
from dlt_contract_ops.sources.scan import ProjectModule, project_modules, runs_refused

if TYPE_CHECKING:
    from dlt_contract_ops.sources.discovery import BuiltSource


@dataclass(frozen=True)
class FoundSource:
    """A dlt source (or standalone resource), as `init` declares it."""

    name: str  # the dlt source name: `[sources.<name>.contract_ops]`
    ref: str
    resources: tuple[str, ...]
    pipeline_name: str | None = None
    destination: str | None = None
    dataset_name: str | None = None
    #: the dlt source's name, on the table of each pipeline but the first (`name` is then
    #: `<source>_<pipeline>`)
    source_name: str | None = None
    #: where it is declared already (then kept as it is); None for a new declaration
    declared_in: str | None = None
    #: no resource has a model yet (`resources` are all of them): `models infer` writes them
    unmodelled: bool = False

    def values(self) -> dict[str, str]:
        """The keys `init` writes, in order; unknown ones left out."""
        pairs = (
            ("ref", self.ref),
            ("source_name", self.source_name),
            ("pipeline_name", self.pipeline_name),
            ("destination", self.destination),
            ("dataset_name", self.dataset_name),
        )
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


def _candidates(
    modules: list[ProjectModule], project_dir: str
) -> tuple[list[tuple[str, Any]], list[str]]:
    """(ref, object) of every dlt source factory, source and resource the modules define,
    each object once (under the module that defines it), factories first. Each module is
    imported with pipeline runs refused (`runs_refused`)."""
    from dlt.extract import DltResource, DltSource
    from dlt.extract.reference import SourceFactory

    from dlt_contract_ops.errors import RunsOnImportError
    from dlt_contract_ops.sources.project_imports import (
        _import_module,  # reconcile's own import rules
    )

    by_id: dict[int, tuple[str, Any]] = {}
    notes = []
    for found in modules:
        module_name = found.name
        try:
            with runs_refused():
                module = _import_module(module_name, project_dir)
        except RunsOnImportError as exc:
            notes.append(
                f"`{found.shown}` runs a pipeline when imported ({exc}): refused, and the file "
                'skipped (move that under `if __name__ == "__main__":` to have it scanned)'
            )
            continue
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
    return [
        p.name
        for p in params
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def scan_project(project_dir: str) -> tuple[list[tuple[str, BuiltSource]], list[str]]:
    """(ref, built source) of every dlt source and standalone resource under `project_dir`
    with at least one Pydantic model, and of every dlt source without one (declared only
    where a local pipeline loaded it: `_unmodelled`), and notes on what was skipped. Runs
    inside the
    project's context (a source's own configuration resolves as in reconcile). Only the
    files that define a source are imported (`sources.scan`), and no bytecode is written
    next to them."""
    from unittest.mock import patch

    with patch.object(sys, "dont_write_bytecode", True):
        return _scan(project_dir)


def _scan(project_dir: str) -> tuple[list[tuple[str, BuiltSource]], list[str]]:
    from dlt.extract import DltResource
    from dlt.extract.reference import SourceFactory

    from dlt_contract_ops.sources.discovery import build_source

    modules, notes = project_modules(project_dir)
    candidates, import_notes = _candidates(modules, project_dir)
    notes += import_notes
    found: list[tuple[str, BuiltSource]] = []
    standalone: dict[str, str] = {}  # dlt name of a standalone resource declared -> its ref
    covered: set[str] = set()  # the resources of the sources found: declared with them
    for ref, obj in candidates:
        if isinstance(obj, SourceFactory) and (required := _required_args(obj)):
            notes.append(
                f"`{ref}` needs arguments ({', '.join(required)}): skipped; declare "
                "it by hand with a `ref` to a function that passes them"
            )
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
        if isinstance(obj, DltResource) and obj.name in covered:
            continue  # a resource of a source found already: declared with it
        try:
            built = build_source(name, ref, project_dir)
        except ContractOpsError as exc:
            notes.append(f"`{ref}`: {exc}")
            continue
        if not built.models and built.standalone:
            notes.append(f"`{ref}`: no resource declares a Pydantic model (`columns=Model`)")
            continue
        if any(b.schema_name == built.schema_name for _, b in found):
            notes.append(f"`{ref}`: source `{built.schema_name}` was found already: skipped")
            continue
        found.append((ref, built))
        covered.update(_resources(built))
        if isinstance(obj, DltResource):
            standalone[obj.name] = ref
    return found, notes


def _resources(built: BuiltSource) -> dict[str, Any]:
    """The dlt resources of a built source (or the standalone resource), by name."""
    from dlt.extract import DltSource

    obj = built.source_obj
    return dict(obj.selected_resources.items()) if isinstance(obj, DltSource) else {
        obj.name: obj}


def _unmodelled(
    ref: str, built: BuiltSource, pipelines: Sequence[LocalPipeline], notes: list[str]
) -> tuple[FoundSource, frozenset[str]] | None:
    """A source none of whose resources has a model, with its tables (each resource's fixed
    table, under the schema's naming), when a local pipeline's stored schema holds one of
    them: `models infer` can write its models from what that pipeline loaded. Else None,
    with a note."""
    resources = _resources(built)
    tables = frozenset(built.naming.normalize_table_identifier(str(r.table_name))
                       for r in resources.values() if not callable(r.table_name))
    if not matching_pipelines(built.schema_name, tables, pipelines, every=True):
        notes.append(f"`{ref}`: no resource declares a Pydantic model (`columns=Model`), and "
                     "no local pipeline has loaded it: skipped")
        return None
    notes.append(f"source `{built.schema_name}` has no model yet: run `dlt-contract-ops "
                 f"models infer -s {built.schema_name}` to write and bind them")
    return FoundSource(built.schema_name, ref, tuple(resources), unmodelled=True), tables


def _declared(
    source: FoundSource,
    pipelines: Sequence[LocalPipeline],
    built: BuiltSource,
    notes: list[str],
    tables: frozenset[str] | None = None,
) -> list[FoundSource]:
    """`source` once per local pipeline whose schema is its own. The first (a pipeline named
    as the source, else the one holding most of its tables) keeps the source's name; each
    other one gets a table of its own, `<source>_<pipeline>` with `source_name`, so reconcile
    sweeps every destination the source is loaded into and `-s <source>` selects them all.
    """
    schema, modelled, standalone = _target(built, source.name)
    found = matching_pipelines(schema, modelled if tables is None else tables, pipelines,
                               any_schema=standalone, every=True)
    if not found:
        notes.append(f"source `{source.name}`: no local pipeline holds its schema; set "
                     "`pipeline_name` by hand")
        return [source]
    found.sort(key=lambda p: p.name != source.name)  # stable: best first otherwise
    out = []
    for n, pipeline in enumerate(found):
        name, source_name = source.name, None
        if n:
            name = (pipeline.name if pipeline.name.startswith(f"{source.name}_")
                    else f"{source.name}_{pipeline.name}")
            source_name = source.name
        out.append(replace(_loaded_by(source, pipeline, notes), name=name,
                           source_name=source_name))
    return out


def _loaded_by(source: FoundSource, pipeline: LocalPipeline, notes: list[str]) -> FoundSource:
    """`source` with the `pipeline_name`, `destination` and `dataset_name` of `pipeline`."""
    destination = pipeline.destination_name
    if destination and destination != pipeline.destination_type:
        # a named destination made in code may not resolve by name: the pipeline's state has it
        notes.append(
            f"source `{source.name}`: pipeline `{pipeline.name}` loads into the named "
            f"destination `{destination}`: `destination` left to the pipeline's state"
        )
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
        header = ".".join(
            tomlkit.key(k).as_string() for k in ("sources", source.name, "contract_ops")
        )
        lines = [f"[{header}]"] + [
            f"{tomlkit.key(k).as_string()} = {tomlkit.string(v).as_string()}"
            for k, v in source.values().items()
        ]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def init_project(project_dir: str | None = None, *, dry_run: bool = False) -> InitReport:
    """Declare every dlt source of the project in its `.dlt/config.toml`: each with a model,
    and each without one that a local pipeline has loaded (`_unmodelled`).

    Each source gets `[sources.<dlt source name>.contract_ops]` with `ref` and, from the
    local pipeline whose stored schema is the source's, `pipeline_name`, `destination` and
    `dataset_name`; a source several local pipelines load gets one table per pipeline
    (`_declared`). The tables are appended: the file's content stays as it was, and a source
    declared already (in any of dlt's TOML files or the environment) is kept, not
    overwritten. `dry_run` writes nothing; `InitReport.toml` holds what would be appended.
    """
    from dlt_contract_ops.settings.files import locate, project_context
    from dlt_contract_ops.settings.project import declared_sources, source_section

    with project_context(project_dir) as target:
        found, notes = scan_project(target)
        declared = set(declared_sources())
        pipelines = local_pipelines() if found else ()
        sources: list[FoundSource] = []
        # a table of another pipeline (`<source>_<pipeline>`) never takes a name in use
        taken = declared | {b.schema_name for _, b in found}
        for ref, built in found:
            source = FoundSource(built.schema_name, ref, tuple(r.resource for r in built.resources))
            if source.name in declared:
                where = locate(source_section(source.name)) or "the environment"
                sources.append(replace(source, declared_in=where))
                continue
            tables = None
            if not built.models:
                bare = _unmodelled(ref, built, pipelines, notes)
                if bare is None:
                    continue
                source, tables = bare
            for one in _declared(source, pipelines, built, notes, tables):
                if one.source_name and (one.name in taken
                                        or any(s.name == one.name for s in sources)):
                    notes.append(
                        f"source `{source.name}`: pipeline `{one.pipeline_name}` not declared: "
                        f"the name `{one.name}` is taken; declare it by hand under another name"
                        f' with `source_name = "{source.name}"`'
                    )
                    continue
                sources.append(one)
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
