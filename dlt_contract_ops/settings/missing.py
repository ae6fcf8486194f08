"""What dlt could not resolve, said as a user fixes it: the TOML key, the file (config or
secrets), the environment variable. From dlt's own lookup traces
(`ConfigFieldMissingException`), so the keys are the ones dlt really tried."""

from __future__ import annotations

from typing import Any


def missing_keys(
    traces: Any, secrets: set[str], inherited_secret: bool = False
) -> list[tuple[str, bool]]:
    """(dotted TOML key, is it a secret) of every unresolved field in dlt's lookup traces.

    A trace's own `key` is provider-specific (the environment provider reports
    `SOURCES__X__API_TOKEN`), so the key is rebuilt from the trace's sections and the field.
    Embedded configurations (credentials) carry nested traces; their fields belong where
    the embedding field does (a secret's parts go to secrets.toml).
    """
    from dlt.common.configuration.exceptions import LookupTraces

    keys: list[tuple[str, bool]] = []
    for field_name, field_traces in traces.items():
        first = field_traces[0] if field_traces else None
        secret = inherited_secret or field_name in secrets
        if isinstance(first, LookupTraces):
            keys += missing_keys(first.traces, set(), secret)
            continue
        sections = [s for s in (getattr(first, "sections", None) or []) if s]
        keys.append((".".join([*sections, field_name]), secret))
    return keys


def secret_fields(exc: Exception) -> set[str]:
    from dlt.common.configuration.specs.base_configuration import is_secret_hint

    config = getattr(exc, "config", None)
    if config is None:
        return set()
    fields = type(config).get_resolvable_fields()
    return {name for name, hint in fields.items() if is_secret_hint(hint)}


def missing_config_message(what: str, exc: Exception) -> str:
    """`<what>: missing `a`, `b` in `[section]`. Set it in .dlt/secrets.toml, or the
    environment variable `SECTION__A`.`, from dlt's traces; dlt's own text, on one line,
    when its traces name no key."""
    from dlt_contract_ops.settings.files import env_name

    keys = missing_keys(getattr(exc, "traces", {}) or {}, secret_fields(exc))
    if not keys:
        return f"{what}: configuration is not set: {' '.join(str(exc).split())}"
    first, secret = keys[0]
    section = first.rpartition(".")[0]
    toml = "secrets.toml" if secret else "config.toml"
    env = env_name(first)
    if all(k.rpartition(".")[0] == section for k, _ in keys):
        # the usual case (the parts of one credentials table): name the table once
        shown = ", ".join(f"`{k.rpartition('.')[2]}`" for k, _ in keys)
        return (
            f"{what}: missing {shown} in `[{section}]`. Set {'it' if len(keys) == 1 else 'them'}"
            f" in .dlt/{toml}, or as environment variables (`{env}`, ...)."
        )
    shown = ", ".join(f"`{k}`" for k, _ in keys)
    return (
        f"{what}: missing configuration {shown}. Set `{first.rpartition('.')[2]}` in the "
        f"`[{section}]` table of .dlt/{toml}, or the environment variable `{env}`."
    )
