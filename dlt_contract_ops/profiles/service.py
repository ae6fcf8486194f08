"""What the `profile` and `profiles rebuild` commands call: one function each."""

from __future__ import annotations

import os
from typing import Any


def profile_history(
    source: str,
    *,
    project_dir: str | os.PathLike[str] | None = None,
    table: str | None = None,
    column: str | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Profile the source's new loads (as a distribution sweep does), then return each root
    table's per-load history: table -> rows of `profiles.sweep.history_rows`, oldest first.

    >>> profile_history("events_src", table="events")  # doctest: +SKIP
    {'events': [{'load_id': '1718...', 'rows': 20, 'column': 'kind', 'null_rate': 0.0, ...}]}
    """
    from dlt_contract_ops.context import Sweep
    from dlt_contract_ops.profiles.sweep import history_rows, profile_source
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.project import load_project_settings
    from dlt_contract_ops.sinks.emitter import Emitter

    with project_context(project_dir) as pdir:
        project = load_project_settings()
        sweep = Sweep(project, pdir, Emitter.from_names((), dry_run=True))
        try:
            ctx = sweep.context(source)
            tables = profile_source(ctx, ctx.settings)
        finally:
            sweep.close()
    out: dict[str, list[dict[str, Any]]] = {}
    for t in tables:
        if table is not None and t.expected.table != table:
            continue
        if t.error is not None:
            raise t.error
        out[t.expected.table] = history_rows(t.monitored, column)
    return out


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
