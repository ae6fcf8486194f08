"""The one "unknown key" message of every configuration table (the "did you mean" in it is
`errors.did_you_mean`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dlt_contract_ops.errors import did_you_mean


def unknown_key_messages(
    table: Mapping[str, Any], allowed: Iterable[str], section: str, where: str
) -> list[str]:
    """One message per key of `table` not in `allowed`, naming the section and file.

    >>> unknown_key_messages({"recent_windw": 1}, ["recent_window"], "r", "c.toml")
    ['Unknown key `recent_windw` in `[r]` (c.toml). Did you mean `recent_window`?']
    """
    known = sorted(allowed)
    out = []
    for key in table:
        if key in known:
            continue
        out.append(
            f"Unknown key `{key}` in `[{section}]` ({where})."
            + (did_you_mean(str(key), known) or f" Known keys: {', '.join(known)}.")
        )
    return out
