"""Waiver files: the happy path and every malformed entry, each error naming file and entry."""

from __future__ import annotations

import datetime as dt

import pytest

from dlt_contract_ops.contracts.waivers import parse_waivers
from dlt_contract_ops.errors import WaiverError

GOOD = """
[[waivers]]
rule = "unit.changed"
resource = "order_lines"
column = "unit_price"
reason = "cents migration agreed with finance (FIN-231)"
expires = 2026-03-31

[[waivers]]
rule = "keys.changed"
resource = "order lines (eu)"
reason = "dedup key widened on purpose"
expires = "2026-04-30"
"""


def test_parses_waivers_with_toml_or_text_dates() -> None:
    first, second = parse_waivers(GOOD, "contracts/erp/waivers.toml")
    assert (first.rule, first.resource, first.column, first.expires) == (
        "unit.changed", "order_lines", "unit_price", dt.date(2026, 3, 31),
    )
    assert (second.column, second.expires, second.where) == (
        None, dt.date(2026, 4, 30), "contracts/erp/waivers.toml, waiver #2",
    )


def test_empty_file_has_no_waivers() -> None:
    assert parse_waivers("", "w.toml") == ()


ENTRY = 'rule = "unit.changed"\nresource = "r"\nreason = "x"\nexpires = 2026-01-01\n'
BAD = [
    ("not toml", "[[waivers]\n", r"`w\.toml` is not valid TOML"),
    ("other top-level key", "[waiver]\nrule = 'x'\n", "unknown top-level key `waiver`"),
    ("unknown rule", "[[waivers]]\n" + ENTRY.replace("unit.changed", "unit.changd"),
     r"waiver #1: `rule` is `unit\.changd`, which is no rule id\. Did you mean `unit\.changed`\?"),
    ("unknown key", "[[waivers]]\n" + ENTRY + "colum = 'c'\n",
     "unknown key `colum`. Did you mean `column`"),
    ("no expiry", "[[waivers]]\n" + ENTRY.replace("expires = 2026-01-01\n", ""),
     "`expires` is missing; every waiver needs an expiry date"),
    ("bad expiry", "[[waivers]]\n" + ENTRY.replace("2026-01-01", '"next year"'),
     "`expires` must be a date like 2026-03-31"),
    ("no reason", "[[waivers]]\n" + ENTRY.replace('reason = "x"\n', ""), "`reason` is missing"),
    ("blank resource", "[[waivers]]\n" + ENTRY.replace('resource = "r"', 'resource = " "'),
     "`resource` must be a non-empty string"),
    ("second entry bad", "[[waivers]]\n" + ENTRY + "[[waivers]]\nrule = 'unit.changed'\n",
     r"w\.toml, waiver #2: `resource` is missing"),
]


@pytest.mark.parametrize(("text", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_waiver_files_say_where_and_what(text: str, message: str) -> None:
    with pytest.raises(WaiverError, match=message):
        parse_waivers(text, "w.toml")
