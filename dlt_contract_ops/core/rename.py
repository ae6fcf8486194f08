"""The one pairing rule for rename hints: an added column and a missing one of a compatible
type in the same table are probably one renamed column.

Shared by the ingest gate (its `renamed_from` hint) and, later, the reconciler's rename
detector and `contract diff`, so the three never disagree about what looks like a rename.
"""

from __future__ import annotations

from collections.abc import Mapping

#: dlt data types a value of the key type can be carried by without loss of meaning
_WIDENS: dict[str, frozenset[str]] = {
    "bigint": frozenset({"bigint", "double", "decimal"}),
    "double": frozenset({"double", "decimal"}),
    "decimal": frozenset({"decimal", "double"}),
    "date": frozenset({"date", "timestamp"}),
    "timestamp": frozenset({"timestamp"}),
    "text": frozenset({"text"}),
    "bool": frozenset({"bool"}),
}


def compatible(observed: str | None, expected: str | None) -> bool:
    """Whether values of dlt type `observed` fit a column of dlt type `expected` as they are
    (no coercion: `"12000"` text is not a bigint).

    >>> compatible("bigint", "double"), compatible("text", "bigint"), compatible(None, "text")
    (True, False, True)
    """
    if observed is None or expected is None:
        return True  # unknown on one side: nothing to hold against the pair
    return expected in _WIDENS.get(observed, frozenset({observed}))


def pair_renames(
    added: Mapping[str, str | None], missing: Mapping[str, str | None]
) -> dict[str, str]:
    """Added column -> the missing column it probably renames.

    A pair needs compatible types; an exact type match wins over a widening one; each missing
    column pairs at most once, and an added column with two equally good candidates pairs
    with none (a guess would mislead). Names are visited in sorted order, so the result is
    stable.

    >>> pair_renames({"sale_date": "date"}, {"order_date": "date"})
    {'sale_date': 'order_date'}
    >>> pair_renames({"sale_date": "text"}, {"order_date": "date"})
    {}
    """
    out: dict[str, str] = {}
    taken: set[str] = set()
    for new in sorted(added):
        new_type = added[new]
        exact = [m for m in sorted(missing) if m not in taken and missing[m] == new_type]
        loose = [
            m for m in sorted(missing)
            if m not in taken and m not in exact and compatible(new_type, missing[m])
        ]
        candidates = exact or loose
        if len(candidates) == 1:
            out[new] = candidates[0]
            taken.add(candidates[0])
    return out
