"""Additive drift: live columns the model does not know."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dlt_contract_ops.core.columns import DLT_PREFIX, ExpectedTable, LiveTable


@dataclass(frozen=True)
class AdditiveDrift:
    """Drifted columns of one resource, sorted, with their destination types."""

    resource: str
    table: str
    columns: tuple[str, ...]
    column_types: dict[str, str]


def ignored_columns(injected: Iterable[str], load_timestamp_column: str | None) -> frozenset[str]:
    """Columns that are never drift: injected by infrastructure, or the load timestamp."""
    names = set(injected)
    if load_timestamp_column:
        names.add(load_timestamp_column)
    return frozenset(names)


def detect_additive(
    expected: ExpectedTable,
    live: LiveTable,
    *,
    ignored: frozenset[str] = frozenset(),
    system_prefix: str = DLT_PREFIX,
) -> AdditiveDrift | None:
    """Live columns of `live` that `expected` does not declare, or None when there are none.

    `ignored` holds names already normalized with the source's naming convention.

    >>> from dlt_contract_ops.core.columns import ExpectedColumn, LiveColumn
    >>> exp = ExpectedTable("r", "t", (ExpectedColumn("id"),))
    >>> live = LiveTable("t", {n: LiveColumn(n, "BIGINT") for n in ("id", "_dlt_id", "x")})
    >>> detect_additive(exp, live).columns
    ('x',)
    """
    known = expected.names
    drifted = sorted(
        name
        for name in live.columns
        if name not in known and name not in ignored and not name.startswith(system_prefix)
    )
    if not drifted:
        return None
    return AdditiveDrift(
        resource=expected.resource,
        table=expected.table,
        columns=tuple(drifted),
        column_types={c: live.columns[c].data_type for c in drifted},
    )
