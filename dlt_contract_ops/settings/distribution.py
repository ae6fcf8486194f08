"""How `min_rows` of `[contract_ops.distribution]` (and of a source's table over it) is read:
a whole number >= 1, with the number a user likely meant as a did-you-mean. The table's keys
are declared with the others (`settings.tables.DISTRIBUTION_TABLE`)."""

from __future__ import annotations

import re
from typing import Any

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings.values import where

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
