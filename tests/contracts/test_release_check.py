"""The release check: declared vs required bump, perspective, waivers and their expiry, verdicts."""

from __future__ import annotations

import datetime as dt

import pytest

from dlt_contract_ops.contracts.model import Version, declared_bump
from dlt_contract_ops.contracts.release import ReleaseReport, Waiver, assess, unused_waivers
from dlt_contract_ops.contracts.rules import Bump, Perspective
from tests.contracts.builders import col, release, res

TODAY = dt.date(2026, 3, 1)


@pytest.mark.parametrize(
    ("old", "new", "bump"),
    [
        ("1.2.3", "2.0.0", "major"),
        ("1.2.3", "1.3.0", "minor"),
        ("1.2.3", "1.2.4", "patch"),
        ("1.2.3", "1.2.3", "none"),
        ("1.9.0", "1.10.0", "minor"),  # numeric, not lexical
        ("0.9.9", "1.0.0", "major"),
        ("1.2.3", "1.2.2", None),
        ("2.0.0", "1.9.9", None),
    ],
)
def test_declared_bump(old: str, new: str, bump: str | None) -> None:
    got = declared_bump(Version.parse(old), Version.parse(new))
    assert (got.label if got is not None else None) == bump


@pytest.mark.parametrize("text", ["1.0", "v1.0.0", "1.0.0-rc1", "01.0.0", "", "a.b.c"])
def test_version_must_be_major_minor_patch(text: str) -> None:
    with pytest.raises(ValueError, match=r"MAJOR\.MINOR\.PATCH"):
        Version.parse(text)


OLD = release("1.0.0", res(col("id"), col("price", "double", unit="USD")))
REQUIRED_ADDED = res(col("id"), col("price", "double", unit="USD"), col("qty"))


@pytest.mark.parametrize(
    ("perspective", "version", "verdict", "required"),
    [
        ("consumer", "1.1.0", "READY", "minor"),   # consumers may ignore a new column
        ("producer", "1.1.0", "BLOCKED", "major"),  # writers must now fill it
        ("producer", "2.0.0", "READY", "major"),
    ],
)
def test_perspective_decides_a_required_column(
    perspective: Perspective, version: str, verdict: str, required: str
) -> None:
    a = assess(OLD, release(version, REQUIRED_ADDED), perspective=perspective, today=TODAY)
    assert (a.verdict, a.required.label) == (verdict, required)


def test_a_lower_version_blocks_even_without_changes() -> None:
    a = assess(release("1.2.0", *OLD.resources), release("1.1.0", *OLD.resources), today=TODAY)
    assert a.verdict == "BLOCKED"
    assert a.declared is None
    assert "lower than 1.2.0" in a.notes[0]


def test_safe_changes_never_block() -> None:
    new = release("1.0.0", res(col("id", description="order id"),
                               col("price", "double", unit="USD")))
    a = assess(OLD, new, today=TODAY)
    assert (a.required, a.verdict, a.offending) == (Bump.PATCH, "READY", ())


def test_unchanged_release_is_ready_at_the_same_version() -> None:
    a = assess(OLD, OLD, today=TODAY)
    assert (a.required, a.verdict, a.findings) == (Bump.NONE, "READY", ())


CENTS = release("1.0.1", res(col("id"), col("price", "double", unit="USD_cents")))


def waiver(expires: dt.date, *, rule: str = "unit.changed", column: str | None = "price") -> Waiver:
    return Waiver(rule, "orders", column, "finance agreed (FIN-1)", expires, "w.toml, waiver #1")


@pytest.mark.parametrize(
    ("expires", "verdict", "waived", "expired"),
    [
        (TODAY + dt.timedelta(days=30), "READY", True, False),
        (TODAY, "READY", True, False),  # good through its expiry day
        (TODAY - dt.timedelta(days=1), "BLOCKED", False, True),
    ],
    ids=["active", "expires-today", "expired"],
)
def test_waiver_expiry(expires: dt.date, verdict: str, waived: bool, expired: bool) -> None:
    a = assess(OLD, CENTS, waivers=[waiver(expires)], today=TODAY)
    (finding,) = a.findings
    assert a.verdict == verdict
    assert (finding.waived, finding.waiver_expired) == (waived, expired)
    # a waived break is still reported
    assert finding.change.rule_id == "unit.changed"
    if expired:
        assert a.notes == (
            f"waiver for `unit.changed` on `orders.price` expired on {expires.isoformat()} "
            "(w.toml, waiver #1): it blocks again",
        )
    else:
        assert a.required is Bump.NONE  # the waived break does not count toward the bump


@pytest.mark.parametrize(
    "other",
    [
        waiver(dt.date(2030, 1, 1), rule="unit.dropped"),
        waiver(dt.date(2030, 1, 1), column="id"),
        waiver(dt.date(2030, 1, 1), column=None),
        Waiver("unit.changed", "customers", "price", "r", dt.date(2030, 1, 1)),
    ],
    ids=["other-rule", "other-column", "resource-level", "other-resource"],
)
def test_waiver_must_match_rule_resource_and_column(other: Waiver) -> None:
    a = assess(OLD, CENTS, waivers=[other], today=TODAY)
    assert a.verdict == "BLOCKED"
    report = ReleaseReport((a,))
    assert len(unused_waivers(report, [other])) == 1


def test_used_waiver_is_not_reported_unused() -> None:
    w = waiver(dt.date(2030, 1, 1))
    report = ReleaseReport((assess(OLD, CENTS, waivers=[w], today=TODAY),))
    assert unused_waivers(report, [w]) == ()


def test_report_is_ready_only_when_every_assessment_is() -> None:
    ok = assess(OLD, release("2.0.0", *CENTS.resources), today=TODAY)
    bad = assess(OLD, CENTS, today=TODAY)
    assert ReleaseReport((ok, ok)).ready
    report = ReleaseReport((ok, bad))
    assert (report.verdict, report.blocked_versions) == ("BLOCKED", (Version(1, 0, 0),))
