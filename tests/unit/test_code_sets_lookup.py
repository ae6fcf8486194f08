"""`BuiltSource.code_sets` finds its table by name: one comparison per call, not one per table.

`profiles.sweep.plan_columns` asks once per table; comparing the asked table with every table
of the source (`expected in self.tables`) made a sweep of 2,000 tables cost 2 million
`ExpectedTable.__eq__` calls. A table the source does not hold (another naming of it) still
gets no cached code set.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable
from dlt_contract_ops.sources.discovery import BuiltSource

N = 400


def _source() -> tuple[BuiltSource, list[ExpectedTable]]:
    tables = [ExpectedTable("r", f"t_{i:04d}", (ExpectedColumn("status", "text"),))
              for i in range(N)]
    codes = {t.table: {"status": ("new", "paid")} for t in tables}
    return BuiltSource("s", "s", None, tuple(tables), codes=codes), tables


def test_each_table_is_compared_once_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    source, tables = _source()
    calls = 0
    eq = ExpectedTable.__eq__

    def counted(self: ExpectedTable, other: object) -> bool:
        nonlocal calls
        calls += 1
        return eq(self, other)

    monkeypatch.setattr(ExpectedTable, "__eq__", counted)
    asked = [replace(t) for t in tables]  # equal, not the same objects
    assert all(source.code_sets(t) == {"status": ("new", "paid")} for t in asked)
    assert calls <= N
    calls = 0
    assert all(source.code_sets(t) for t in tables)  # the source's own: no comparison
    assert calls == 0


def test_a_table_the_source_does_not_hold_gets_no_cached_codes() -> None:
    source, tables = _source()
    other = replace(tables[7], columns=(ExpectedColumn("status", "bigint"),))
    assert source.code_sets(other) == {}
