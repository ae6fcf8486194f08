"""Every change rule, both ways: the change that triggers it, the reverse change, and its
severity from each perspective."""

from __future__ import annotations

import pytest

from dlt_contract_ops.contracts.diff import diff_resources
from dlt_contract_ops.contracts.model import ResourceContract
from dlt_contract_ops.contracts.rules import Bump, Rule, Severity
from tests.contracts.builders import col, res

ID = col("id")

# (case id, old, new, rule ids the diff reports) — each forward case is followed by its reverse
CASES: list[tuple[str, ResourceContract | None, ResourceContract | None, list[str]]] = [
    ("resource added", None, res(ID), ["resource.added"]),
    ("resource removed", res(ID), None, ["resource.removed"]),
    ("table changed", res(ID, table="orders"), res(ID, table="orders_v2"),
     ["resource.table_changed"]),
    ("nullable column added", res(ID), res(ID, col("note", "text", True)),
     ["column.added_nullable"]),
    ("nullable column removed", res(ID, col("note", "text", True)), res(ID), ["column.removed"]),
    ("required column added", res(ID), res(ID, col("qty")), ["column.added_required"]),
    ("required column removed", res(ID, col("qty")), res(ID), ["column.removed"]),
    ("declared rename", res(ID, col("price_usd", "double")),
     res(ID, col("price", "double", renamed_from="price_usd")), ["column.renamed"]),
    ("rename back, declared", res(ID, col("price", "double")),
     res(ID, col("price_usd", "double", renamed_from="price")), ["column.renamed"]),
    ("int32 -> int64", res(col("n", "bigint", precision=32)), res(col("n", "bigint")),
     ["type.widened"]),
    ("int64 -> int32", res(col("n", "bigint")), res(col("n", "bigint", precision=32)),
     ["type.narrowed"]),
    ("float32 -> float64", res(col("x", "double", precision=32)), res(col("x", "double")),
     ["type.widened"]),
    ("float64 -> float32", res(col("x", "double")), res(col("x", "double", precision=32)),
     ["type.narrowed"]),
    ("decimal precision up", res(col("d", "decimal", precision=10, scale=2)),
     res(col("d", "decimal", precision=12, scale=2)), ["type.widened"]),
    ("decimal precision down", res(col("d", "decimal", precision=12, scale=2)),
     res(col("d", "decimal", precision=10, scale=2)), ["type.narrowed"]),
    ("decimal scale up, integer digits kept", res(col("d", "decimal", precision=10, scale=2)),
     res(col("d", "decimal", precision=12, scale=4)), ["type.widened"]),
    ("decimal scale up, integer digits lost", res(col("d", "decimal", precision=10, scale=2)),
     res(col("d", "decimal", precision=10, scale=4)), ["type.narrowed"]),
    ("varchar length up", res(col("s", "text", precision=50)),
     res(col("s", "text", precision=255)), ["type.widened"]),
    ("varchar length down", res(col("s", "text", precision=255)),
     res(col("s", "text", precision=50)), ["type.narrowed"]),
    ("varchar length dropped (unbounded)", res(col("s", "text", precision=50)),
     res(col("s", "text")), ["type.widened"]),
    ("text -> bigint", res(col("c", "text")), res(col("c", "bigint")), ["type.changed"]),
    ("bigint -> text", res(col("c", "bigint")), res(col("c", "text")), ["type.changed"]),
    ("became nullable", res(col("c")), res(col("c", nullable=True)), ["nullability.relaxed"]),
    ("became required", res(col("c", nullable=True)), res(col("c")), ["nullability.tightened"]),
    ("category added", res(col("s", "text", categories=("a", "b"))),
     res(col("s", "text", categories=("a", "b", "c"))), ["categories.added"]),
    ("category removed", res(col("s", "text", categories=("a", "b", "c"))),
     res(col("s", "text", categories=("a", "b"))), ["categories.removed"]),
    ("category swapped", res(col("s", "text", categories=("a", "b"))),
     res(col("s", "text", categories=("a", "c"))), ["categories.added", "categories.removed"]),
    ("closed -> open vocabulary", res(col("s", "text", categories=("a", "b"))),
     res(col("s", "text", category_pattern="^[a-z]+$")), ["vocabulary.opened"]),
    ("open -> closed vocabulary", res(col("s", "text", category_pattern="^[a-z]+$")),
     res(col("s", "text", categories=("a", "b"))), ["vocabulary.closed"]),
    ("pattern changed", res(col("s", "text", category_pattern="^[a-z]+$")),
     res(col("s", "text", category_pattern="^[a-z0-9]+$")), ["vocabulary.pattern_changed"]),
    ("vocabulary declared", res(col("s", "text")), res(col("s", "text", categories=("a",))),
     ["vocabulary.declared"]),
    ("vocabulary dropped", res(col("s", "text", category_pattern="^x")), res(col("s", "text")),
     ["vocabulary.dropped"]),
    ("unit changed", res(col("p", "double", unit="USD")), res(col("p", "double", unit="USD_cents")),
     ["unit.changed"]),
    ("unit changed back", res(col("p", "double", unit="USD_cents")),
     res(col("p", "double", unit="USD")), ["unit.changed"]),
    ("unit declared", res(col("p", "double")), res(col("p", "double", unit="USD")),
     ["unit.declared"]),
    ("unit dropped", res(col("p", "double", unit="USD")), res(col("p", "double")),
     ["unit.dropped"]),
    ("timezone changed", res(col("t", "timestamp", timezone="UTC")),
     res(col("t", "timestamp", timezone="local_no_offset")), ["timezone.changed"]),
    ("timezone declared", res(col("t", "timestamp")), res(col("t", "timestamp", timezone="UTC")),
     ["timezone.declared"]),
    ("timezone dropped", res(col("t", "timestamp", timezone="UTC")), res(col("t", "timestamp")),
     ["timezone.dropped"]),
    ("crs changed", res(col("g", "text", crs="EPSG:4326")), res(col("g", "text", crs="EPSG:3857")),
     ["crs.changed"]),
    ("crs declared", res(col("g", "text")), res(col("g", "text", crs="EPSG:4326")),
     ["crs.declared"]),
    ("crs dropped", res(col("g", "text", crs="EPSG:4326")), res(col("g", "text")),
     ["crs.dropped"]),
    ("key changed", res(ID, col("line"), keys=("id",)), res(ID, col("line"), keys=("id", "line")),
     ["keys.changed"]),
    ("key changed back", res(ID, col("line"), keys=("id", "line")),
     res(ID, col("line"), keys=("id",)), ["keys.changed"]),
    ("key declared", res(ID), res(ID, keys=("id",)), ["keys.declared"]),
    ("key dropped", res(ID, keys=("id",)), res(ID), ["keys.dropped"]),
    ("grain changed with the key", res(ID, col("line"), keys=("id",), grain="one row per order"),
     res(ID, col("line"), keys=("id", "line"), grain="one row per order line"),
     ["keys.changed", "grain.changed"]),
    ("grain changed with dlt's primary key",
     res(ID, col("line"), primary_key=("id",), grain="one row per order"),
     res(ID, col("line"), primary_key=("id", "line"), grain="one row per order line"),
     ["primary_key.changed", "grain.changed"]),
    ("grain reworded, key kept", res(ID, keys=("id",), grain="one row per order"),
     res(ID, keys=("id",), grain="each row is one order"), ["grain.reworded"]),
    ("grain declared", res(ID), res(ID, grain="one row per order"), ["grain.declared"]),
    ("grain dropped", res(ID, grain="one row per order"), res(ID), ["grain.dropped"]),
    ("primary key changed", res(ID, col("line"), primary_key=("id",)),
     res(ID, col("line"), primary_key=("line",)), ["primary_key.changed"]),
    ("primary key declared", res(ID), res(ID, primary_key=("id",)), ["primary_key.declared"]),
    ("primary key dropped", res(ID, primary_key=("id",)), res(ID), ["primary_key.dropped"]),
    ("merge key changed", res(ID, col("day"), merge_key=("id",)),
     res(ID, col("day"), merge_key=("day",)), ["merge_key.changed"]),
    ("merge key declared", res(ID), res(ID, merge_key=("id",)), ["merge_key.declared"]),
    ("merge key dropped", res(ID, merge_key=("id",)), res(ID), ["merge_key.dropped"]),
    ("partition added", res(ID), res(ID, partition=("id",)), ["partition.changed"]),
    ("cluster dropped", res(ID, cluster=("id",)), res(ID), ["cluster.changed"]),
    ("unique added", res(ID), res(ID, unique=("id",)), ["unique.changed"]),
    ("ge 1 -> ge 0", res(col("n", ge="1")), res(col("n", ge="0")), ["range.loosened"]),
    ("ge 0 -> ge 1", res(col("n", ge="0")), res(col("n", ge="1")), ["range.tightened"]),
    ("le declared", res(col("n")), res(col("n", le="100")), ["range.tightened"]),
    ("lt dropped", res(col("n", lt="100")), res(col("n")), ["range.loosened"]),
    ("ge 0 -> gt 0", res(col("n", ge="0")), res(col("n", gt="0")), ["range.tightened"]),
    ("number bound -> date bound", res(col("n", ge="0")), res(col("n", ge="2020-01-01")),
     ["range.changed"]),
    ("multiple of 5 -> 10", res(col("n", multiple_of="5")), res(col("n", multiple_of="10")),
     ["range.tightened"]),
    ("multiple of 2 -> 3", res(col("n", multiple_of="2")), res(col("n", multiple_of="3")),
     ["range.changed"]),
    ("min length up", res(col("s", "json", min_length=1)), res(col("s", "json", min_length=2)),
     ["length.tightened"]),
    ("max length up", res(col("s", "json", max_length=5)), res(col("s", "json", max_length=9)),
     ["length.loosened"]),
    ("value pattern declared", res(col("s", "text")), res(col("s", "text", pattern="^a")),
     ["pattern.declared"]),
    ("value pattern dropped", res(col("s", "text", pattern="^a")), res(col("s", "text")),
     ["pattern.dropped"]),
    ("value pattern changed", res(col("s", "text", pattern="^a")),
     res(col("s", "text", pattern="^b")), ["pattern.changed"]),
    ("value format changed", res(col("t", "text", value_format="RFC 3339")),
     res(col("t", "text", value_format="ISO 8601 basic")), ["value_format.changed"]),
    ("owner declared", res(ID), res(ID, owner="Order Platform"), ["owner.changed"]),
    ("consumer owners changed", res(ID, consumer_owners=("BI",)),
     res(ID, consumer_owners=("BI", "Finance")), ["consumer_owners.changed"]),
    ("change key changed", res(ID, col("at", "timestamp"), change_key="at"),
     res(ID, col("at", "timestamp"), change_key="id"), ["change_key.changed"]),
    ("description changed", res(col("c", description="old")), res(col("c", description="new")),
     ["description.changed"]),
    ("description added", res(col("c")), res(col("c", description="new")),
     ["description.changed"]),
]


@pytest.mark.parametrize(("old", "new", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_rule_is_reported(
    old: ResourceContract | None, new: ResourceContract | None, expected: list[str]
) -> None:
    assert [c.rule_id for c in diff_resources(old, new)] == expected


def test_every_rule_has_a_case() -> None:
    covered = {rule for _, _, _, ids in CASES for rule in ids}
    assert covered == {r.rule_id for r in Rule}


def test_identical_contracts_have_no_changes() -> None:
    full = res(col("p", "double", unit="USD", description="x"),
               col("s", "text", True, categories=("a",)), keys=("p",), grain="g")
    assert diff_resources(full, full) == ()


# rule id -> (consumer severity, producer severity): the policy, written out once more by hand
SEVERITIES: dict[str, tuple[str, str]] = {
    "resource.added": ("additive", "additive"),
    "resource.removed": ("breaking", "breaking"),
    "resource.table_changed": ("breaking", "breaking"),
    "column.removed": ("breaking", "breaking"),
    "column.added_nullable": ("additive", "additive"),
    "column.added_required": ("additive", "breaking"),
    "column.renamed": ("breaking", "breaking"),
    "type.widened": ("additive", "additive"),
    "type.narrowed": ("breaking", "breaking"),
    "type.changed": ("breaking", "breaking"),
    "nullability.relaxed": ("breaking", "additive"),
    "nullability.tightened": ("additive", "breaking"),
    "categories.added": ("additive", "additive"),
    "categories.removed": ("breaking", "breaking"),
    "vocabulary.opened": ("breaking", "additive"),
    "vocabulary.closed": ("additive", "breaking"),
    "vocabulary.pattern_changed": ("breaking", "breaking"),
    "vocabulary.declared": ("additive", "breaking"),
    "vocabulary.dropped": ("breaking", "additive"),
    "unit.changed": ("breaking", "breaking"),
    "unit.declared": ("additive", "breaking"),
    "unit.dropped": ("breaking", "additive"),
    "timezone.changed": ("breaking", "breaking"),
    "timezone.declared": ("additive", "breaking"),
    "timezone.dropped": ("breaking", "additive"),
    "crs.changed": ("breaking", "breaking"),
    "crs.declared": ("additive", "breaking"),
    "crs.dropped": ("breaking", "additive"),
    "keys.changed": ("breaking", "breaking"),
    "keys.declared": ("additive", "breaking"),
    "keys.dropped": ("breaking", "additive"),
    "grain.changed": ("breaking", "breaking"),
    "grain.reworded": ("safe", "safe"),
    "primary_key.changed": ("breaking", "breaking"),
    "primary_key.declared": ("additive", "breaking"),
    "primary_key.dropped": ("breaking", "additive"),
    "merge_key.changed": ("breaking", "breaking"),
    "merge_key.declared": ("additive", "breaking"),
    "merge_key.dropped": ("breaking", "additive"),
    "partition.changed": ("safe", "safe"),
    "cluster.changed": ("safe", "safe"),
    "unique.changed": ("safe", "safe"),
    # a tighter range breaks writers (old values may be refused); a looser one breaks readers
    "range.tightened": ("additive", "breaking"),
    "range.loosened": ("breaking", "additive"),
    "range.changed": ("breaking", "breaking"),
    "length.tightened": ("additive", "breaking"),
    "length.loosened": ("breaking", "additive"),
    "pattern.declared": ("additive", "breaking"),
    "pattern.dropped": ("breaking", "additive"),
    "pattern.changed": ("breaking", "breaking"),
    "value_format.changed": ("safe", "safe"),
    "owner.changed": ("safe", "safe"),
    "consumer_owners.changed": ("safe", "safe"),
    "change_key.changed": ("safe", "safe"),
    "grain.declared": ("additive", "breaking"),
    "grain.dropped": ("breaking", "additive"),
    "description.changed": ("safe", "safe"),
}


@pytest.mark.parametrize("rule", list(Rule), ids=lambda r: r.rule_id)
def test_severity_per_perspective(rule: Rule) -> None:
    consumer, producer = SEVERITIES[rule.rule_id]
    assert rule.severity("consumer").value == consumer
    assert rule.severity("producer").value == producer


@pytest.mark.parametrize(
    ("severity", "bump"),
    [(Severity.BREAKING, Bump.MAJOR), (Severity.ADDITIVE, Bump.MINOR), (Severity.SAFE, Bump.PATCH)],
)
def test_severity_bump(severity: Severity, bump: Bump) -> None:
    assert severity.bump is bump


def test_rule_ids_are_unique_and_stable_looking() -> None:
    ids = [r.rule_id for r in Rule]
    assert len(ids) == len(set(ids))
    assert all(Rule.by_id(i) is not None for i in ids)
    assert Rule.by_id("unit.changd") is None
