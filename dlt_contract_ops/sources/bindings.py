"""Models bound to resources by configuration, `[sources.<X>.contract_ops.models]`
(`resource = "module:Class"`): a resource whose code a team does not own (a verified source)
is guarded as if it declared `columns=Class`. `resource_model` is the one place a resource's
model is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dlt_contract_ops.dlt_private as dlt_private
from dlt_contract_ops.errors import SourceImportError


def resource_model(
    resource: Any, bound: Mapping[str, type[Any]]
) -> type[Any] | None:
    """The Pydantic model of a dlt resource: the one bound to it by configuration, else its
    own `columns=` model (`resource._hints["original_columns"]`); None without one. The one
    place a resource's model is read (reconcile, contracts, the gate)."""
    model = bound.get(resource.name)
    if model is None:
        hints = dlt_private.resource_hints(resource)
        model = hints.get("original_columns") if hints else None
    return model if isinstance(model, type) and hasattr(model, "model_fields") else None


def configured_bindings(source: str) -> tuple[tuple[str, str], ...]:
    """`[sources.<source>.contract_ops.models]` alone, through dlt's providers, for a caller
    that needs no other setting of the source (the gate: its table may hold no `ref`)."""
    import dlt

    from dlt_contract_ops.settings.project import source_section
    from dlt_contract_ops.settings.values import as_bindings

    key = f"{source_section(source)}.models"
    return as_bindings(dlt.config.get(key), key)


def import_bound_models(
    source: str, bound: Sequence[tuple[str, str]], project_dir: str
) -> dict[str, type[Any]]:
    """The models `[sources.<source>.contract_ops.models]` binds, by resource, imported from
    the project; SourceImportError naming the key when one cannot be imported."""
    from dlt_contract_ops.settings.project import source_section
    from dlt_contract_ops.sources.project_imports import _import_module

    out: dict[str, type[Any]] = {}
    for resource, ref in bound:
        module_name, _, attr = ref.partition(":")
        key = f"`{resource}` in `[{source_section(source)}.models]`"
        try:
            obj: Any = _import_module(module_name, project_dir)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except Exception as exc:
            raise SourceImportError(
                f"Cannot import model `{ref}` ({key}) from `{project_dir}`: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not (isinstance(obj, type) and hasattr(obj, "model_fields")):
            raise SourceImportError(
                f"`{ref}` ({key}) is not a Pydantic model class: point it at one."
            )
        out[resource] = obj
    return out
