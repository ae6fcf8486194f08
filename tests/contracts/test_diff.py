"""Release diffs end to end in the pure core: the 001 unit/time-zone scenario, the nine
differences of 002 with their bumps, renames, and the schema-only view."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

import pytest

from dlt_contract_ops.contracts.diff import diff_releases, diff_resources
from dlt_contract_ops.contracts.model import ColumnContract, Release
from dlt_contract_ops.contracts.release import assess
from tests.contracts.builders import col, release, res

TODAY = dt.date(2026, 3, 1)


def atlasmart(version: str, *, unit: str, tz: str, discount: bool) -> Release:
    """The 001 order-lines contract: v1 in dollars and UTC; the proposed release adds a
    nullable discount code and quietly moves to cents and local time."""
    columns = [
        col("order_id", "text"),
        col("line_no"),
        col("product_id", "text"),
        col("quantity", unit="item"),
        col("unit_price", "double", unit=unit),
        col("updated_at", "timestamp", timezone=tz),
    ]
    if discount:
        columns.append(col("discount_code", "text", True))
    lines = res(*columns, resource="order_lines", keys=("order_id", "line_no"),
                grain="one row per ERP order_id + line_no")
    return release(version, lines, source="atlasmart")


V1 = atlasmart("1.0.0", unit="USD", tz="UTC", discount=False)
# the producer ran a schema-only check, saw one compatible change and declared a minor bump
V2 = atlasmart("1.1.0", unit="USD_cents", tz="local_no_offset", discount=True)


def test_001_schema_only_diff_sees_one_compatible_change() -> None:
    a = assess(V1, V2, schema_only=True, today=TODAY)
    assert [(f.severity.value, f.change.rule_id, f.change.column) for f in a.findings] == [
        ("additive", "column.added_nullable", "discount_code"),
    ]
    assert a.required.label == "minor"
    assert a.verdict == "READY"


def test_001_semantic_diff_finds_two_breaking_and_one_compatible_and_blocks() -> None:
    a = assess(V1, V2, today=TODAY)
    assert sorted((f.severity.value, f.change.rule_id, f.change.evidence) for f in a.findings) == [
        ("additive", "column.added_nullable", "(none) → text, nullable"),
        ("breaking", "timezone.changed", "UTC → local_no_offset"),
        ("breaking", "unit.changed", "USD → USD_cents"),
    ]
    assert a.required.label == "major"
    assert a.declared is not None
    assert a.declared.label == "minor"
    assert a.verdict == "BLOCKED"
    assert {f.change.column for f in a.offending} == {"unit_price", "updated_at"}
    # and the blind spot is shown side by side
    assert a.schema_only_view is not None
    assert (a.schema_only_view.visible, a.schema_only_view.ready) == (1, True)


def test_001_a_major_release_of_the_same_change_is_ready() -> None:
    v2_major = atlasmart("2.0.0", unit="USD_cents", tz="local_no_offset", discount=True)
    assert assess(V1, v2_major, today=TODAY).verdict == "READY"


BASE = res(
    col("cell_id", "bigint", precision=32),
    col("land_use", "text", categories=("residential", "retail")),
    col("density", "double", unit="people/km2"),
    col("geom", "text", crs="EPSG:4326"),
    col("area", "double"),
)


def _replace(name: str, **changes: Any) -> tuple[ColumnContract, ...]:
    return tuple(replace(c, **changes) if c.name == name else c for c in BASE.columns)


NINE = [
    # breaking → major
    ("column removed", tuple(c for c in BASE.columns if c.name != "area"), "major"),
    ("dtype narrowed", _replace("density", precision=32), "major"),
    ("became nullable", _replace("density", nullable=True), "major"),
    ("categorical value removed", _replace("land_use", categories=("residential",)), "major"),
    ("unit changed", _replace("density", unit="people/mi2"), "major"),
    ("CRS changed", _replace("geom", crs="EPSG:3857"), "major"),
    # additive → minor
    ("column added", (*BASE.columns, col("name", "text", True)), "minor"),
    ("dtype widened", _replace("cell_id", precision=None), "minor"),
    ("categorical value added",
     _replace("land_use", categories=("residential", "retail", "unknown")), "minor"),
    # safe → patch; nothing at all → no bump needed
    ("only the description changed", _replace("area", description="in km2"), "patch"),
    ("no shape difference", BASE.columns, "none"),
]


@pytest.mark.parametrize(("columns", "bump"), [n[1:] for n in NINE], ids=[n[0] for n in NINE])
def test_002_each_difference_requires_its_bump(
    columns: tuple[ColumnContract, ...], bump: str
) -> None:
    old = release("1.0.0", BASE)
    new = release("1.0.1", res(*columns))
    a = assess(old, new, today=TODAY)
    assert a.required.label == bump
    # a release declaring exactly the required bump passes, one bump less is blocked
    for version, ready in {"major": [("2.0.0", True), ("1.1.0", False)],
                           "minor": [("1.1.0", True), ("1.0.1", False)],
                           "patch": [("1.0.1", True), ("1.0.0", True)],
                           "none": [("1.0.0", True)]}[bump]:
        assert assess(old, release(version, res(*columns)), today=TODAY).ready is ready, version


def test_002_reproducer_widened_new_value_now_nullable() -> None:
    old = release("1.0.0", res(col("cell_id", precision=32),
                               col("land_use", "text", categories=("residential", "retail")),
                               col("density", "double")))
    new = release("1.1.0", res(col("cell_id"),
                               col("land_use", "text",
                                   categories=("residential", "retail", "unknown")),
                               col("density", "double", nullable=True)))
    a = assess(old, new, today=TODAY)
    assert [(f.change.rule_id, f.change.evidence) for f in a.findings] == [
        ("type.widened", "bigint(32) → bigint"),
        ("nullability.relaxed", "required → nullable"),
        ("categories.added", "+unknown"),
    ]
    assert a.required.label == "major"
    assert [f.change.column for f in a.offending] == ["density"]


def test_rename_is_one_breaking_change_and_carries_the_other_differences() -> None:
    old = res(col("price_usd", "double", unit="USD"), col("id"), keys=("id", "price_usd"))
    new = res(col("price", "double", unit="USD_cents", renamed_from="price_usd"), col("id"),
              keys=("id", "price"))
    changes = diff_resources(old, new)
    # the key moved with the rename: it is the same key, not a key change
    assert [(c.rule_id, c.column, c.old, c.new) for c in changes] == [
        ("column.renamed", "price", "price_usd", "price"),
        ("unit.changed", "price", "USD", "USD_cents"),
    ]
    # a names-and-types diff knows no renames and no keys
    assert [c.rule_id for c in diff_resources(old, new, schema_only=True)] == [
        "column.added_required",
        "column.removed",
    ]


def test_schema_only_sees_a_rename_as_removal_plus_addition() -> None:
    old = res(col("price_usd", "double"))
    new = res(col("price", "double", renamed_from="price_usd"))
    assert [(c.rule_id, c.column) for c in diff_resources(old, new, schema_only=True)] == [
        ("column.added_required", "price"),
        ("column.removed", "price_usd"),
    ]


@pytest.mark.parametrize(
    ("old_names", "new_columns", "expected"),
    [
        # the old name is gone and declared: a rename
        (("a",), (col("b", renamed_from="a"),), ["column.renamed"]),
        # declared in an earlier release, the old name is long gone: nothing to report
        (("b",), (col("b", renamed_from="a"),), []),
        # the old name is still there: the declaration cannot be a rename
        (("a",), (col("a"), col("b", renamed_from="a")), ["column.added_required"]),
        # the declared old name never existed: an addition, and x's removal
        (("x",), (col("b", renamed_from="a"),), ["column.added_required", "column.removed"]),
        # the new name existed before too: not a rename
        (("a", "b"), (col("b", renamed_from="a"),), ["column.removed"]),
    ],
    ids=["renamed", "inert", "old-still-present", "unknown-old-name", "new-name-existed"],
)
def test_rename_declaration_cases(
    old_names: tuple[str, ...], new_columns: tuple[ColumnContract, ...], expected: list[str]
) -> None:
    old = res(*(col(n) for n in old_names))
    new = res(*new_columns)
    assert sorted(c.rule_id for c in diff_resources(old, new)) == sorted(expected)


def test_release_diff_covers_resources_on_either_side() -> None:
    old = release("1.0.0", res(col("id"), resource="a"), res(col("id"), resource="b"))
    new = release("1.1.0", res(col("id"), resource="b"), res(col("id"), resource="c"))
    assert [(c.rule_id, c.resource) for c in diff_releases(old, new)] == [
        ("resource.removed", "a"),
        ("resource.added", "c"),
    ]


def test_odd_identifiers_are_data() -> None:
    name = 'Preis "€" / Stück'
    old = res(col(name, "double", unit="EUR"), resource="bestellungen-ü")
    new = res(col(name, "double", unit="EUR_cent"), resource="bestellungen-ü")
    (change,) = diff_resources(old, new)
    assert change.subject == f"bestellungen-ü.{name}"
    assert change.evidence == "EUR → EUR_cent"
