"""`SourceInput.nested_tables` finds by bisection exactly what a scan of every live table
for the `table__` prefix finds, on names that crowd the prefix."""

from __future__ import annotations

from typing import Any

from dlt.common.normalizers.naming.snake_case import NamingConvention
from hypothesis import given
from hypothesis import strategies as st

from dlt_contract_ops.core.columns import LiveTable
from dlt_contract_ops.detection.source_input import SourceInput
from dlt_contract_ops.sources.discovery import BuiltSource

#: few letters and many underscores, so names share prefixes and `__` often
_NAMES = st.text(alphabet="ab_é-", min_size=1, max_size=6)


def _context(names: set[str]) -> SourceInput:
    nothing: Any = None  # nested_tables reads only the live tables
    built = BuiltSource("s", "s", NamingConvention(), ())
    return SourceInput.of(nothing, built, nothing, nothing, {n: LiveTable(n) for n in names})


@given(st.sets(_NAMES, max_size=30), _NAMES)
def test_bisection_finds_what_a_scan_finds(names: set[str], table: str) -> None:
    ctx = _context(names | {table})
    scan = sorted(t for t in ctx.live if t.startswith(table + "__"))
    assert ctx.nested_tables(table) == scan


def test_a_table_is_not_nested_under_a_prefix_of_its_name() -> None:
    ctx = _context({"a", "a_b", "a__b", "a___c", "a__b__c", "ab__c", "a_", "b__a"})
    assert ctx.nested_tables("a") == ["a___c", "a__b", "a__b__c"]
    assert ctx.nested_tables("a_") == ["a___c"]
    assert ctx.nested_tables("a__b") == ["a__b__c"]
    assert ctx.nested_tables("ab") == ["ab__c"]
    assert ctx.nested_tables("c") == []
