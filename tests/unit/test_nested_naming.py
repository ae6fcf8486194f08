"""Child tables expected from a model's list fields (`core.naming.nested_tables`), as dlt's
relational normalizer names them."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from dlt.common.normalizers.naming import snake_case
from pydantic import BaseModel, Field

from dlt_contract_ops.core.naming import expected_table, nested_tables

SKIP: dict[str, Any] = {"skip_nested_types": True}


class Tag(BaseModel):
    tagName: str
    weight: float | None = None


class Address(BaseModel):
    city: str


class Label(BaseModel):
    name: str
    owner: Address  # flattened into owner__city
    tags: list[Tag] = []  # a grandchild table


class User(BaseModel):
    dlt_config: ClassVar[dict[str, Any]] = SKIP
    id: int
    userLabels: list[Label] = Field(default=[], alias="labels")
    scores: list[int] | None = None


class Plain(BaseModel):  # no skip_nested_types: lists are json columns, no child tables
    id: int
    labels: list[Label] = []


CASES: list[tuple[type[BaseModel], list[tuple[str, str, list[str], str | None]]]] = [
    (User, [
        ("users__labels", "users", ["name", "owner__city"], None),
        ("users__labels__tags", "users__labels", ["tag_name", "weight"], None),
        ("users__scores", "users", ["value"], "bigint"),
    ]),
    (Plain, []),
]


@pytest.mark.parametrize(("model", "expected"), CASES, ids=[m.__name__ for m, _ in CASES])
def test_child_tables_of_list_fields(
    model: type[BaseModel], expected: list[tuple[str, str, list[str], str | None]]
) -> None:
    naming = snake_case.NamingConvention()
    root = expected_table("users", "Users", model, naming)
    children = nested_tables(root, model, naming)
    assert [(t.table, t.parent, sorted(t.names)) for t in children] == [
        (table, parent, names) for table, parent, names, _ in expected]
    assert {t.root for t in children} <= {"users"}
    assert all(t.resource == "users" for t in children)
    for t, (_, _, _, value_type) in zip(children, expected, strict=True):
        if value_type:
            assert t.columns[0].data_type == value_type


def test_a_long_child_name_is_shortened_as_dlt_shortens_it() -> None:
    naming = snake_case.NamingConvention(max_length=15)
    root = expected_table("users", "users", User, naming)
    [labels, tags, _] = nested_tables(root, User, naming)
    assert labels.table == "users__labels"  # fits
    # the whole path shortened once (dlt's normalizer), with a hash tag
    assert tags.table == naming.shorten_fragments("users", "labels", "tags")
    assert len(tags.table) == 15
