"""Value constraints (`Field(ge=1)`, `max_length`, `pattern`, `multiple_of`): how a pair of
them relates, as a tightening (fewer values allowed), a loosening (more) or a change.

Bounds are compared as numbers (`Decimal`), dates or date-times; two bounds of different kinds
are not comparable and count as a change. Pure.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from typing import Any, Literal

Relation = Literal["equal", "tightened", "loosened", "changed"]

#: the constraint attributes Pydantic and annotated-types put on a field's metadata
BOUND_NAMES = ("ge", "gt", "le", "lt")
CONSTRAINT_NAMES = (*BOUND_NAMES, "multiple_of", "min_length", "max_length", "pattern")


def bound_text(value: Any) -> str | None:
    """A bound as the snapshot writes it: `1`, `0.5`, `2026-01-01`; None for no bound.

    >>> bound_text(1), bound_text(0.5), bound_text(dt.date(2026, 1, 1)), bound_text(None)
    ('1', '0.5', '2026-01-01', None)
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


def _value(text: str) -> Any:
    try:
        return decimal.Decimal(text)
    except decimal.InvalidOperation:
        pass
    for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat, dt.time.fromisoformat):
        try:
            return parse(text)
        except ValueError:
            continue
    return None


def _order(a: str, b: str) -> int | None:
    """-1, 0 or 1 as a is below, at or above b; None when the two are not comparable."""
    if a == b:
        return 0
    x, y = _value(a), _value(b)
    if x is None or y is None or type(x) is not type(y):
        return None
    try:
        return -1 if x < y else 1 if x > y else 0
    except TypeError:  # naive against aware date-times
        return None


@dataclass(frozen=True)
class Bound:
    """One side of a value range: `value`, and whether the value itself is allowed."""

    value: str
    inclusive: bool
    lower: bool

    def __str__(self) -> str:
        if self.lower:
            return f"{'≥' if self.inclusive else '>'} {self.value}"
        return f"{'≤' if self.inclusive else '<'} {self.value}"


def lower_bound(ge: str | None, gt: str | None) -> Bound | None:
    """The lower bound `ge`/`gt` declare (the stricter one when both do)."""
    bounds = [Bound(v, inc, True) for v, inc in ((ge, True), (gt, False)) if v is not None]
    if len(bounds) == 2 and compare_bounds(bounds[0], bounds[1]) == "tightened":
        return bounds[1]
    return bounds[0] if bounds else None


def upper_bound(le: str | None, lt: str | None) -> Bound | None:
    """The upper bound `le`/`lt` declare (the stricter one when both do)."""
    bounds = [Bound(v, inc, False) for v, inc in ((le, True), (lt, False)) if v is not None]
    if len(bounds) == 2 and compare_bounds(bounds[0], bounds[1]) == "tightened":
        return bounds[1]
    return bounds[0] if bounds else None


def compare_bounds(old: Bound | None, new: Bound | None) -> Relation:
    """How `new` relates to `old` (one side of a range; None: unbounded).

    >>> compare_bounds(Bound("1", True, True), Bound("0", True, True))
    'loosened'
    >>> compare_bounds(None, Bound("10", False, False))
    'tightened'
    """
    if old == new:
        return "equal"
    if old is None:
        return "tightened"
    if new is None:
        return "loosened"
    order = _order(old.value, new.value)
    if order is None:
        return "changed"
    if order == 0:
        # the same value: excluding it is tighter than allowing it
        if old.inclusive == new.inclusive:
            return "equal"
        return "tightened" if old.inclusive else "loosened"
    # a lower bound that moves up, or an upper bound that moves down, allows fewer values
    return "tightened" if (order < 0) == old.lower else "loosened"


def compare_multiple(old: str | None, new: str | None) -> Relation:
    """`multiple_of`: a multiple of the old step allows fewer values (tightened).

    >>> compare_multiple("5", "10"), compare_multiple("10", "5"), compare_multiple("2", "3")
    ('tightened', 'loosened', 'changed')
    """
    if old == new:
        return "equal"
    if old is None:
        return "tightened"
    if new is None:
        return "loosened"
    a, b = _value(old), _value(new)
    if not isinstance(a, decimal.Decimal) or not isinstance(b, decimal.Decimal) or not a or not b:
        return "changed"
    if a == b:
        return "equal"
    if b % a == 0:
        return "tightened"
    if a % b == 0:
        return "loosened"
    return "changed"


def compare_length(old: int | None, new: int | None, *, minimum: bool) -> Relation:
    """`min_length` (minimum=True) or `max_length`: None is no limit.

    >>> compare_length(1, 3, minimum=True), compare_length(10, None, minimum=False)
    ('tightened', 'loosened')
    """
    if old == new:
        return "equal"
    if old is None:
        return "tightened"
    if new is None:
        return "loosened"
    return "tightened" if (new > old) == minimum else "loosened"


def length_text(value: int | None, *, minimum: bool) -> str | None:
    if value is None:
        return None
    return f"{'min' if minimum else 'max'} length {value}"


def multiple_text(value: str | None) -> str | None:
    return None if value is None else f"multiple of {value}"
