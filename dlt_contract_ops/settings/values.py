"""Typed values of the settings: names, text, fractions, durations and seconds, each read with an
error that names the key where a user finds it (`where`)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, TypeVar

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings.duration import parse_duration
from dlt_contract_ops.settings.files import env_name, locate

_Spec = TypeVar("_Spec")


def where(key: str) -> str:
    """`key` as a user finds it: the TOML table and key, the file that sets it, and the
    environment variable."""
    section, _, name = key.rpartition(".")
    found = locate(key)
    at = f" ({found})" if found else ""
    return f"`{name}` in `[{section}]`{at} (environment variable `{env_name(key)}`)"


# -- typed values ---------------------------------------------------------------------------
def as_names(value: Any, key: str) -> tuple[str, ...]:
    """A list of names; from the environment as JSON or as one bare name."""
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            f"{where(key)} must be a list of strings, e.g. `{key.rpartition('.')[2]} = "
            f'["ingested_by"]`; got {value!r}.'
        )
    return tuple(value)


def as_text(value: Any, key: str) -> str | None:
    """A string setting; None when unset or empty."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where(key)} must be a string, got {value!r}.")
    return value


def as_fraction(value: Any, key: str) -> float:
    """A number in [0, 1]."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if isinstance(value, bool) or not 0.0 <= number <= 1.0:
        raise ConfigError(f"{where(key)} = {value!r} must be a fraction between 0 and 1, e.g. 0.2.")
    return number


def _duration(value: Any, key: str) -> timedelta:
    return parse_duration(value, where(key))


def _seconds(value: Any, key: str, default: float) -> float:
    """A duration setting in seconds; `default` when unset."""
    return default if value is None else _duration(value, key).total_seconds()
