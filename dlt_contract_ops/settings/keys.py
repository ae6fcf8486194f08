"""The one "unknown key, did you mean" helper of every configuration table."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any


def closest(name: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The known name `name` is most likely a typo of, if any.

    >>> closest("recent_windw", ["recent_window", "baseline_window"])
    'recent_window'
    """
    match = difflib.get_close_matches(name, sorted(known), n=1, cutoff=cutoff)
    return match[0] if match else None


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
        hint = closest(str(key), known)
        out.append(
            f"Unknown key `{key}` in `[{section}]` ({where})."
            + (f" Did you mean `{hint}`?" if hint else f" Known keys: {', '.join(known)}.")
        )
    return out
