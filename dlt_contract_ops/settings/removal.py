"""Removal detection's settings: the one declaration of its keys, their types and defaults.

`RemovalSettings` declares each key once, with its type and default. Everything else is made
from it: its keys as a table's (`removal_keys`: how a value given as text or a number is read,
by the field's type), so the dlt spec of `[contract_ops.removal]` and
`[sources.<X>.contract_ops.removal]` (`settings.specs`: which keys a table may hold), and the
overrides a caller passes to a run (`RemovalOverrides`, checked once).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Optional

from dlt_contract_ops.core.removal import (
    DEFAULT_BASELINE_THRESHOLD,
    DEFAULT_BASELINE_WINDOW,
    DEFAULT_RECENT_THRESHOLD,
    DEFAULT_RECENT_WINDOW,
)
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings.declare import BOOL, INT, RAW, Key
from dlt_contract_ops.settings.duration import parse_duration
from dlt_contract_ops.settings.values import COUNT, FRACTION, where


@dataclass(frozen=True)
class RemovalSettings:
    """Windows and thresholds of removal detection (defaults: the `DEFAULT_*` constants)."""

    recent_window: timedelta = DEFAULT_RECENT_WINDOW
    baseline_window: timedelta = DEFAULT_BASELINE_WINDOW
    baseline_threshold: float = DEFAULT_BASELINE_THRESHOLD
    recent_threshold: float = DEFAULT_RECENT_THRESHOLD
    #: sum the windows from the load profiles (a repeat sweep reads only new loads); False:
    #: one coverage aggregate over both windows of every table, every sweep
    from_profiles: bool = True
    #: with `from_profiles`, a table whose live size (the catalog's estimate) is under this
    #: many rows is scanned, not profiled (`core.profile_choice`); None: the destination's
    #: own block (DuckDB's row group), 0: profiles for every table
    profiles_min_rows: int | None = None

    @staticmethod
    def read(values: Mapping[str, Any], name_of: Callable[[str], str]) -> dict[str, Any]:
        """`values` read into the fields' types (a None value is unset: left out);
        ConfigError naming the key through `name_of(key)` for an unknown key or a bad value."""
        types = _field_types()
        out: dict[str, Any] = {}
        for key, value in values.items():
            if value is None:
                continue
            kind = types.get(key)
            if kind is None:
                raise ConfigError(f"Unknown removal setting {name_of(key)}.")
            out[key] = _READERS[kind](value, name_of(key))
        return out

    def overridden(
        self, values: Mapping[str, Any], name_of: Callable[[str], str]
    ) -> RemovalSettings:
        """These settings with `values` applied; `name_of(key)` names a key in errors."""
        return replace(self, **self.read(values, name_of))


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{name} = {value!r} must be true or false.")
    return value


_READERS: dict[Any, Callable[[Any, str], Any]] = {
    timedelta: parse_duration,
    float: FRACTION.read,
    bool: _bool,
    Optional[int]: COUNT.read,  # noqa: UP045 (compared with the resolved hint)
}


def _field_types() -> dict[str, Any]:
    hints = typing.get_type_hints(RemovalSettings)
    return {f.name: hints[f.name] for f in fields(RemovalSettings)}


#: the keys of a removal table, in declaration order
REMOVAL_FIELDS = tuple(f.name for f in fields(RemovalSettings))


def removal_keys() -> dict[str, Key]:
    """Each field as a key of a removal table (`settings.declare`), read by its type and
    named where a user finds it. dlt coerces booleans and whole numbers; durations and
    fractions keep their raw value (`RAW`), whose grammar is ours."""
    own = {bool: BOOL, Optional[int]: INT}  # noqa: UP045 (the resolved hint)
    return {k: Key(partial(_read_at, _READERS[t]), own.get(t, RAW))
            for k, t in _field_types().items()}


def _read_at(reader: Callable[[Any, str], Any], value: Any, key: str) -> Any:
    return reader(value, where(key))


class RemovalOverrides(Mapping[str, Any]):
    """A caller's removal overrides, checked (read into the fields' types) once: the keys
    of `RemovalSettings` plus `now`. `apply` puts them over a source's settings without
    reading them again.

    >>> o = RemovalOverrides.check({"recent_window": "2h"}, lambda k: f"`{k}`")
    >>> o.apply(RemovalSettings()).recent_window
    datetime.timedelta(seconds=7200)
    """

    def __init__(self, values: Mapping[str, Any], now: datetime | None = None) -> None:
        self._values = dict(values)
        self.now = now

    @classmethod
    def check(
        cls, values: Mapping[str, Any], name_of: Callable[[str], str] | None = None
    ) -> RemovalOverrides:
        """`values` checked: ConfigError naming the key (or the flag, through `name_of`)
        for an unknown key or a bad value. Checked overrides are returned as they are."""
        if isinstance(values, RemovalOverrides):
            return values
        known = set(REMOVAL_FIELDS)
        unknown = sorted(set(values) - known - {"now"})
        if unknown:
            raise ConfigError(
                f"Unknown removal setting(s) {', '.join(unknown)}; known: "
                f"{', '.join(sorted(known))}."
            )
        label = name_of or (lambda key: f"`{key}`")
        given = {k: v for k, v in values.items() if k != "now"}
        return cls(RemovalSettings.read(given, label), values.get("now"))

    def apply(self, settings: RemovalSettings) -> RemovalSettings:
        return replace(settings, **self._values) if self._values else settings

    def __getitem__(self, key: str) -> Any:
        if key == "now" and self.now is not None:
            return self.now
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._values
        if self.now is not None:
            yield "now"

    def __len__(self) -> int:
        return len(self._values) + (self.now is not None)

    def __repr__(self) -> str:
        return f"RemovalOverrides({dict(self)!r})"
