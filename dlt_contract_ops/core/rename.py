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


def candidate_pairs(
    added: Mapping[str, str | None], missing: Mapping[str, str | None]
) -> list[tuple[str, str]]:
    """Every (added, missing) pair of compatible types, sorted: what a detector that can
    score each pair on its own evidence (the load where one column stopped and the other
    began) weighs, instead of committing to a pairing by type alone.

    >>> candidate_pairs({"coupon_code": "text", "order_state": "text"}, {"status": "text"})
    [('coupon_code', 'status'), ('order_state', 'status')]
    """
    return [(new, old) for new in sorted(added) for old in sorted(missing)
            if compatible(added[new], missing[old])]


def assign_pairs(scores: Mapping[tuple[str, str], float]) -> dict[str, str]:
    """Added column -> the missing column it renames, from a confidence per candidate pair.

    The strongest pairs are taken first, and each column pairs at most once, so an unrelated
    column added earlier cannot take the renamed column's place. A column with two equally
    strong candidates at its best level pairs with none of them (a guess would mislead), and
    those candidates are not offered to weaker pairs either.

    >>> assign_pairs({("coupon_code", "status"): 0.2, ("order_state", "status"): 0.8})
    {'order_state': 'status'}
    >>> assign_pairs({("a", "x"): 0.5, ("b", "x"): 0.5})
    {}
    """
    out: dict[str, str] = {}
    used: set[str] = set()
    for level in sorted(set(scores.values()), reverse=True):
        here = [(n, o) for (n, o), s in scores.items()
                if s == level and n not in used and o not in used]
        news = [n for n, _ in here]
        olds = [o for _, o in here]
        for new, old in sorted(here):
            if news.count(new) == 1 and olds.count(old) == 1:
                out[new] = old
        used.update(news, olds)
    return out
