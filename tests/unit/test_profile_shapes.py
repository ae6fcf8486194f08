"""Profile queries are shaped (`profiles.sweep._profile`): tables whose columns are laid out
alike share one rendered template, and every table's text is the one its own tree renders,
on every dialect, for odd table and column names and each bound."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from dlt_contract_ops.core.columns import ExpectedTable
from dlt_contract_ops.destinations.shapes import _REFUSED, ShapedQuery
from dlt_contract_ops.profiles.query import ProfiledColumn
from dlt_contract_ops.profiles.sweep import TableProfiles, _profile
from tests.unit.test_shapes import ADAPTERS, ODD, TABLES

#: one layout: a number, a time axis of the table's own, a category with codes, a json column
KINDS: list[dict[str, Any]] = [
    {"kind": "number"}, {"kind": "time", "axis": True, "monitored": False},
    {"kind": "category", "codes": ("a", "b")}, {"kind": "other"},
]


def _table(adapter: Any, name: str, columns: list[str]) -> TableProfiles:
    profiled = [ProfiledColumn(c, **k) for c, k in zip(columns, KINDS, strict=True)]
    return TableProfiles(ExpectedTable(name, name, ()), adapter.table(name), profiled)


@pytest.mark.parametrize("name", sorted(ADAPTERS))
@pytest.mark.parametrize(("bound", "detailed", "loads", "count_row"), [
    ("since", False, 0, True), ("after", False, 0, True), ("after", True, 0, True),
    ("loads", True, 3, False),
])
def test_every_table_gets_the_text_its_own_profile_tree_renders(
    name: str, bound: str, detailed: bool, loads: int, count_row: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    adapter = ADAPTERS[name]()
    ctx: Any = SimpleNamespace(adapter=adapter)
    caplog.set_level(logging.DEBUG, logger="dlt_contract_ops")
    n = loads or 1
    for i, table in enumerate(TABLES):
        t = _table(adapter, table, (ODD[i:] + ODD[:i])[:len(KINDS)])
        query = _profile(ctx, t, bound=bound, detailed=detailed, loads=loads,  # type: ignore[arg-type]
                         count_row=count_row)
        assert isinstance(query, ShapedQuery)
        shaped = adapter.driver_sql(query, n, "profile")
        assert shaped == adapter.driver_sql(query.expression(adapter), n, "profile")
    # one template served every table (the adapter keeps them by shape), and it was never
    # refused for rendering otherwise than the tree (a refusal would make every text above
    # the ordinary one, and this test vacuous): a refused shape says so at DEBUG
    [template] = adapter.shapes.by_key.values()
    assert template is not _REFUSED
    assert template.parts
    assert "is not templated" not in caplog.text


def test_tables_laid_out_differently_get_templates_of_their_own() -> None:
    adapter = ADAPTERS["duckdb"]()
    ctx: Any = SimpleNamespace(adapter=adapter)
    first = _table(adapter, "a", ["x", "y", "z", "w"])
    other = _table(adapter, "b", ["x", "y", "z", "w"])
    other.columns[0] = ProfiledColumn("x", "category")  # a number there: no min/max for it
    for t in (first, other):
        query = _profile(ctx, t, bound="after", count_row=True)
        assert isinstance(query, ShapedQuery)
        assert adapter.driver_sql(query, 1, "profile") == adapter.driver_sql(
            query.expression(adapter), 1, "profile")
    assert [v is not _REFUSED for v in adapter.shapes.by_key.values()] == [True, True]
