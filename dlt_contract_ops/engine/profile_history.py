"""`dlt-contract-ops profile`: sweep one source's load profiles (as a distribution sweep
does) and show each root table's per-load history."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput


def profile_history(
    source: str,
    *,
    project_dir: str | os.PathLike[str] | None = None,
    table: str | None = None,
    column: str | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Profile the source's new loads (as a distribution sweep does), then return each root
    table's per-load history: table -> rows of `history_rows`, oldest first.

    A `table` or `column` the source does not profile is a ConfigError naming the ones it
    does (checked before any profile query); a table whose profile query failed, or whose
    files could not all be read (a corrupt or truncated file, a damaged Delta log: the
    history would leave loads out), raises a DestinationError naming the table (and file).

    >>> profile_history("events_src", table="events")  # doctest: +SKIP
    {'events': [{'load_id': '1718...', 'rows': 20, 'column': 'kind', 'null_rate': 0.0, ...}]}
    """
    from dlt_contract_ops.engine.context import Sweep
    from dlt_contract_ops.profiles.service import history_rows
    from dlt_contract_ops.profiles.sweep import profile_source
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.project import load_project_settings
    from dlt_contract_ops.sinks.emitter import Emitter

    with project_context(project_dir) as pdir:
        project = load_project_settings()
        sweep = Sweep(project, pdir, Emitter.from_names((), dry_run=True))
        try:
            ctx = sweep.context(source)
            _check_readable(ctx, table)
            _check_names(ctx, table, column)
            tables = profile_source(ctx, ctx.settings)
        finally:
            sweep.close()
    out: dict[str, list[dict[str, Any]]] = {}
    for t in tables:
        if table is not None and t.expected.table != table:
            continue
        if t.error is not None:
            raise _failed(t.expected.table, t.error)
        out[t.expected.table] = history_rows(t.monitored, column)
    return out


def _check_readable(ctx: SourceInput, table: str | None) -> None:
    """DestinationError naming each table `profile` shows (`table`, else the source's root
    tables) that the adapter could not read in full, and the files: a history of the loads
    that could be read is not the table's."""
    from dlt_contract_ops.engine.read_problems import read_error_line
    from dlt_contract_ops.errors import DestinationError

    shown = [table] if table is not None else [e.table for e in ctx.built.tables]
    unread = read_error_line(ctx.read_errors, shown)
    if unread is not None:
        raise DestinationError(
            f"source `{ctx.name}` cannot be profiled in full: {unread}. Nothing was profiled; "
            "restore or remove the file(s), then run `profile` again.")


def _check_names(ctx: SourceInput, table: str | None, column: str | None) -> None:
    """ConfigError for a `table` or `column` that is not profiled: the names that are, and
    the closest one (`errors.did_you_mean`)."""
    from dlt_contract_ops.core.columns import LOAD_ID
    from dlt_contract_ops.errors import ConfigError, did_you_mean
    from dlt_contract_ops.profiles.plan import plan_columns

    # what `profile_source` profiles: the present root tables with a load id column
    present = {e.table: (e, live) for e, live in ctx.present_tables() if live.has(LOAD_ID)}

    def unknown(kind: str, name: str, known: Sequence[str], where: str) -> ConfigError:
        listed = ", ".join(sorted(known)) or "none"
        return ConfigError(
            f"Unknown {kind} `{name}` {where}: profiled {kind}s are {listed}."
            + did_you_mean(name, known)
        )

    if table is not None and table not in present:
        raise unknown("table", table, list(present), f"for source `{ctx.name}`")
    if column is None:
        return
    chosen = [present[table]] if table is not None else list(present.values())
    known = {c.name for e, live in chosen for c in plan_columns(ctx, e, live) if c.monitored}
    if column not in known:
        where = f"in table `{table}`" if table is not None else f"for source `{ctx.name}`"
        raise unknown("column", column, sorted(known), where)


def _failed(table: str, exc: Exception) -> Exception:
    """A table's failed profile query as an error that names the table (a driver's own
    error does not)."""
    from dlt_contract_ops.errors import ContractOpsError, DestinationError

    if isinstance(exc, ContractOpsError) and f"`{table}`" in str(exc):
        return exc
    return DestinationError(f"profile query on table `{table}` failed: {exc}")
