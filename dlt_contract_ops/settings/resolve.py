"""Resolve a configspec at exactly its sections through dlt's providers: a value found higher up
by dlt's walk belongs to another table and is dropped; a value dlt cannot coerce is a
ConfigError naming the key and the file."""

from __future__ import annotations

from typing import Any

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings.values import (
    _Spec,
    where,
)


# -- resolution -----------------------------------------------------------------------------
def resolve_exact(spec: _Spec, sections: tuple[str, ...]) -> _Spec:
    """Resolve `spec` at exactly `sections`; values found higher up by dlt's walk are
    dropped (they belong to other tables)."""
    from dlt.common.configuration import resolve_configuration
    from dlt.common.configuration.specs import BaseConfiguration
    from dlt.common.configuration.utils import get_resolved_traces

    assert isinstance(spec, BaseConfiguration)
    log = get_resolved_traces()
    start = len(log.resolved_traces)
    resolved = resolve_configuration(spec, sections=sections, accept_partial=True)
    embedded = {
        id(v): (*sections, k) for k, v in resolved.items() if isinstance(v, BaseConfiguration)
    }
    for trace in log.resolved_traces[start:]:
        own = sections if trace.config is resolved else embedded.get(id(trace.config))
        if own is not None and tuple(trace.sections) != own:
            # found higher up (a `[destination]` table for a source's `destination`); the
            # exact key may still sit in a provider dlt did not ask after that first hit
            setattr(trace.config, trace.key, _exact_value(trace.key, trace.hint, own))
    del log.resolved_traces[start:]  # our lookups are not a pipeline's config trace
    return resolved


def _exact_value(key: str, hint: Any, sections: tuple[str, ...]) -> Any:
    """`key` at exactly `sections`, from the first provider that has it (no walk-up)."""
    import dlt
    from dlt.common.configuration.specs.base_configuration import extract_inner_hint
    from dlt.common.configuration.utils import deserialize_value
    from dlt.common.typing import is_any_type

    inner = extract_inner_hint(hint)
    for provider in dlt.config.config_providers:
        try:
            value, _ = provider.get_value(key, hint, None, *sections)
        except Exception:  # a provider that cannot read the key has nothing for us
            continue
        if value is not None:
            return value if is_any_type(inner) else deserialize_value(key, value, inner)
    return None


def _resolve(spec: _Spec, sections: tuple[str, ...]) -> _Spec:
    """`resolve_exact`, a value dlt cannot coerce being a ConfigError naming key and file."""
    from dlt.common.configuration.exceptions import ConfigurationValueError

    try:
        return resolve_exact(spec, sections)
    except ConfigurationValueError as exc:
        key = getattr(exc, "field_name", None)
        dotted = ".".join((*sections, key)) if key else ".".join(sections)
        raise ConfigError(f"Cannot read {where(dotted)}: {exc}") from None
