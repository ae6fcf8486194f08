"""The source's input is a frozen value: a runner reads it and cannot change what the next
runner reads (no field is assigned, no mapping of it is written)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from dlt.common.normalizers.naming.snake_case import NamingConvention

from dlt_contract_ops.core.columns import ExpectedColumn, ExpectedTable, LiveTable
from dlt_contract_ops.detection.source_input import SourceInput
from dlt_contract_ops.sources.discovery import BuiltSource


def _input() -> SourceInput:
    nothing: Any = None  # what these checks never read
    items = ExpectedTable("orders", "orders__items", (ExpectedColumn("sku", "text"),),
                          parent="orders", root="orders")
    built = BuiltSource("s", "s", NamingConvention(), (), nested=(items,))
    live = {n: LiveTable(n) for n in ("orders", "orders__items", "b")}
    return SourceInput.of(nothing, built, nothing, nothing, live, notes=["n"],
                          read_errors={"b": ["table `b`: file `x` cannot be read."]},
                          profile_needs={"removal": "counts", "mine": "detailed"})


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(SourceInput)])
def test_no_field_can_be_assigned(field: str) -> None:
    source = _input()
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(source, field, None)


@pytest.mark.parametrize("field", ["live", "read_errors", "children", "profile_needs"])
def test_no_mapping_can_be_written(field: str) -> None:
    mapping = getattr(_input(), field)
    with pytest.raises(TypeError):
        mapping["x"] = None


def test_what_it_derives_is_built_once_by_of() -> None:
    source = _input()
    assert source.live_names == ("b", "orders", "orders__items")
    assert source.nested_tables("orders") == ["orders__items"]
    assert source.child("orders__items") is source.built.nested[0]
    assert source.notes == ("n",)
    assert source.profiles_detailed
    assert source.profiles_wanted(besides="removal")
    assert not dataclasses.replace(source, profile_needs={"removal": "counts"}).profiles_wanted(
        besides="removal")
