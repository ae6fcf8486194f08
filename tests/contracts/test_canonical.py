"""Canonical snapshot documents: byte-stable, order-independent, hashed, and strict on read."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from dlt_contract_ops.contracts.canonical import content_hash, from_document, to_document
from dlt_contract_ops.contracts.model import Version
from dlt_contract_ops.errors import SnapshotError
from tests.contracts.builders import col, res

V1 = Version(1, 0, 0)
WIDE = res(
    *(col(f"c{i:02d}", "double", True, unit="USD") for i in range(30)),
    col("status", "text", categories=("paid", "pending")),
    col("at", "timestamp", timezone="UTC", description="when it happened"),
    keys=("at", "status"),
    grain="one row per status change",
)


def test_document_round_trips() -> None:
    contract, version = from_document(to_document(WIDE, V1), "x.json")
    assert (contract, version) == (WIDE, V1)


def test_same_contract_gives_identical_bytes_whatever_the_declaration_order() -> None:
    shuffled = res(*reversed(WIDE.columns), keys=("status", "at"),
                   grain="one row per status change")
    assert to_document(shuffled, V1) == to_document(WIDE, V1)
    assert to_document(WIDE, V1).encode() == to_document(WIDE, V1).encode()


def test_document_is_sorted_compact_and_small() -> None:
    text = to_document(WIDE, V1)
    doc = json.loads(text)
    assert list(doc) == sorted(doc)
    assert [c["name"] for c in doc["columns"]] == sorted(c["name"] for c in doc["columns"])
    # undeclared properties are left out, one column per line
    assert doc["columns"][0] == {"name": "at", "type": "timestamp", "nullable": False,
                                 "timezone": "UTC", "description": "when it happened"}
    # braces, the columns list's two lines, the nine other keys
    assert len(text.splitlines()) == len(WIDE.columns) + 13
    # a wide table stays small: one short line per column plus a fixed header
    assert len(text) < 400 + 70 * len(WIDE.columns)


def test_hash_depends_on_content_not_version() -> None:
    assert json.loads(to_document(WIDE, V1))["hash"] == json.loads(
        to_document(WIDE, Version(7, 0, 0))
    )["hash"]
    changed = replace(WIDE, columns=(*WIDE.columns[:-1], col("at", "timestamp")))
    assert content_hash(changed) != content_hash(WIDE)


def test_edited_released_snapshot_is_refused() -> None:
    text = to_document(WIDE, V1).replace('"unit":"USD"', '"unit":"USD_cents"', 1)
    with pytest.raises(SnapshotError, match=r"`contracts/erp/1\.0\.0/orders\.json`: `hash` does"):
        from_document(text, "contracts/erp/1.0.0/orders.json")


def test_hand_written_document_without_hash_is_accepted() -> None:
    doc = json.loads(to_document(WIDE, V1))
    del doc["hash"]
    contract, _ = from_document(json.dumps(doc), "hand.json")
    assert contract == WIDE


def _doc(**changes: object) -> str:
    doc = json.loads(to_document(res(col("id"), col("price", "double")), V1))
    del doc["hash"]
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return json.dumps(doc)


BAD = [
    ("not json", "{", r"`s\.json` is not valid JSON"),
    ("not an object", "[]", "must hold a JSON object"),
    ("other format", _doc(format="x@9"), r"`format` is 'x@9'"),
    ("no columns", _doc(columns=None), "`columns` must be a list"),
    ("bad version", _doc(version="1.0"), r"`version` `1\.0` is not a release version"),
    ("no source", _doc(source=None), "`source` is missing"),
    ("nullable not bool", _doc(columns=[{"name": "id", "type": "bigint", "nullable": "no"}]),
     r"`columns\[0\]\.nullable \(id\)` must be true or false"),
    ("unit not text", _doc(columns=[{"name": "p", "type": "double", "nullable": True,
                                     "unit": 5}]),
     r"`columns\[0\]\.unit \(p\)` must be a string"),
    ("negative precision", _doc(columns=[{"name": "p", "type": "text", "nullable": True,
                                          "precision": -1}]),
     r"`columns\[0\]\.precision \(p\)` must be a non-negative integer"),
    ("duplicate column", _doc(columns=[{"name": "p", "type": "text", "nullable": True}] * 2),
     "lists `p` twice"),
    ("keys not strings", _doc(keys=[1]), "`keys` must be a list of strings"),
]


@pytest.mark.parametrize(("text", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_malformed_documents_name_the_file_and_key(text: str, message: str) -> None:
    with pytest.raises(SnapshotError, match=message):
        from_document(text, "s.json")
