"""Typed values of the settings: names, text, fractions, numbers, whole numbers, durations and
seconds, each read with an error that names the key where a user finds it (`where`)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BeforeValidator, Field, Strict

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings.duration import parse_duration
from dlt_contract_ops.settings.files import env_name, locate

_Spec = TypeVar("_Spec")
_T = TypeVar("_T")


def where(key: str) -> str:
    """`key` as a user finds it: the TOML table and key, the file that sets it, and the
    environment variable."""
    section, _, name = key.rpartition(".")
    found = locate(key)
    if found and found.startswith("environment variable"):
        return f"`{name}` in `[{section}]` (environment variable `{env_name(key)}`)"
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


def as_sink_names(value: Any, key: str) -> tuple[str, ...]:
    """`as_names` for sink names, which hold no comma and no space: `"logging,webhook"` (the
    environment's usual list) is refused naming the JSON list to write instead.

    >>> as_sink_names('["logging", "webhook"]', "contract_ops.alert_sinks")
    ('logging', 'webhook')
    """
    names = as_names(value, key)
    for name in names:
        parts = [p for p in re.split(r"[,\s]+", name) if p]
        if parts != [name]:
            listed = json.dumps(parts)
            raise ConfigError(
                f"{where(key)} names one sink {name!r}: list each sink on its own, "
                f"`{key.rpartition('.')[2]} = {listed}`, in the environment as JSON: "
                f"`{env_name(key)}='{listed}'`."
            )
    return names


def as_text(value: Any, key: str) -> str | None:
    """A string setting; None when unset or empty."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where(key)} must be a string, got {value!r}.")
    return value


def _not_a_bool(value: Any) -> Any:
    if isinstance(value, bool):  # pydantic reads `true` as 1.0; a setting must not
        raise ValueError("a boolean is not a number")
    return value


@dataclass(frozen=True)
class Typed(Generic[_T]):
    """A setting's type as pydantic checks it (`annotation`), and the one-line error naming
    the key (`message`, with `{key}` and `{value!r}`) when a value is not of it.

    >>> WHOLE.read(3, "`n`"), FRACTION.read("0.5", "`f`")
    (3, 0.5)
    >>> WHOLE.read(True, "`n`")
    Traceback (most recent call last):
    dlt_contract_ops.errors.ConfigError: `n` must be a whole number >= 1, got True.
    """

    annotation: Any
    message: str

    def read(self, value: Any, named: str) -> _T:
        from pydantic import TypeAdapter, ValidationError

        try:
            out: _T = TypeAdapter(self.annotation).validate_python(value)
        except ValidationError:
            raise ConfigError(self.message.format(key=named, value=value)) from None
        return out

    def at(self, value: Any, key: str) -> _T:
        """`read`, naming the dotted `key` as a user finds it (`where`): a `declare.Key`'s
        reader."""
        return self.read(value, where(key))


_NUMBER = Annotated[float, BeforeValidator(_not_a_bool), Field(allow_inf_nan=False)]
#: a number in [0, 1] (thresholds, confidences, shares)
FRACTION: Typed[float] = Typed(
    Annotated[_NUMBER, Field(ge=0, le=1)],
    "{key} = {value!r} must be a fraction between 0 and 1, e.g. 0.2.",
)
#: a finite number >= 0
NON_NEGATIVE: Typed[float] = Typed(
    Annotated[_NUMBER, Field(ge=0)], "{key} must be a number >= 0, got {value!r}."
)
#: a whole number >= 1 (an int in the file: `5.0` and `"5"` are not)
WHOLE: Typed[int] = Typed(
    Annotated[int, Strict(), Field(ge=1)], "{key} must be a whole number >= 1, got {value!r}."
)
#: a whole number >= 0 (an int in the file)
COUNT: Typed[int] = Typed(
    Annotated[int, Strict(), Field(ge=0)], "{key} must be a whole number >= 0, got {value!r}."
)


def _duration(value: Any, key: str) -> timedelta:
    return parse_duration(value, where(key))


def _seconds(value: Any, key: str, default: float) -> float:
    """A duration setting in seconds; `default` when unset."""
    return default if value is None else seconds(value, key)


def seconds(value: Any, key: str) -> float:
    """A duration setting in seconds."""
    return _duration(value, key).total_seconds()


def flag(value: Any, key: str) -> bool:
    """A boolean setting, as dlt coerced it (hint `Optional[bool]`: `"false"` from the
    environment is False, a value dlt cannot read is its error, naming the key)."""
    return bool(value)


def as_bindings(value: Any, section: str) -> tuple[tuple[str, str], ...]:
    """`[sources.<X>.contract_ops.models]` as (resource, "module:Class") pairs."""
    if value is None:
        return ()
    if isinstance(value, str):  # from the environment, as JSON
        with contextlib.suppress(ValueError):  # not JSON: the error below names the key
            value = json.loads(value)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where(section)} must be a table of `resource = \"module:Class\"`.")
    out = []
    for resource, ref in value.items():
        text = as_text(ref, f"{section}.{resource}") or ""
        module, _, attr = text.partition(":")
        if not module.strip() or not attr.strip():
            raise ConfigError(
                f'{where(f"{section}.{resource}")} is "{text}": write it as `module:Class`, '
                'e.g. "inferred_models.shop.orders:Orders".'
            )
        out.append((str(resource), text))
    return tuple(out)

