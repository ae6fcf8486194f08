"""Per-sink options from `[contract_ops.alert_sink.<name>]`, with where each value came from.

dlt's provider chain is read in its own order (environment variables, then `secrets.toml`,
then `config.toml`; the first provider that has a key wins), but key by key and with
provenance, so that:

- a typo'd option can be reported with the file it sits in;
- an option a sink declares secret (Sentry's `dsn`, the webhook `url`) is accepted only from a
  provider that holds secrets, never from `config.toml`, which is usually committed.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import AlertSinkError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SINK_SECTION = "contract_ops.alert_sink"


class SinkOptionError(AlertSinkError):
    """One option of one sink has a value the sink cannot use."""

    def __init__(self, message: str, sink: str, option: str) -> None:
        super().__init__(message)
        self.sink = sink
        self.option = option


@dataclass(frozen=True)
class OptionValue:
    """One option of one sink: its value, where it was set, and whether that place holds
    secrets (the environment and `secrets.toml` do; `config.toml` does not)."""

    value: Any
    origin: str
    secret: bool


def env_name(key: str) -> str:
    """The environment variable dlt reads for the dotted `key`."""
    return "__".join(key.upper().split("."))


def table_name(sink: str) -> str:
    """`[contract_ops.alert_sink.<sink>]`, as a user writes it."""
    return f"[{SINK_SECTION}.{sink}]"


def _project_dir() -> Path:
    import dlt

    return Path(os.path.abspath(dlt.current.run_context().run_dir))


def _display(path: Path) -> str:
    """`path` relative to the project when inside it (`.dlt/secrets.toml`), else absolute."""
    try:
        return str(path.relative_to(_project_dir()))
    except ValueError:
        return str(path)


def _dig(doc: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    node: Any = doc
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def provider_files(provider: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(display path, parsed document) of each file a TOML provider was loaded from."""
    base = _project_dir()
    for location in getattr(provider, "locations", None) or []:
        path = Path(location)
        path = path if path.is_absolute() else (base / path)
        if path.is_file():
            try:
                with path.open("rb") as fh:
                    yield _display(path.resolve()), tomllib.load(fh)
            except (OSError, tomllib.TOMLDecodeError):
                continue


def toml_providers() -> Iterator[tuple[Any, Mapping[str, Any]]]:
    import dlt

    for provider in dlt.config.config_providers:
        doc = getattr(provider, "_config_doc", None)
        if isinstance(doc, Mapping):
            yield provider, doc


def _origin(provider: Any, dotted: str) -> str:
    """The file of `provider` that sets `dotted` (the project file before the global one)."""
    for shown, doc in provider_files(provider):
        if _dig(doc, dotted)[0]:
            return shown
    return str(getattr(provider, "name", "configuration"))


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
    for provider, doc in toml_providers():
        found, table = _dig(doc, dotted)
        if not found:
            continue
        if not isinstance(table, Mapping):
            raise AlertSinkError(
                f"`{dotted}` in {_origin(provider, dotted)} must be a table "
                f"(`{table_name(sink)}`), got {table!r}."
            )
        for key, value in table.items():
            if key not in out:
                out[key] = OptionValue(
                    value,
                    _origin(provider, f"{dotted}.{key}"),
                    secret=bool(getattr(provider, "supports_secrets", False)),
                )
    return out


def configured_sink_tables() -> dict[str, str]:
    """Every `[contract_ops.alert_sink.<name>]` table found, name -> where it was found."""
    found: dict[str, str] = {}
    head = env_name(SINK_SECTION) + "__"
    for var in os.environ:
        if var.startswith(head):
            name = var[len(head):].split("__", 1)[0].lower()
            found.setdefault(name, f"environment variable {var}")
    for provider, doc in toml_providers():
        present, tables = _dig(doc, SINK_SECTION)
        if present and isinstance(tables, Mapping):
            for name in tables:
                found.setdefault(str(name), _origin(provider, f"{SINK_SECTION}.{name}"))
    return found


def locate(dotted: str) -> str | None:
    """Where the dotted `key` is set: an environment variable or a TOML file; None if unset."""
    var = env_name(dotted)
    if var in os.environ:
        return f"environment variable {var}"
    for provider, doc in toml_providers():
        if _dig(doc, dotted)[0]:
            return _origin(provider, dotted)
    return None


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
