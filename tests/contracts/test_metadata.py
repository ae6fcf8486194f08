"""Contract metadata: owner, consumer owners, change key and value format travel in the
snapshot and show in the diff, and never break a release by themselves."""

from __future__ import annotations

import datetime as dt
from datetime import datetime
from typing import Annotated, Any

import pytest
from dlt.common.normalizers.naming import snake_case
from pydantic import BaseModel

from dlt_contract_ops.contracts.extract import contract_from_model
from dlt_contract_ops.contracts.model import Release, ResourceContract, Version
from dlt_contract_ops.contracts.release import ReleaseReport, assess
from dlt_contract_ops.contracts.semantics import Semantics, TableSemantics
from dlt_contract_ops.core.naming import expected_table
from dlt_contract_ops.errors import DeclarationError
from dlt_contract_ops.output.contract import render

SNAKE = snake_case.NamingConvention()


def read(model: type[Any]) -> ResourceContract:
    return contract_from_model("erp", expected_table("lines", "lines", model, SNAKE), model, SNAKE)


@TableSemantics(keys=("orderId",), owner="Order Platform",
                consumer_owners=("Finance", "Analytics Engineering"), change_key="updatedAt")
class V1(BaseModel):
    orderId: str
    updatedAt: Annotated[datetime, Semantics(timezone="UTC", value_format="RFC 3339")]


@TableSemantics(keys=("orderId",), owner="Checkout", consumer_owners="Analytics Engineering",
                change_key="ingestedAt")
class V2(BaseModel):
    orderId: str
    updatedAt: Annotated[datetime, Semantics(timezone="UTC", value_format="epoch millis")]
    ingestedAt: Annotated[datetime, Semantics(timezone="UTC")] | None = None


def test_metadata_is_read_from_the_declarations() -> None:
    c = read(V1)
    updated = c.column("updated_at")
    assert updated is not None
    assert (c.owner, c.consumer_owners, c.change_key, updated.value_format) == (
        "Order Platform", ("Analytics Engineering", "Finance"), "updated_at", "RFC 3339",
    )


def test_metadata_changes_show_in_the_diff_and_block_nothing() -> None:
    same = Version(1, 0, 0)
    a = assess(Release("erp", same, (read(V1),)),
               Release("erp", Version(1, 1, 0), (read(V2),)), today=dt.date(2026, 1, 1))
    rules = {f.change.rule_id: (f.severity.value, f.change.evidence) for f in a.findings}
    assert rules == {
        "owner.changed": ("safe", "Order Platform → Checkout"),
        "consumer_owners.changed": (
            "safe", "(Analytics Engineering, Finance) → (Analytics Engineering)"
        ),
        "change_key.changed": ("safe", "updated_at → ingested_at"),
        "value_format.changed": ("safe", "RFC 3339 → epoch millis"),
        "column.added_nullable": ("additive", "(none) → timestamp, nullable"),
    }
    assert a.verdict == "READY"
    text = render(ReleaseReport((a,)), "text")
    assert "owner.changed" in text
    assert "Order Platform → Checkout" in text


def test_metadata_alone_never_needs_more_than_a_patch() -> None:
    @TableSemantics(owner="Someone else")
    class Renamed(BaseModel):
        x: int

    @TableSemantics(owner="Order Platform")
    class Original(BaseModel):
        x: int

    a = assess(Release("erp", Version(1, 0, 0), (read(Original),)),
               Release("erp", Version(1, 0, 0), (read(Renamed),)), today=dt.date(2026, 1, 1))
    assert (a.required.label, a.verdict) == ("patch", "READY")


@pytest.mark.parametrize(
    ("build", "message"),
    [(lambda: TableSemantics(consumer_owners=()), "one or more team names"),
     (lambda: TableSemantics(owner=" "), "must be a non-empty string"),
     (lambda: Semantics(value_format=""), "must be a non-empty string")],
    ids=["no consumer owners", "blank owner", "blank value format"],
)
def test_bad_metadata_fails_where_it_is_written(build: Any, message: str) -> None:
    with pytest.raises(DeclarationError, match=message):
        build()
