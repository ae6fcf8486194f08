"""`models infer`: a Pydantic model module for every loaded table whose resource has none,
and the `[sources.<X>.contract_ops.models]` lines that bind them.

Per dataset: ONE metadata query (`list_columns`) and ONE read of dlt's stored schema
(`_dlt_version`); per table: ONE aggregate (`infer.facts`), and one more for its code-set
candidates when it has any.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlt_contract_ops.core.columns import LOAD_ID
from dlt_contract_ops.errors import ConfigError, DestinationError, NotLoadedError
from dlt_contract_ops.infer.fields import ColumnFacts
from dlt_contract_ops.infer.module import (
    DLT_PREFIX,
    Header,
    InferredTable,
    data_columns,
    format_files,
    render_module,
)
from dlt_contract_ops.settings.infer import code_set_thresholds

#: where the modules go, under the project, unless `--out` says otherwise
DEFAULT_OUT = "inferred_models"


@dataclass(frozen=True)
class InferredModel:
    """One module written (or, in a dry run, to be written)."""

    source: str | None
    resource: str
    table: str
    path: Path
    #: "module:Class" as a binding names it; None when the file is outside the project
    ref: str | None


@dataclass(frozen=True)
class InferReport:
    models: tuple[InferredModel, ...]
    notes: tuple[str, ...]
    #: the `[sources.<X>.contract_ops.models]` tables binding the models
    bindings: str
    config_file: Path
    written: bool
    #: queries run, per kind (`metadata`, `schema`, `coverage`: the facts), all datasets
    queries: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _Target:
    source: str | None
    target: Any  # destinations.connect.Target
    schema_name: str
    modelled: frozenset[str]


def infer_models(
    sources: Sequence[str] = (),
    *,
    all_sources: bool = False,
    pipeline: str | None = None,
    out: str | None = None,
    project_dir: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
    force: bool = False,
    code_set_max_values: int | None = None,
    code_set_min_rows: int | None = None,
) -> InferReport:
    """Write a model module for each loaded root table (with its child tables) of the
    sources (or of `pipeline`) whose resource has no model, and bind them in
    `.dlt/config.toml`. `dry_run` writes nothing. An existing module is kept unless `force`
    (ConfigError naming it, before anything is written). The code-set thresholds not given
    come from `[contract_ops.infer]` (`settings.infer.code_set_thresholds`)."""
    from dlt_contract_ops.settings.files import project_context

    with project_context(project_dir) as pdir:
        max_values, min_rows = code_set_thresholds(code_set_max_values, code_set_min_rows)
        targets = _targets(sources, all_sources, pipeline, pdir, force)
        out_dir = Path(pdir, out or DEFAULT_OUT).resolve()
        planned: list[tuple[InferredModel, str]] = []
        notes: list[str] = []
        queries: Counter[str] = Counter()
        for t in targets:
            try:
                planned += _infer_target(t, out_dir, Path(pdir).resolve(), notes,
                                         max_values, min_rows, queries)
            except NotLoadedError as exc:
                if not all_sources:
                    raise
                notes.append(f"{exc} Skipped.")  # --all: the other sources go on
    config = Path(pdir, ".dlt", "config.toml")
    bindings = write_planned(planned, out_dir, config, force=force, dry_run=dry_run)
    models = tuple(m for m, _ in planned)
    per_resource = Counter((m.source, m.resource) for m in models if m.source)
    notes += [f"resource `{r}` (source `{s}`) loads {n} tables: not bound; bind one model by "
              "hand if one fits them all" for (s, r), n in sorted(per_resource.items()) if n > 1]
    if not models:
        notes.append("no table without a model: nothing to infer")
    return InferReport(models, tuple(notes), bindings, config, written=not dry_run,
                       queries=dict(queries))


def _targets(
    sources: Sequence[str], all_sources: bool, pipeline: str | None, pdir: str, force: bool
) -> list[_Target]:
    """What to infer from; a resource with a model is left alone, except, with `force`, one
    whose model is bound by configuration (inferred again, its module overwritten)."""
    from dlt_contract_ops.settings.project import (
        declared_sources,
        load_project_settings,
        load_source_settings,
    )
    from dlt_contract_ops.sources.discovery import build_source
    from dlt_contract_ops.sources.resolve import resolve_target_checked

    if pipeline is not None:
        return [_pipeline_target(pipeline)]
    project = load_project_settings()
    names = declared_sources() if all_sources else list(sources)
    if not names:
        raise ConfigError("No source declared in `[sources.<name>.contract_ops]`: declare one "
                          "(`dlt-contract-ops init`), or pass `--pipeline NAME`.")
    out = []
    for name in names:
        settings = load_source_settings(name, project)
        built = build_source(name, settings.ref, pdir, timeout=project.source_build_timeout,
                             bound=settings.models)
        target = resolve_target_checked(settings, pdir, built)
        rebound = {r for r, _ in settings.models} if force else set()
        out.append(_Target(name, target, built.schema_name, frozenset(built.models) - rebound))
    return out


def _pipeline_target(name: str) -> _Target:
    import dlt
    from dlt.pipeline.exceptions import CannotRestorePipelineException

    from dlt_contract_ops.destinations.connect import Target, short_type

    try:
        pipeline = dlt.attach(name)
    except CannotRestorePipelineException:
        raise NotLoadedError(
            f"Pipeline `{name}` has no local state here: run it on this machine once, or "
            "declare its source and pass `-s SOURCE`."
        ) from None
    if pipeline.destination is None or not pipeline.default_schema_name:
        raise NotLoadedError(f"Pipeline `{name}` has never loaded: run it first.")
    factory = pipeline.destination
    target = Target(name, factory, short_type(factory), pipeline.dataset_name)
    return _Target(None, target, pipeline.default_schema_name, frozenset())


def _infer_target(
    t: _Target, out_dir: Path, pdir: Path, notes: list[str], max_values: int, min_rows: int,
    queries: Counter[str],
) -> list[tuple[InferredModel, str]]:
    from dlt.common.schema import Schema

    from dlt_contract_ops.destinations.connect import open_adapter
    from dlt_contract_ops.sources.loaded import seen_tables, stored_schema

    who = f"source `{t.source}`" if t.source else f"pipeline `{t.target.pipeline_name}`"
    adapter = open_adapter(t.target, Schema(t.schema_name))
    try:
        live = adapter.list_columns()
        # the project's naming finds dlt's version table; the stored schema's names the rest
        stored = stored_schema(adapter, Schema(t.schema_name).naming, t.schema_name, live)
        if stored is None:
            raise NotLoadedError(
                f"{who[0].upper()}{who[1:]} was never loaded into dataset "
                f"`{t.target.dataset_name}` ({t.target.destination_type}): no stored schema "
                f"`{t.schema_name}` there. Run its pipeline first."
            )
        try:
            schema = Schema.from_dict(stored)
        except Exception as exc:  # a stored schema dlt itself cannot read back
            raise DestinationError(
                f"The stored schema `{t.schema_name}` in dataset `{t.target.dataset_name}` "
                f"({who}) cannot be read by dlt: {exc}"
            ) from exc
        tables: Mapping[str, Any] = schema.tables
        seen = seen_tables(tables.items())
        out: list[tuple[InferredModel, str]] = []
        for name, table in tables.items():
            if name.startswith(DLT_PREFIX) or table.get("parent") or name not in seen:
                continue
            resource = str(table.get("resource") or name)
            if resource in t.modelled:
                continue
            if name not in live:
                notes.append(f"table `{name}` ({who}) is in dlt's schema but not in the "
                             "dataset: skipped")
                continue
            newest: list[str | None] = []
            measured = _Measure(adapter, schema.naming, max_values, min_rows, newest)
            gone: list[tuple[str, str]] = []
            inferred = _tree(name, tables, live, measured, gone, root=True)
            notes.extend(f"column `{c}` of table `{n}` ({who}) is in dlt's schema but not in "
                         "the dataset: left out" for n, c in gone)
            header = Header(t.target.pipeline_name, t.target.dataset_name,
                            newest[0] if newest else None, t.source)
            package = t.source or t.schema_name
            path = out_dir / package / f"{name}.py"
            text, cls = render_module(inferred, schema.naming, header)
            ref = module_ref(path, pdir)
            out.append((InferredModel(t.source, resource, name, path,
                                      f"{ref}:{cls}" if ref else None),
                        text))
        return out
    finally:
        queries.update(adapter.queries)
        adapter.close()


@dataclass
class _Measure:
    """The facts of one table (`infer.facts.table_facts`); a root table's newest load id is
    kept in `newest`."""

    adapter: Any
    naming: Any
    max_values: int
    min_rows: int
    newest: list[str | None]

    def __call__(
        self, table: str, columns: Sequence[Mapping[str, Any]], root: bool
    ) -> dict[str, ColumnFacts]:
        from dlt_contract_ops.infer.facts import table_facts

        # a list of scalars (`value` alone) is a `list[str]` field: a contract records no
        # code set inside a list that `skip_nested_types` leaves out, so none is looked for
        scalars = not root and [c["name"] for c in columns] == ["value"]
        facts, load = table_facts(
            self.adapter, table, columns, code_set_max_values=0 if scalars else self.max_values,
            code_set_min_rows=self.min_rows,
            load_column=self.naming.normalize_identifier(LOAD_ID) if root else None,
        )
        if root:
            self.newest.append(load)
        return facts


def _tree(
    name: str, tables: Mapping[str, Any], live: Mapping[str, Any], measured: _Measure,
    gone: list[tuple[str, str]], *, root: bool,
) -> InferredTable:
    """The model of table `name` and its child tables. A typed column of dlt's stored schema
    that the live table lacks (dropped behind dlt's back) is left out, and added to `gone`:
    the model describes what the table holds, and the aggregate could not count it. One
    without a type yet (no data seen: dlt made no column) stays, an `Any` field, unmeasured."""
    columns, counted = [], []
    for column in data_columns(tables[name].get("columns", {})):
        if live[name].has(column["name"]):
            counted.append(column)
        elif column.get("data_type"):
            gone.append((name, column["name"]))
            continue
        columns.append(column)
    children = tuple(
        _tree(child, tables, live, measured, gone, root=False)
        for child, t in tables.items() if t.get("parent") == name and child in live
    )
    return InferredTable(name, tuple(columns), children, measured(name, counted, root))


def write_planned(
    planned: Sequence[tuple[InferredModel, str]], out_dir: Path, config: Path, *, force: bool,
    dry_run: bool,
) -> str:
    """Write the modules (formatted) and bind them in `config`; returns the binding TOML.
    An existing module is kept unless `force`: a ConfigError naming it, nothing written.
    `dry_run` writes nothing."""
    existing = [m.path for m, _ in planned if m.path.exists()]
    if existing and not force and not dry_run:
        raise ConfigError(
            f"`{existing[0]}` exists ({len(existing)} module(s) would be overwritten): pass "
            "`--force` to overwrite, or `--out` another folder."
        )
    models = [m for m, _ in planned]
    bindings = binding_tables(models)
    if not dry_run:
        for model, text in planned:
            _write_module(model.path, text, out_dir)
        format_files([str(m.path) for m in models])
        if bindings:
            write_bindings(config, models)
    return bindings


def module_ref(path: Path, pdir: Path) -> str | None:
    """`path`'s dotted module name from the project root; None outside it, or when a part
    is not a Python identifier."""
    try:
        parts = path.with_suffix("").relative_to(pdir).parts
    except ValueError:
        return None
    return ".".join(parts) if all(p.isidentifier() for p in parts) else None


def _write_module(path: Path, text: str, out_dir: Path) -> None:
    from dlt_contract_ops.sources.project_imports import write_module

    path.parent.mkdir(parents=True, exist_ok=True)
    folder = path.parent
    while folder == out_dir or out_dir in folder.parents:  # a package, importable by its ref
        (folder / "__init__.py").touch(exist_ok=True)
        folder = folder.parent
    write_module(path, text)


def bindable(models: Sequence[InferredModel]) -> list[InferredModel]:
    """The models a binding can name: of a declared source, importable from the project, and
    the only table of their resource (one that names its table per item loads several, and a
    binding is one model per resource)."""
    count: dict[tuple[str | None, str], int] = {}
    for m in models:
        count[m.source, m.resource] = count.get((m.source, m.resource), 0) + 1
    return [m for m in models if m.source and m.ref and count[m.source, m.resource] == 1]


def binding_tables(models: Sequence[InferredModel]) -> str:
    """`[sources.<X>.contract_ops.models]` tables for the models of declared sources.

    >>> print(binding_tables([InferredModel("gh", "issues", "issues", Path("m.py"),
    ...                                     "m:Issues")]), end="")
    [sources.gh.contract_ops.models]
    issues = "m:Issues"
    """
    import tomlkit

    by_source: dict[str, list[InferredModel]] = {}
    for m in bindable(models):
        by_source.setdefault(str(m.source), []).append(m)
    out = []
    for source, group in by_source.items():
        header = ".".join(tomlkit.key(k).as_string()
                          for k in ("sources", source, "contract_ops", "models"))
        lines = [f"[{header}]"] + [
            f"{tomlkit.key(m.resource).as_string()} = {tomlkit.string(m.ref or '').as_string()}"
            for m in group
        ]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def write_bindings(config: Path, models: Sequence[InferredModel]) -> None:
    """Set each model's binding in `config` (tomlkit: the rest of the file as it was)."""
    import tomlkit

    from dlt_contract_ops.statefile import write_text

    doc = tomlkit.parse(config.read_text(encoding="utf-8")) if config.is_file() else (
        tomlkit.document())
    try:
        for m in bindable(models):
            node: Any = doc
            for key in ("sources", m.source, "contract_ops", "models"):
                if key not in node:
                    node[key] = tomlkit.table(is_super_table=key != "models")
                node = node[key]
            node[m.resource] = str(m.ref)
    except Exception as exc:  # e.g. `sources.x` is an inline table or a value
        raise ConfigError(
            f"Cannot add the model bindings to `{config}` ({exc}). Run `dlt-contract-ops "
            "models infer --dry-run` and add them by hand."
        ) from exc
    config.parent.mkdir(parents=True, exist_ok=True)
    write_text(config, tomlkit.dumps(doc))
