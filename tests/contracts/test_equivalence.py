"""Properties compare by meaning, not by spelling: units through the unit table with its case
rules, time zones by IANA identity, grain words against the key they describe."""

from __future__ import annotations

import pytest

from dlt_contract_ops.contracts.diff import diff_resources
from dlt_contract_ops.contracts.timezones import TimezoneError, same_timezone, timezone_identity
from dlt_contract_ops.contracts.units import UnitError, canonical_unit, same_unit
from tests.contracts.builders import col, member, res

UNITS: list[tuple[str, str]] = [
    ("m", "m"),
    ("metre", "m"),
    ("Meters", "m"),  # a spelled-out name matches whatever its case
    ("mm", "mm"),
    ("l", "L"),  # SI allows both spellings of the litre
    ("kWh", "kWh"),
    ("°C", "degC"),
    ("items", "item"),
    ("%", "%"),
    ("percent", "%"),
    ("USD", "USD"),
    ("USD_cents", "USD_cents"),
    ("{visits}", "{visits}"),  # a custom unit, in braces, as written
]


@pytest.mark.parametrize(("text", "canonical"), UNITS)
def test_known_units_have_one_canonical_spelling(text: str, canonical: str) -> None:
    assert canonical_unit(text) == canonical


UNKNOWN_UNITS: list[tuple[str, str]] = [
    ("M", r"`M` is not a known unit \(symbols are case-sensitive\)\. Did you mean `m`\?"),
    ("KG", r"Did you mean `kg`\?"),
    ("usd", r"Did you mean `USD`\?"),
    ("XYZ_cents", r"`XYZ_cents` is not a known unit"),
    ("widgets", r"write a custom unit in braces, e.g\. `\{visits\}`"),
]


@pytest.mark.parametrize(("text", "message"), UNKNOWN_UNITS)
def test_unknown_units_are_refused_with_what_was_meant(text: str, message: str) -> None:
    with pytest.raises(UnitError, match=message):
        canonical_unit(text)


ZONES: list[tuple[str, str, bool]] = [
    ("UTC", "Etc/UTC", True),
    ("UTC", "Zulu", True),
    ("UTC", "Z", True),  # RFC 3339
    ("UTC", "+00:00", True),
    ("US/Eastern", "America/New_York", True),
    ("Europe/Kiev", "Europe/Kyiv", True),
    ("+05:30", "+0530", True),
    ("UTC", "GMT", False),  # two zones in the database, though both are offset zero
    ("UTC", "Europe/London", False),
    ("-00:00", "+00:00", False),  # RFC 3339: offset unknown
    ("local", "local", True),  # a wall-clock time in no promised zone
    ("local", "UTC", False),
    ("UTC", "local_no_offset", False),  # unknown text compares as text
]


@pytest.mark.parametrize(("a", "b", "same"), ZONES)
def test_time_zones_compare_by_identity(a: str, b: str, same: bool) -> None:
    assert same_timezone(a, b) is same
    assert same_timezone(b, a) is same


@pytest.mark.parametrize(
    ("name", "message"),
    [("utc", "Did you mean `UTC`?"), ("Europe/Berln", "Did you mean `Europe/Berlin`?"),
     ("localtime", "is not an IANA time zone"), ("local_no_offset", "fixed offset")],
)
def test_an_unknown_time_zone_has_no_identity(name: str, message: str) -> None:
    with pytest.raises(TimezoneError, match=message.replace("?", r"\?")):
        timezone_identity(name)


DIFFS: list[tuple[str, object, object, list[str]]] = [
    ("metres -> m", res(col("d", "double", unit="metres")), res(col("d", "double", unit="m")), []),
    ("m -> M", res(col("d", "double", unit="m")), res(col("d", "double", unit="M")),
     ["unit.changed"]),
    ("m -> mm", res(col("d", "double", unit="m")), res(col("d", "double", unit="mm")),
     ["unit.changed"]),
    ("list items metre -> m", res(col("d", "json", members=(member("[]", unit="metre"),))),
     res(col("d", "json", members=(member("[]", unit="m"),))), []),
    ("UTC -> Etc/UTC", res(col("t", "timestamp", timezone="UTC")),
     res(col("t", "timestamp", timezone="Etc/UTC")), []),
    ("UTC -> GMT", res(col("t", "timestamp", timezone="UTC")),
     res(col("t", "timestamp", timezone="GMT")), ["timezone.changed"]),
    ("ge 1 -> ge 1.0", res(col("n", ge="1")), res(col("n", ge="1.0")), []),
    ("grain reworded", res(col("id"), keys=("id",), grain="one row per order"),
     res(col("id"), keys=("id",), grain="one row for each order"), ["grain.reworded"]),
]


@pytest.mark.parametrize(("old", "new", "expected"), [d[1:] for d in DIFFS],
                         ids=[d[0] for d in DIFFS])
def test_equivalent_spellings_are_no_change(old: object, new: object, expected: list[str]) -> None:
    assert [c.rule_id for c in diff_resources(old, new)] == expected  # type: ignore[arg-type]


def test_same_unit_falls_back_to_text_for_units_nobody_knows() -> None:
    assert same_unit("bananas", "bananas")
    assert not same_unit("bananas", "Bananas")
    assert not same_unit("m", None)
