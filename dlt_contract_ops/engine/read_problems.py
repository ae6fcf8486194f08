"""What an adapter over files could not read, for one source: its tables' errors and notes.

An adapter that reads files (dlt's `filesystem` destination) declares `read_problems` after
listing the dataset: per table, a file it could not read (an error: the table was read
without it, or not at all) or something worth a note (a column typed differently in two
files). A table it could not read at all is absent from the live columns without being gone:
the sweep keeps it out of the `missing` detector's dropped tables, and the run reports it as
an error of that table alone (`reconcile`: on the source's first result, exit 1; `profile`:
an error naming it, exit 1).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from dlt_contract_ops.sources.discovery import BuiltSource

__all__ = ["read_error_line", "source_read_errors"]


def source_read_errors(
    problems: Sequence[Any], built: BuiltSource, notes: list[str]
) -> dict[str, list[str]]:
    """The errors among an adapter's `read_problems` for `built`'s tables, nested ones
    included: table -> messages. The notes among them go to `notes`."""
    roots = {t.table for t in (*built.tables, *built.nested)}
    errors: dict[str, list[str]] = {}
    for p in problems:
        if p.table in roots or any(p.table.startswith(r + "__") for r in roots):
            if p.error:
                errors.setdefault(p.table, []).append(p.message)
            else:
                notes.append(p.message)
    return errors


def read_error_line(
    errors: Mapping[str, Sequence[str]], tables: Collection[str] | None = None
) -> str | None:
    """One line of what could not be read of `tables` (default: all of `errors`), naming each
    table and file; None when nothing of them.

    >>> read_error_line({"t": ["table `t`: file `a` cannot be read."], "u": ["table `u`: x."]},
    ...                 ["t"])
    '1 table(s) could not be read in full: table `t`: file `a` cannot be read'
    """
    chosen = {t: es for t, es in errors.items() if tables is None or t in tables}
    if not chosen:
        return None
    listed = "; ".join(e.rstrip(".") for es in chosen.values() for e in es)
    return f"{len(chosen)} table(s) could not be read in full: {listed}"
