"""Import a user's source from its `module:attribute` ref and build it once.

The Pydantic model lives only on the resource (its hints, `dlt_private.resource_hints`): dlt
does not persist it in the stored schema, so reconcile imports the user's code."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable
from dlt_contract_ops.core.naming import expected_table, nested_tables
from dlt_contract_ops.errors import SourceConfigMissingError, SourceImportError
from dlt_contract_ops.settings.project import DEFAULT_SOURCE_BUILD_TIMEOUT
from dlt_contract_ops.sources.bindings import import_bound_models, resource_model
from dlt_contract_ops.sources.bounded_build import bounded_build
from dlt_contract_ops.sources.project_imports import _import_module

log = logging.getLogger("dlt_contract_ops")


@dataclass(frozen=True)
class ModelledResource:
    """A resource with a model, as declared: the raw table name, not yet normalized."""

    resource: str
    table_name: str
    write_disposition: str


class Deferred:
    """The real source of a cached one (`source_cache`), built on first need: what the cache
    holds (tables, naming, notes) never needs it; the models and the dlt object do."""

    def __init__(self, build: Callable[[], BuiltSource]) -> None:
        self._build = build
        self._built: BuiltSource | None = None

    @property
    def done(self) -> bool:
        return self._built is not None

    def get(self) -> BuiltSource:
        if self._built is None:
            self._built = self._build()
        return self._built


class DeferredModels(Mapping[str, type[Any]]):
    """The models of a cached source: which resources have one is known from the cache
    (`in`, iteration, `len` build nothing); a model itself builds the real source."""

    def __init__(self, names: Sequence[str], real: Deferred) -> None:
        self._names = tuple(names)
        self._real = real

    def __getitem__(self, key: str) -> type[Any]:
        if key not in self._names:
            raise KeyError(key)
        return self._real.get().models[key]

    def __contains__(self, key: object) -> bool:
        return key in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@dataclass(frozen=True)
class BuiltSource:
    """A source built once for a run: its schema naming and the model of each resource.

    A source read from the cache (`sources.cache.cached_source`) carries `real`: its models
    and `obj` build the source on first access, so a detector that needs them gets exactly
    what a build gives, and one that needs only the expected columns never builds it.
    """

    name: str
    schema_name: str
    naming: Any  # dlt NamingConvention
    tables: tuple[ExpectedTable, ...]
    #: resource name -> model
    models: Mapping[str, type[Any]] = field(default_factory=dict, compare=False)
    notes: tuple[str, ...] = ()
    resources: tuple[ModelledResource, ...] = ()
    #: the source is a standalone @dlt.resource (not a @dlt.source)
    standalone: bool = False
    #: the DltSource or DltResource itself (the gate extracts from it); see `obj`
    source_obj: Any = field(default=None, compare=False, repr=False)
    #: a cached source: builds the real one on first need (None: this is the real one)
    real: Deferred | None = field(default=None, compare=False, repr=False)
    #: a cached source: `code_sets` of each table, as the cache holds them (None: from models)
    codes: Mapping[str, Mapping[str, tuple[str, ...]]] | None = field(
        default=None, compare=False, repr=False
    )
    #: the child tables dlt lands the models' list fields in (`core.naming.nested_tables`)
    nested: tuple[ExpectedTable, ...] = ()

    @property
    def obj(self) -> Any:
        """The DltSource or DltResource (a cached source builds it on first access)."""
        return self.real.get().source_obj if self.real is not None else self.source_obj

    def code_sets(self, expected: ExpectedTable) -> dict[str, tuple[str, ...]]:
        """The declared code sets (closed vocabularies) of `expected`'s columns, by column:
        what the load profiles count value by value. A cached source answers from the cache
        (no build); else they are read from the resource's model. {} when the model declares
        none, or its declarations cannot be read (the counts decide then)."""
        if self.codes is not None and expected.table in self.codes and any(
            t is expected or t == expected for t in self._by_table.get(expected.table, ())
        ):
            return dict(self.codes[expected.table])
        return declared_code_sets(self, expected)

    @cached_property
    def _by_table(self) -> dict[str, list[ExpectedTable]]:
        """`tables` by name: one look-up per table, not tables x tables `__eq__` calls."""
        out: dict[str, list[ExpectedTable]] = {}
        for t in self.tables:
            out.setdefault(t.table, []).append(t)
        return out

    def for_destination(self, capabilities: Any) -> BuiltSource:
        """The source named as dlt names it when loading into a destination with these
        capabilities: dlt shortens identifiers longer than the destination allows (PostgreSQL:
        63), so a long field lands under a shortened name with a hash tag.

        Returns `self` when the destination imposes no shorter limit or no name exceeds it.
        """
        limits = [
            getattr(capabilities, "max_identifier_length", None),
            getattr(capabilities, "max_column_identifier_length", None),
        ]
        max_length = min((n for n in limits if n), default=None)
        if not max_length or getattr(self.naming, "max_length", None) == max_length:
            return self
        if getattr(self.naming, "max_length", None) is None and all(
            len(name) <= max_length for t in self.tables for name in (t.table, *t.names)
        ):
            return self  # dlt shortens only what exceeds the limit: nothing would change
        naming = type(self.naming)(max_length=max_length)
        tables = [
            expected_table(
                r.resource, r.table_name, self.models[r.resource], naming, r.write_disposition
            )
            for r in self.resources
        ]
        merged, _ = _merge_shared_tables(tables)
        return replace(self, naming=naming, tables=merged, codes=None,
                       nested=_nested(merged, self.models, naming))


def declared_code_sets(built: BuiltSource, expected: ExpectedTable) -> dict[str, tuple[str, ...]]:
    """`BuiltSource.code_sets`, read from the resource's model."""
    model = built.models.get(expected.resource)
    if model is None:
        return {}
    from dlt_contract_ops.contracts.extract import contract_from_model

    try:
        contract = contract_from_model(built.name, expected, model, built.naming)
    except Exception as exc:  # a declaration the extraction refuses: counts decide then
        log.debug("code sets of `%s` unreadable: %s", expected.resource, exc)
        return {}
    return {c.name: c.categories for c in contract.columns if c.categories}


def _missing_config_message(source: str, exc: Exception) -> str:
    from dlt_contract_ops.settings.missing import missing_config_message

    return missing_config_message(f"Source `{source}` cannot be built", exc)


def _build(obj: Any, source: str, ref: str) -> Any:
    import dlt
    from dlt.common.configuration.exceptions import ConfigFieldMissingException
    from dlt.extract import DltResource, DltSource

    if isinstance(obj, DltSource | DltResource):
        return obj
    if not callable(obj):
        raise SourceImportError(
            f"`{ref}` (source `{source}`) is a {type(obj).__name__}; point `ref` at a "
            "@dlt.source function, a DltSource or a @dlt.resource."
        )
    try:
        built = obj()
    except ConfigFieldMissingException as exc:
        raise SourceConfigMissingError(_missing_config_message(source, exc)) from exc
    except Exception as exc:
        raise SourceImportError(f"Calling `{ref}` for source `{source}` failed: {exc}") from exc
    if not isinstance(built, DltSource | DltResource):
        raise SourceImportError(
            f"`{ref}` (source `{source}`) returned {type(built).__name__}, not a dlt source "
            "or resource."
        )
    del dlt
    return built


def _ref_hint(obj: Any, missing: str, prefix: str) -> str:
    """A sentence for a missing attribute: "Did you mean `<prefix><name>`?" naming the
    attribute of `obj` closest to `missing` that is a dlt source or resource; else the ones
    `obj` has; else nothing."""
    from dlt.extract import DltResource, DltSource
    from dlt.extract.reference import SourceFactory

    from dlt_contract_ops.errors import did_you_mean

    names = []
    for attr in dir(obj):
        if attr.startswith("_"):
            continue
        value = getattr(obj, attr, None)
        if isinstance(value, SourceFactory | DltSource | DltResource):
            names.append(attr)
    if not names:
        return ""
    return did_you_mean(missing, names, show=lambda n: f"`{prefix}{n}`") or (
        f" Its dlt sources and resources: {', '.join(f'`{prefix}{n}`' for n in names)}."
    )


def build_source(
    name: str, ref: str, project_dir: str, *, timeout: float = DEFAULT_SOURCE_BUILD_TIMEOUT,
    bound: Sequence[tuple[str, str]] = (),
) -> BuiltSource:
    """Import `ref` ("module:attribute") under `project_dir`, build it once, read its models
    (`bound`: those bound by configuration, `sources.bindings`); SourceBuildTimeoutError when
    that takes over `timeout` seconds (`bounded_build`)."""
    return bounded_build(lambda: _build_source(name, ref, project_dir, bound), name, ref,
                         timeout)


def _build_source(
    name: str, ref: str, project_dir: str, bound: Sequence[tuple[str, str]] = ()
) -> BuiltSource:
    from dlt.common.schema import Schema
    from dlt.extract import DltResource

    module_name, _, attr = ref.partition(":")
    try:
        module = _import_module(module_name, project_dir)
    except Exception as exc:
        raise SourceImportError(
            f"Cannot import `{module_name}` for source `{name}` (ref `{ref}`) from "
            f"`{project_dir}`: {type(exc).__name__}: {exc}"
        ) from exc
    obj: Any = module
    done: list[str] = []
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise SourceImportError(
                f"`{module_name}` has no attribute `{attr}` (source `{name}`, ref `{ref}`)."
                + _ref_hint(obj, part, ":".join([module_name, ".".join([*done, ""])]))
            )
        obj = getattr(obj, part)
        done.append(part)
    built = _build(obj, name, ref)

    if isinstance(built, DltResource):
        schema = Schema(built.source_name or built.name)
        resources = {built.name: built}
    else:
        schema = built.schema
        resources = dict(built.selected_resources.items())

    tables: list[ExpectedTable] = []
    models: dict[str, type[Any]] = {}
    modelled: list[ModelledResource] = []
    notes: list[str] = []
    bound_models = import_bound_models(name, bound, project_dir)
    notes += [f"`{r}` in `[sources.{name}.contract_ops.models]`: no such resource"
              for r in bound_models if r not in resources]
    for res_name, resource in resources.items():
        model = resource_model(resource, bound_models)
        if model is None:
            notes.append(f"resource `{res_name}` has no Pydantic model: skipped")
            continue
        table_name = resource.table_name
        if callable(table_name):
            notes.append(
                f"resource `{res_name}` sets its table name per item: skipped (no fixed table)"
            )
            continue
        disposition = resource.write_disposition
        if isinstance(disposition, dict):
            disposition = disposition.get("disposition", "append")
        spec = ModelledResource(res_name, str(table_name), str(disposition))
        tables.append(
            expected_table(res_name, spec.table_name, model, schema.naming, spec.write_disposition)
        )
        models[res_name] = model
        modelled.append(spec)
    merged, merge_notes = _merge_shared_tables(tables)
    return BuiltSource(
        nested=_nested(merged, models, schema.naming),
        name=name,
        schema_name=schema.name,
        naming=schema.naming,
        tables=merged,
        models=models,
        notes=tuple(notes + merge_notes),
        resources=tuple(modelled),
        standalone=isinstance(built, DltResource),
        source_obj=built,
    )


def _nested(
    tables: tuple[ExpectedTable, ...], models: Mapping[str, type[Any]], naming: Any
) -> tuple[ExpectedTable, ...]:
    return tuple(n for t in tables for n in nested_tables(t, models[t.resource], naming))


def _merge_shared_tables(
    tables: list[ExpectedTable],
) -> tuple[tuple[ExpectedTable, ...], list[str]]:
    """One ExpectedTable per destination table.

    dlt lands every resource that names the same table in that one table, so each resource's
    columns are expected there: diffing them one model at a time would report the other
    models' columns as drift (and sample the table once per resource). The table is diffed
    once, against the union of the models, and findings name the first resource.
    """
    by_table: dict[str, list[ExpectedTable]] = {}
    for table in tables:
        by_table.setdefault(table.table, []).append(table)
    merged: list[ExpectedTable] = []
    notes: list[str] = []
    for table_name, group in by_table.items():
        first = group[0]
        if len(group) == 1:
            merged.append(first)
            continue
        columns: dict[str, ExpectedColumn] = {}
        for table in group:
            for column in table.columns:
                columns.setdefault(column.name, column)
        merged.append(replace(first, columns=tuple(columns.values())))
        names = ", ".join(f"`{t.resource}`" for t in group)
        notes.append(
            f"resources {names} share table `{table_name}`: diffed once against the union of "
            f"their models (findings name `{first.resource}`)"
        )
    return tuple(merged), notes
