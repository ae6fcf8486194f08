"""What `profiles rebuild` calls, and the rows `profile` shows (`profile` itself sweeps a
source: `engine.profile_history`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt_contract_ops.core.load_profile import LoadProfile


def rebuild_profiles(
    source: str, *, project_dir: str | os.PathLike[str] | None = None
) -> int:
    """Drop every stored profile of `source` (the next sweep profiles its tables afresh);
    how many loads were dropped."""
    from dlt_contract_ops.profiles.sweep import store_of
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.project import load_project_settings, load_source_settings

    with project_context(project_dir):
        project = load_project_settings()
        settings = load_source_settings(source, project)  # an undeclared source is an error
        return store_of(settings, project.lock_timeout).drop_source(source)


def history_rows(history: Sequence[LoadProfile], column: str | None = None) -> list[dict[str, Any]]:
    """A table's history as flat rows (one per load and column) for `profile` output."""
    out: list[dict[str, Any]] = []
    for p in history:
        for name, c in sorted(p.columns.items()):
            if column is not None and name != column:
                continue
            shares = p.shares(name)
            out.append({
                "load_id": p.load_id, "rows": p.rows, "column": name,
                "null_rate": round(p.null_rate(name) or 0.0, 6), "distinct_count": c.distinct,
                "min": c.min_value, "max": c.max_value,
                "categories": None if shares is None
                else {k: round(v, 6) for k, v in sorted(shares.items())},
            })
    return out
