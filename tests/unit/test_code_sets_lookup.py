"""`BuiltSource.code_sets` finds its table by name: one comparison per call, not one per table.

`profiles.sweep.plan_columns` asks once per table; comparing the asked table with every table
of the source (`expected in self.tables`) made a sweep of 2,000 tables cost 2 million
`ExpectedTable.__eq__` calls. A table the source does not hold (another naming of it) still
gets no cached code set.
"""

from __future__ import annotations

from dataclasses import fields, replace

from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable
from dlt_contract_ops.sources.discovery import BuiltSource

N = 400


def _source() -> tuple[BuiltSource, list[ExpectedTable]]:
    tables = [ExpectedTable("r", f"t_{i:04d}", (ExpectedColumn("status", "text"),))
              for i in range(N)]
    codes = {t.table: {"status": ("new", "paid")} for t in tables}
    return BuiltSource("s", "s", None, tuple(tables), codes=codes), tables


def _fields(table: ExpectedTable) -> tuple[object, ...]:
    return tuple(getattr(table, f.name) for f in fields(table))


class AskedTable(ExpectedTable):
    """A table as a caller hands it over, counting the comparisons made with it: Python
    asks the subclass's `__eq__` first, whichever side of `==` it is on."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        AskedTable.compared += 1
        return isinstance(other, ExpectedTable) and _fields(self) == _fields(other)

    __hash__ = ExpectedTable.__hash__


def test_each_table_is_compared_once_at_most() -> None:
    source, tables = _source()
    # equal, not the same objects
    asked = [AskedTable(**{f.name: getattr(t, f.name) for f in fields(t)}) for t in tables]
    AskedTable.compared = 0
    assert all(source.code_sets(t) == {"status": ("new", "paid")} for t in asked)
    assert AskedTable.compared <= N
    compared = AskedTable.compared
    assert all(source.code_sets(t) for t in tables)  # the source's own: no comparison
    assert AskedTable.compared == compared


def test_a_table_the_source_does_not_hold_gets_no_cached_codes() -> None:
    source, tables = _source()
    other = replace(tables[7], columns=(ExpectedColumn("status", "bigint"),))
    assert source.code_sets(other) == {}
