"""Declarations that used to vanish without a word, so a breaking release passed at a patch
version: each is now recorded in the snapshot and diffed under a rule id, or refused when the
model is snapshotted. Every case goes model → snapshot document → parsed → diff → release check."""

from __future__ import annotations

import datetime as dt
import sys
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import dlt
import pytest
from dlt.common.normalizers.naming import snake_case
from pydantic import BaseModel, Field
from typing_extensions import TypeAliasType

from dlt_contract_ops.contracts.canonical import from_document, to_document
from dlt_contract_ops.contracts.extract import contract_from_model, resource_hints
from dlt_contract_ops.contracts.model import Release, ResourceContract, Version
from dlt_contract_ops.contracts.release import assess
from dlt_contract_ops.contracts.semantics import Semantics, TableSemantics
from dlt_contract_ops.core.naming import expected_table
from dlt_contract_ops.errors import DeclarationError

SNAKE = snake_case.NamingConvention()
V1, V2 = Version(1, 0, 0), Version(1, 0, 1)  # a patch release: nothing may break


def snapshot(model: type[Any], resource: Any = None) -> ResourceContract:
    """What `contract snapshot` writes for `model`, read back from the document."""
    hints = resource_hints(resource, resource.name, SNAKE) if resource is not None else None
    contract = contract_from_model(
        "erp", expected_table("lines", "lines", model, SNAKE), model, SNAKE, hints=hints
    )
    parsed, _ = from_document(to_document(contract, V1), "lines.json")
    assert parsed == contract  # the document carries everything the model declared
    return parsed


def release_check(
    old: ResourceContract, new: ResourceContract
) -> tuple[list[tuple[str, str]], str, str]:
    """(rule id, subject) per change, the bump required, the verdict of a patch release."""
    a = assess(Release("erp", V1, (old,)), Release("erp", V2, (new,)), today=dt.date(2026, 1, 1))
    changes = [(f.change.rule_id, f.change.subject) for f in a.findings]
    return changes, a.required.label, a.verdict


# -- (1) a unit on list items ------------------------------------------------------------------

class LegsM(BaseModel):
    legs: list[Annotated[float, Semantics(unit="m")]]


class LegsFt(BaseModel):
    legs: list[Annotated[float, Semantics(unit="ft")]]


# -- (2) a unit on a nested model's field (a json column) ---------------------------------------

class ParcelKg(BaseModel):
    weight: Annotated[float, Semantics(unit="kg")]


class ParcelLb(BaseModel):
    weight: Annotated[float, Semantics(unit="lb")]


class ShipKg(BaseModel):
    parcel: ParcelKg


class ShipLb(BaseModel):
    parcel: ParcelLb


class ItemUsd(BaseModel):
    price: Annotated[float, Semantics(unit="USD")]


class ItemCents(BaseModel):
    price: Annotated[float, Semantics(unit="USD_cents")]


class BasketUsd(BaseModel):
    items: list[ItemUsd] | None = None


class BasketCents(BaseModel):
    items: list[ItemCents] | None = None


class FlatKg(BaseModel):
    dlt_config: ClassVar[dict[str, Any]] = {"skip_nested_types": True}
    parcel: ParcelKg


class FlatLb(BaseModel):
    dlt_config: ClassVar[dict[str, Any]] = {"skip_nested_types": True}
    parcel: ParcelLb


# -- (3) a code removed from list[Literal[...]] -------------------------------------------------

class TagsAB(BaseModel):
    tags: list[Literal["a", "b"]]


class TagsA(BaseModel):
    tags: list[Literal["a"]]


class StockByWarehouseM(BaseModel):
    stock: dict[str, Annotated[float, Semantics(unit="m")]]


class StockByWarehouseKm(BaseModel):
    stock: dict[str, Annotated[float, Semantics(unit="km")]]


# -- (4) a unit declared through a type alias ---------------------------------------------------

Metres = TypeAliasType("Metres", Annotated[float, Semantics(unit="m")])
Feet = TypeAliasType("Feet", Annotated[float, Semantics(unit="ft")])
T = TypeVar("T")
InKg = TypeAliasType("InKg", Annotated[T, Semantics(unit="kg")], type_params=(T,))
InLb = TypeAliasType("InLb", Annotated[T, Semantics(unit="lb")], type_params=(T,))


class AliasM(BaseModel):
    distance: Metres


class AliasFt(BaseModel):
    distance: Feet


class GenericKg(BaseModel):
    mass: InKg[float]


class GenericLb(BaseModel):
    mass: InLb[float]


class AliasListM(BaseModel):
    legs: list[Metres]


class AliasListFt(BaseModel):
    legs: list[Feet]


# -- (6) value ranges ----------------------------------------------------------------------------

class QtyGe1(BaseModel):
    qty: int = Field(ge=1)


class QtyGe0(BaseModel):
    qty: int = Field(ge=0)


class ScoresUpTo10(BaseModel):
    scores: list[Annotated[int, Field(le=10)]]


class ScoresUpTo100(BaseModel):
    scores: list[Annotated[int, Field(le=100)]]


class CodeAZ(BaseModel):
    code: str = Field(pattern=r"^[A-Z]{3}$")


class CodeAny(BaseModel):
    code: str


HOLES: list[tuple[str, type[Any], type[Any], list[tuple[str, str]], str]] = [
    ("(1) list items m -> ft", LegsM, LegsFt, [("unit.changed", "lines.legs[]")], "major"),
    ("(2) nested model kg -> lb", ShipKg, ShipLb,
     [("unit.changed", "lines.parcel.weight")], "major"),
    ("(2) list of models USD -> cents", BasketUsd, BasketCents,
     [("unit.changed", "lines.items[].price")], "major"),
    ("(2) nested model flattened into columns", FlatKg, FlatLb,
     [("unit.changed", "lines.parcel__weight")], "major"),
    ("(3) code removed from list[Literal]", TagsAB, TagsA,
     [("categories.removed", "lines.tags[]")], "major"),
    ("(3) mapping values m -> km", StockByWarehouseM, StockByWarehouseKm,
     [("unit.changed", "lines.stock{}")], "major"),
    ("(4) TypeAliasType m -> ft", AliasM, AliasFt, [("unit.changed", "lines.distance")], "major"),
    ("(4) generic alias kg -> lb", GenericKg, GenericLb, [("unit.changed", "lines.mass")], "major"),
    ("(4) alias inside a list", AliasListM, AliasListFt, [("unit.changed", "lines.legs[]")],
     "major"),
    ("(6) Field(ge=1) -> ge=0", QtyGe1, QtyGe0, [("range.loosened", "lines.qty")], "major"),
    ("(6) Field(ge=0) -> ge=1", QtyGe0, QtyGe1, [("range.tightened", "lines.qty")], "minor"),
    ("(6) item bound le=10 -> le=100", ScoresUpTo10, ScoresUpTo100,
     [("range.loosened", "lines.scores[]")], "major"),
    ("(6) pattern dropped", CodeAZ, CodeAny, [("pattern.dropped", "lines.code")], "major"),
]


@pytest.mark.parametrize(("old", "new", "changes", "bump"), [h[1:] for h in HOLES],
                         ids=[h[0] for h in HOLES])
def test_a_hole_is_a_change_that_blocks_a_patch_release(
    old: type[Any], new: type[Any], changes: list[tuple[str, str]], bump: str
) -> None:
    assert release_check(snapshot(old), snapshot(new)) == (changes, bump, "BLOCKED")
    # and the same model twice is no change at all
    assert release_check(snapshot(old), snapshot(old)) == ([], "none", "READY")


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the `type` statement is Python 3.12+")
def test_a_python_312_type_statement_carries_its_unit() -> None:
    scope: dict[str, Any] = {"Annotated": Annotated, "Semantics": Semantics}
    exec("type Metres = Annotated[float, Semantics(unit='m')]", scope)
    model = type("M", (BaseModel,), {"__annotations__": {"d": scope["Metres"]}})
    column = snapshot(model).column("d")
    assert column is not None
    assert column.unit == "m"


# -- (5) dlt's own key hints ------------------------------------------------------------------

class Line(BaseModel):
    order_id: str
    line_no: int
    day: str


def _resource(column_hints: dict[str, Any] | None = None, **hints: Any) -> Any:
    @dlt.resource(name="lines", columns=Line, **hints)
    def lines() -> Any:
        yield {"order_id": "A", "line_no": 1, "day": "2026-01-01"}

    if column_hints:  # what a destination adapter does
        lines.apply_hints(columns=column_hints)
    return lines


KEY_HINTS: list[tuple[str, dict[str, Any], dict[str, Any], list[tuple[str, str]], str]] = [
    ("primary key widened", {"primary_key": "order_id"},
     {"primary_key": ("order_id", "line_no")}, [("primary_key.changed", "lines")], "major"),
    ("primary key dropped", {"primary_key": "order_id"}, {},
     [("primary_key.dropped", "lines")], "major"),
    ("merge key moved", {"merge_key": "day", "write_disposition": "merge"},
     {"merge_key": "order_id", "write_disposition": "merge"},
     [("merge_key.changed", "lines")], "major"),
    ("partition hint added: recorded, safe", {},
     {"column_hints": {"day": {"partition": True}}}, [("partition.changed", "lines")], "patch"),
]


@pytest.mark.parametrize(("old", "new", "changes", "bump"), [h[1:] for h in KEY_HINTS],
                         ids=[h[0] for h in KEY_HINTS])
def test_dlt_key_hints_are_in_the_snapshot_and_diffed(
    old: dict[str, Any], new: dict[str, Any], changes: list[tuple[str, str]], bump: str
) -> None:
    before, after = snapshot(Line, _resource(**old)), snapshot(Line, _resource(**new))
    got, required, _ = release_check(before, after)
    assert (got, required) == (changes, bump)


def test_key_hints_are_read_as_landed_names() -> None:
    class Camel(BaseModel):
        orderId: str
        lineNo: int

    @dlt.resource(name="lines", columns=Camel, primary_key=("orderId", "lineNo"))
    def lines() -> Any:
        yield {}

    hints = resource_hints(lines, "lines", SNAKE)
    assert hints.primary_key == ("line_no", "order_id")
    assert resource_hints(_resource(), "lines", SNAKE).primary_key == ()


# -- refused when snapshotted, never silently dropped -----------------------------------------

class DictKeyUnit(BaseModel):
    stock: dict[Annotated[str, Semantics(unit="m")], float]


class TupleUnit(BaseModel):
    point: tuple[Annotated[float, Semantics(unit="m")], Annotated[float, Semantics(unit="m")]]


class SkippedList(BaseModel):
    dlt_config: ClassVar[dict[str, Any]] = {"skip_nested_types": True}
    legs: list[Annotated[float, Semantics(unit="m")]]


class FlattenedParent(BaseModel):
    dlt_config: ClassVar[dict[str, Any]] = {"skip_nested_types": True}
    parcel: Annotated[ParcelKg, Semantics(description="the parcel")]


class RenamedItems(BaseModel):
    legs: list[Annotated[float, Semantics(renamed_from="old_legs")]]


class KeyOfTuple(BaseModel):
    pair: tuple[Annotated[int, Field(ge=0)], str]


@TableSemantics(change_key="updatedAt")
class NoSuchChangeKey(BaseModel):
    updated_at_utc: str


REFUSED: list[tuple[str, type[Any], str]] = [
    ("unit in dict keys", DictKeyUnit, r"`DictKeyUnit.stock` declares `Semantics\(unit='m'\)` "
     r"in the keys of `dict\[.*\]`, where a contract cannot record it"),
    ("unit in a fixed tuple", TupleUnit, r"`TupleUnit.point` declares .* inside `tuple\["),
    ("list field skip_nested_types leaves out", SkippedList,
     r"`SkippedList.legs` declares .* dlt lands no column of its own for the field"),
    ("semantics on a flattened parent", FlattenedParent,
     r"`FlattenedParent.parcel` declares `Semantics\(description='the parcel'\)`, but dlt lands "
     "no column"),
    ("renamed_from on list items", RenamedItems,
     r"`RenamedItems.legs\[\]`: Semantics\(renamed_from=...\) describes a column"),
    ("a bound in a fixed tuple", KeyOfTuple, r"`KeyOfTuple.pair` declares `Ge\(ge=0\)` inside"),
    ("change key names no field", NoSuchChangeKey,
     r"@TableSemantics\(change_key=...\) on `NoSuchChangeKey` names `updatedAt`"),
]


@pytest.mark.parametrize(("model", "message"), [r[1:] for r in REFUSED],
                         ids=[r[0] for r in REFUSED])
def test_a_declaration_the_snapshot_cannot_record_is_refused(
    model: type[Any], message: str
) -> None:
    with pytest.raises(DeclarationError, match=message):
        snapshot(model)


def test_a_key_hint_computed_per_item_is_refused() -> None:
    # dlt allows a computed hint only beside a computed table name (discovery skips those
    # resources); a caller handing one to `resource_hints` directly still gets a refusal
    @dlt.resource(name="lines", columns=Line, table_name=lambda item: "lines",
                  primary_key=lambda item: "order_id")
    def lines() -> Any:
        yield {}

    with pytest.raises(DeclarationError, match=r"Resource `lines` computes `primary_key` per"):
        resource_hints(lines, "lines", SNAKE)
