"""The distribution rule as a case table: pure, no I/O."""

from __future__ import annotations

import pytest

from dlt_contract_ops.core.distribution import DistributionRule, compare
from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile

ROWS = 1000
T0 = 1_700_000_000


def _load(i: int, *, nulls: float = 0.0, distinct: int = 3,
          shares: dict[str, float] | None = None) -> LoadProfile:
    non_null = round(ROWS * (1 - nulls))
    cats = {k: round(v * non_null) for k, v in (shares or {"a": 0.5, "b": 0.3, "c": 0.2}).items()}
    col = ColumnProfile("kind", non_null, distinct, categories=cats)
    return LoadProfile(str(T0 + 3600 * i), ROWS, {"kind": col})


def _history(base: list[dict[str, object]], current: dict[str, object]) -> list[LoadProfile]:
    return [_load(i, **kw) for i, kw in enumerate(base)] + [  # type: ignore[arg-type]
        _load(len(base), **current)]  # type: ignore[arg-type]


STEADY: list[dict[str, object]] = [{}] * 6
NOISY: list[dict[str, object]] = [
    {"shares": {"a": 0.5 + d, "b": 0.3 - d, "c": 0.2}, "nulls": 0.1 + d / 2}
    for d in (-0.02, 0.01, 0.0, 0.02, -0.01, 0.015)
]

CASES = [
    ("steady", STEADY, {}, []),
    ("noisy, current within the noise", NOISY, {"shares": {"a": 0.52, "b": 0.28, "c": 0.2},
                                                 "nulls": 0.105}, []),
    ("null rate jumps", STEADY, {"nulls": 0.3}, [("null_rate", None, 0.0, 0.3)]),
    ("distinct count collapses", [{"distinct": 900}] * 6, {"distinct": 1},
     [("distinct_count", None, 900.0, 1.0)]),
    ("a share jumps", STEADY, {"shares": {"a": 0.2, "b": 0.6, "c": 0.2}},
     [("category_share", "a", 0.5, 0.2), ("category_share", "b", 0.3, 0.6)]),
    ("a new category", STEADY, {"shares": {"a": 0.5, "b": 0.3, "c": 0.15, "z": 0.05}},
     [("new_category", "z", 0.0, 0.05)]),
    ("too short a baseline never alerts", STEADY[:4], {"nulls": 0.5}, []),
    ("under the floor on a steady baseline", STEADY, {"nulls": 0.01}, []),
    ("over the floor on a steady baseline", STEADY, {"nulls": 0.03},
     [("null_rate", None, 0.0, 0.03)]),
]


@pytest.mark.parametrize(("base", "current", "expected"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_compare(base: list[dict[str, object]], current: dict[str, object],
                 expected: list[tuple[str, str | None, float, float]]) -> None:
    metrics = compare(_history(base, current), DistributionRule())
    assert [(m.metric, m.category, round(m.baseline, 6), round(m.current, 6))
            for m in metrics] == expected
    assert all(m.column == "kind" for m in metrics)


def test_the_floor_is_the_rule_s_min_change() -> None:
    history = _history(STEADY, {"nulls": 0.03})
    assert compare(history, DistributionRule(min_change=0.05)) == []
    assert compare(history, DistributionRule(min_change=0.02)) != []


def test_a_declared_code_set_counts_as_known() -> None:
    history = _history(STEADY, {"shares": {"a": 0.5, "b": 0.3, "c": 0.19, "z": 0.01}})
    assert [m.metric for m in compare(history, DistributionRule())] == ["new_category"]
    assert compare(history, DistributionRule(), {"kind": ("a", "b", "c", "z")}) == []
