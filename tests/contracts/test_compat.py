"""Snapshot format 2 beside format 1: old snapshots still load, hash and diff without spurious
changes; what format 1 could not record is not compared against it, and the report says so."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path

import pytest

from dlt_contract_ops.contracts.canonical import FORMAT, from_document, to_document
from dlt_contract_ops.contracts.diff import diff_resources
from dlt_contract_ops.contracts.model import DltHints, Release, Version
from dlt_contract_ops.contracts.release import assess
from dlt_contract_ops.errors import SnapshotError
from tests.contracts.builders import col, member, res

ROOT = Path(__file__).resolve().parents[2]
RELEASED_V1 = ROOT / "examples/contracts/contracts/orders/1.0.0/order_lines.json"


def released() -> str:
    return RELEASED_V1.read_text(encoding="utf-8")


def test_a_format_1_snapshot_loads_hashes_and_writes_back_byte_for_byte() -> None:
    contract, version = from_document(released(), str(RELEASED_V1))
    assert contract.format_version == 1
    assert contract.hints == DltHints()
    assert to_document(contract, version) == released()


def test_format_1_against_format_2_of_the_same_model_has_no_changes() -> None:
    old, _ = from_document(released(), "old.json")
    # what the current code reads from the same model: format 2, with the dlt hints, a range
    # and declarations inside a json column that format 1 could not record
    columns = (
        *(replace(c, ge="1") if c.name == "quantity" else c for c in old.columns),
        col("legs", "json", True, members=(member("[]", unit="m"),)),
    )
    new = replace(old, columns=columns, format_version=2,
                  hints=DltHints(primary_key=("line_no", "order_id")))
    changes = [c.rule_id for c in diff_resources(old, new)]
    assert changes == ["column.added_nullable"]  # the one real change, nothing spurious
    a = assess(Release("orders", Version(1, 0, 0), (old,)),
               Release("orders", Version(1, 1, 0), (new,)), today=dt.date(2026, 1, 1))
    assert a.verdict == "READY"
    assert any("`order_lines` 1.0.0 is a format 1 snapshot" in n for n in a.notes)


def test_between_two_format_2_snapshots_the_same_differences_are_changes() -> None:
    old, _ = from_document(released(), "old.json")
    old = replace(old, format_version=2)
    new = replace(old, hints=DltHints(primary_key=("order_id",)), columns=tuple(
        replace(c, ge="1") if c.name == "quantity" else c for c in old.columns
    ))
    assert [c.rule_id for c in diff_resources(old, new)] == [
        "primary_key.declared", "range.tightened",
    ]


def test_new_properties_are_left_out_when_undeclared() -> None:
    old, version = from_document(released(), "old.json")
    text = to_document(replace(old, format_version=2), version)
    doc, before = json.loads(text), json.loads(released())
    assert doc["format"] == FORMAT == "dlt-contract-ops/contract@2"
    assert {k for k in doc if doc[k] != before.get(k)} == {"format", "hash"}


def test_format_2_round_trips_members_hints_constraints_and_metadata() -> None:
    contract = res(
        col("id", ge="1", le="1000000"),
        col("legs", "json", members=(member("[]", unit="m", le="100"),
                                     member("[].kind", categories=("run", "walk")))),
        col("at", "timestamp", timezone="UTC", value_format="RFC 3339"),
        col("code", "text", pattern="^[A-Z]{3}$"),
        col("tags", "json", True, min_length=1, max_length=5),
        keys=("id",), primary_key=("id",), merge_key=("at",), partition=("at",),
        owner="Order Platform", consumer_owners=("Finance", "Analytics"), change_key="at",
    )
    text = to_document(contract, Version(2, 0, 0))
    assert from_document(text, "x.json") == (contract, Version(2, 0, 0))
    assert '"members":[{"le":"100","path":"[]","unit":"m"},' in text


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format="dlt-contract-ops/contract@3"),
         r'`format` is .*contract@3.*reads "dlt-contract-ops/contract@1", '
         r'"dlt-contract-ops/contract@2" \(a newer release'),
        (lambda d: d["columns"][0].update(members=[{"unit": "m"}]),
         r"`columns\[0\].members\[0\].path \(id\)` is missing"),
        (lambda d: d["columns"][0].update(members=[{"path": "[]", "max_length": "5"}]),
         r"`columns\[0\].members\[0\].max_length \(id \[\]\)` must be a non-negative integer"),
        (lambda d: d.update(primary_key="id"), r"`primary_key` must be a list of strings"),
    ],
    ids=["future format", "member without path", "member with a bad length", "key as a string"],
)
def test_malformed_format_2_documents_name_the_key(edit: object, message: str) -> None:
    doc = json.loads(to_document(res(col("id")), Version(1, 0, 0)))
    del doc["hash"]
    edit(doc)  # type: ignore[operator]
    with pytest.raises(SnapshotError, match=message):
        from_document(json.dumps(doc), "x.json")
