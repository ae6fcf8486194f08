"""Per-sink options from `[contract_ops.alert_sink.<name>]`, with where each value came from.

dlt's provider chain is read in its own order (environment variables, then `secrets.toml`,
then `config.toml`; the first provider that has a key wins), but key by key and with
provenance, so that:

- a typo'd option can be reported with the file it sits in;
- an option a sink declares secret (Sentry's `dsn`, the webhook `url`) is accepted only from a
  provider that holds secrets, never from `config.toml`, which is usually committed.

The files are the ones `settings.files` reads (a broken TOML file is an error naming it, never
skipped).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dlt_contract_ops.errors import AlertSinkError, SinkOptionError
from dlt_contract_ops.settings.files import dig, env_name, locate, toml_files

SINK_SECTION = "contract_ops.alert_sink"

__all__ = ["SINK_SECTION", "OptionValue", "SinkOptionError", "env_name", "locate"]


@dataclass(frozen=True)
class OptionValue:
    """One option of one sink: its value, where it was set, and whether that place holds
    secrets (the environment and `secrets.toml` do; `config.toml` does not)."""

    value: Any
    origin: str
    secret: bool


def table_name(sink: str) -> str:
    """`[contract_ops.alert_sink.<sink>]`, as a user writes it."""
    return f"[{SINK_SECTION}.{sink}]"


def _coerce_env(raw: str) -> Any:
    """An environment value as dlt users write it: JSON (`true`, `5`, `{...}`) or a string."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _env_options(sink: str) -> dict[str, OptionValue]:
    prefix = env_name(f"{SINK_SECTION}.{sink}") + "__"
    out: dict[str, OptionValue] = {}
    for var, raw in os.environ.items():
        if var.startswith(prefix) and "__" not in var[len(prefix):]:
            out[var[len(prefix):].lower()] = OptionValue(
                _coerce_env(raw), f"environment variable {var}", secret=True
            )
    return out


def read_sink_options(sink: str) -> dict[str, OptionValue]:
    """Every option set for `sink`, first provider wins, each with its origin.

    >>> read_sink_options("sentry")  # doctest: +SKIP
    {'dsn': OptionValue(value='https://…', origin='.dlt/secrets.toml', secret=True)}
    """
    out = _env_options(sink)
    dotted = f"{SINK_SECTION}.{sink}"
    for f in toml_files():
        found, table = dig(f.doc, dotted)
        if not found:
            continue
        if not isinstance(table, Mapping):
            raise AlertSinkError(
                f"`{dotted}` in {f.shown} must be a table (`{table_name(sink)}`), got {table!r}."
            )
        for key, value in table.items():
            if key not in out:
                out[key] = OptionValue(value, f.shown, secret=f.secret)
    return out


def configured_sink_tables() -> dict[str, str]:
    """Every `[contract_ops.alert_sink.<name>]` table found, name -> where it was found."""
    found: dict[str, str] = {}
    head = env_name(SINK_SECTION) + "__"
    for var in os.environ:
        if var.startswith(head):
            name = var[len(head):].split("__", 1)[0].lower()
            found.setdefault(name, f"environment variable {var}")
    for f in toml_files():
        present, tables = dig(f.doc, SINK_SECTION)
        if present and isinstance(tables, Mapping):
            for name in tables:
                found.setdefault(str(name), f.shown)
    return found


# -- coercion helpers for sink constructors ------------------------------------------------
# Values from the environment arrive as strings; TOML gives typed values. Sinks call these
# so a wrong type fails at construction (and therefore in `validate`) naming the option.

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def as_bool(value: Any, sink: str, option: str) -> bool:
    """`value` as a bool: TOML booleans and `true`/`false`/`yes`/`no`/`1`/`0` strings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise SinkOptionError(
        f"Option `{option}` of alert sink '{sink}' must be true or false, got {value!r} "
        f"(in `{table_name(sink)}`).",
        sink,
        option,
    )


def as_number(value: Any, sink: str, option: str, *, minimum: float = 0.0) -> float:
    """`value` as a float >= `minimum` (strings from the environment are parsed)."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise SinkOptionError(
            f"Option `{option}` of alert sink '{sink}' must be a number >= {minimum:g}, got "
            f"{value!r} (in `{table_name(sink)}`).",
            sink,
            option,
        )
    return float(value)


def as_text(value: Any, sink: str, option: str) -> str:
    """`value` as a non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise SinkOptionError(
            f"Option `{option}` of alert sink '{sink}' must be a non-empty string, got "
            f"{value!r} (in `{table_name(sink)}`).",
            sink,
            option,
        )
    return value.strip()


def as_choice(value: Any, sink: str, option: str, choices: tuple[str, ...]) -> str:
    """`value` as one of `choices`."""
    text = as_text(value, sink, option)
    if text not in choices:
        raise SinkOptionError(
            f"Option `{option}` of alert sink '{sink}' must be one of "
            f"{', '.join(repr(c) for c in choices)}, got {value!r} (in `{table_name(sink)}`).",
            sink,
            option,
        )
    return text
