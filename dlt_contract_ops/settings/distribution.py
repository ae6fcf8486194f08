"""The distribution detector's settings: `[contract_ops.distribution]`, overlaid per source by
`[sources.<X>.contract_ops.distribution]`, read into the rule (`core.distribution`).

Each key has one reader here (its type and its one-line error naming the key, the file and
the environment variable); `settings.specs.DistributionSpec` says which keys a table may
hold, `settings.project` reads the project's table and each source's over it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dlt_contract_ops.core.distribution import DistributionRule
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings.values import FRACTION, NON_NEGATIVE, WHOLE, _duration, where

#: a number a user meant, written as text or with separators: `"100"`, `"1_000 rows"`
_WRITTEN_NUMBER = re.compile(r"\s*(\d[\d_,]*)\s*(rows?)?\s*\Z")


def read_min_rows(value: Any, key: str) -> int:
    """`min_rows`: a whole number >= 1; text of digits (the environment's) reads as one.
    Anything else is a ConfigError of one line, with the value that was likely meant.

    >>> read_min_rows("250", "contract_ops.distribution.min_rows")
    250
    """
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise ConfigError(
        f"{where(key)} must be a whole number >= 1 (the fewest rows a load needs for its "
        f"distribution to be judged), got {value!r}.{_meant(value)}"
    )


def _meant(value: Any) -> str:
    """The whole number a bad `min_rows` likely meant, as a did-you-mean; "" for none.

    >>> _meant(100.0), _meant("1_000 rows")
    (' Did you mean `min_rows = 100`?', ' Did you mean `min_rows = 1000`?')
    >>> _meant(0), _meant(2.5)
    (' Did you mean `min_rows = 1` (every load is judged)?', '')
    """
    if isinstance(value, bool):
        return ""
    if isinstance(value, float) and value.is_integer() and value >= 1:
        return f" Did you mean `min_rows = {int(value)}`?"
    if isinstance(value, int | float) and value < 1:
        return " Did you mean `min_rows = 1` (every load is judged)?"
    if isinstance(value, str):
        written = _WRITTEN_NUMBER.match(value)
        number = int(re.sub(r"[_,]", "", written.group(1))) if written else 0
        if number >= 1:
            return f" Did you mean `min_rows = {number}`?"
    return ""


def _whole(value: Any, key: str) -> int:
    return WHOLE.read(value, where(key))


#: each key of a distribution table and how its value is read (`value`, dotted key)
READERS: dict[str, Callable[[Any, str], Any]] = {
    "baseline_loads": _whole,
    "baseline_window": _duration,
    "min_baseline_loads": _whole,
    "max_categories": _whole,
    "threshold": lambda v, key: NON_NEGATIVE.read(v, where(key)),
    "min_change": lambda v, key: FRACTION.read(v, where(key)),
    "min_rows": read_min_rows,
}


def distribution_rule(spec: Any, base: DistributionRule, section: str) -> DistributionRule:
    """`base` with the keys `spec` sets (a resolved `DistributionSpec` of the table
    `section`, e.g. `contract_ops.distribution`); ConfigError naming the key for a bad
    value."""
    values = {key: read(value, f"{section}.{key}") for key, read in READERS.items()
              if (value := getattr(spec, key, None)) is not None}
    return replace(base, **values) if values else base
