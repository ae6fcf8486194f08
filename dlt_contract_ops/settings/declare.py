"""A settings table declared once: a frozen dataclass whose fields are its keys.

A field made by `key(...)` is a key of the table, with its type and default (the field's) and
how a value given for it is read (`Key.read`, raising a ConfigError that names the key); a
field made by `table(...)` is a sub-table, read by the keys of its own class. Any other field
is not a key (the table's name, a value taken from the project's settings). Everything else is
made from this declaration: the dlt spec that resolves the table (`settings.specs.spec_for`:
which keys a table may hold, the unknown-key check's allowed set) and the typed value
(`read_keys`).

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Example:
...     size: int = key(2, lambda value, dotted: int(value), hint=INT)
>>> list(keys_of(Example))
['size']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Optional

#: the hint of a key whose value dlt hands over as given (its grammar or strictness is ours:
#: dlt would coerce `ref = 5` to "5", which must be an error)
RAW: Any = Optional[Any]  # noqa: UP045 (dlt evaluates the hint at runtime on Python 3.10)
#: the hints of what dlt coerces: booleans (`"false"` from the environment) and whole numbers
BOOL: Any = Optional[bool]  # noqa: UP045
INT: Any = Optional[int]  # noqa: UP045
#: a value read from a dlt-resolved value and the key's dotted path (for its error)
Reader = Callable[[Any, str], Any]


@dataclass(frozen=True)
class Key:
    """One key of a table: how its value is read, the hint dlt resolves it with, and where
    it sits under the table when not at the field's name (`("rename", "min_confidence")`).
    A sub-table has `keys` (its own) and no `read`."""

    read: Reader | None = None
    hint: Any = RAW
    at: tuple[str, ...] = ()
    #: a sub-table: its keys, read over the field's value (a frozen dataclass)
    keys: Mapping[str, Key] | None = None

    def path(self, name: str) -> tuple[str, ...]:
        return self.at or (name,)


def key(default: Any = MISSING, read: Reader | None = None, *, hint: Any = RAW,
        at: tuple[str, ...] = ()) -> Any:
    """A dataclass field that is a key of its table (no `default`: a required one):
    `read(value, dotted key)` reads a value given for it (None: unset, the default stays);
    `hint` is what dlt resolves it with (`BOOL`, `INT`: coerced by dlt, else `RAW`)."""
    if read is None:
        raise TypeError("a key says how its value is read: key(default, read)")
    return field(default=default, metadata={"key": Key(read, hint, at)})


def table(cls: Any, keys: Mapping[str, Key] | None = None) -> Any:
    """A dataclass field that is a sub-table, its value a `cls` (defaults: `cls()`); `keys`
    (one per field of `cls`) for a class declared elsewhere (a value of `core`), else the
    keys `cls` declares."""
    if keys is not None:
        differ = sorted({f.name for f in fields(cls)} ^ set(keys))
        if differ:
            raise TypeError(f"the keys of `{cls.__name__}` differ from its fields: {differ}")
    return field(default_factory=cls, metadata={"key": Key(keys=keys or keys_of(cls))})


def keys_of(cls: Any) -> dict[str, Key]:
    """The keys `cls` declares, by field name, in declaration order."""
    return {f.name: f.metadata["key"] for f in fields(cls) if "key" in f.metadata}


def read_keys(keys: Mapping[str, Key], spec: Any, section: str, over: Any) -> dict[str, Any]:
    """The keys set in `spec` (a dlt spec resolved at `section`), read: field name -> value.
    A sub-table is read over `over`'s value of the same field (the defaults, or the
    project's for a source's table: it overrides them key by key)."""
    out: dict[str, Any] = {}
    for name, k in keys.items():
        value = spec
        for part in k.path(name):
            value = getattr(value, part)
        dotted = ".".join((section, *k.path(name)))
        if k.keys is not None:
            base = getattr(over, name)
            out[name] = replace(base, **read_keys(k.keys, value, dotted, base))
        elif value is not None:
            assert k.read is not None
            read = k.read(value, dotted)
            if read is not None:
                out[name] = read
    return out
