"""The logging sink's exact lines, and the reconciler's own WARNING line for errors."""

from __future__ import annotations

import json
import logging

import pytest

from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sinks.logging_sink import (
    LoggingSink,
    drift_detail,
    drift_line,
    error_line,
    where,
)
from tests.sinks.conftest import make_error, make_finding


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        (("pipe", "src", "res"), "pipe.src.res"),
        ((None, "src", "res"), "src.res"),
        (("pipe", "src", None), "pipe.src"),
        # a part that is not a plain token is JSON-quoted, so the dots stay unambiguous
        (("pipe", "src", "Order Items"), 'pipe.src."Order Items"'),
        (("pipe", "src", "a.b"), 'pipe.src."a.b"'),
        (("pipe", "src", 'say "hi"'), 'pipe.src."say \\"hi\\""'),
        (("pipe", "src", "größe"), "pipe.src.größe"),
        (("pipe", "src", "ip-address"), "pipe.src.ip-address"),
    ],
)
def test_where(parts: tuple[str | None, str | None, str | None], expected: str) -> None:
    assert where(*parts) == expected


HINT = " | reproduce SELECT: `reconcile --format json` or the report"
ID = make_finding().id


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            # the reproduce SELECT (often ~900 characters) stays in JSON and the report; the
            # line names the table and the finding id to find it by
            {},
            'schema drift kind=additive at=shop_pipeline.shop."Order Items" table=order_items '
            f'columns=["payload_size", "Straße-Nr"] id={ID}' + HINT,
        ),
        (
            {"drift_type": "removal", "pipeline": None, "resource": "events", "table": "events",
             "reproduce": None, "columns": ["actor_login"]},
            "schema drift kind=removal at=shop.events table=events columns=[\"actor_login\"] "
            f"id={make_finding(drift_type='removal', table='events', columns=['actor_login']).id}",
        ),
        (
            {"resource": "orders", "table": "shop orders", "columns": ["a"],
             "reproduce": "SELECT a\nFROM t\r\nLIMIT 5"},
            'schema drift kind=additive at=shop_pipeline.shop.orders table="shop orders" '
            f'columns=["a"] id={make_finding(table="shop orders", columns=["a"]).id}' + HINT,
        ),
    ],
)
def test_drift_line(overrides: dict[str, object], expected: str) -> None:
    assert drift_line(make_finding(**overrides)) == expected


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            {},
            'reconciler error detector=additive at=shop_pipeline.shop."Order Items": '
            "sample query for `order_items` failed: relation does not exist",
        ),
        (
            {"detector": None, "resource": None, "pipeline": None, "message": "boom\nbang"},
            "reconciler error at=shop: boom bang",
        ),
    ],
)
def test_error_line(overrides: dict[str, object], expected: str) -> None:
    assert error_line(make_error(**overrides)) == expected


@pytest.mark.parametrize(("severity", "levelno"), [
    ("error", logging.ERROR), ("warning", logging.WARNING), ("info", logging.INFO),
])
def test_drift_is_one_line_at_its_severity(
    caplog: pytest.LogCaptureFixture, severity: str, levelno: int
) -> None:
    finding = make_finding(severity=severity)
    with caplog.at_level(logging.DEBUG, logger="dlt_contract_ops"):
        LoggingSink().emit_drift(finding)
    [record] = caplog.records
    assert (record.name, record.levelno) == ("dlt_contract_ops.alerts", levelno)
    assert record.getMessage() == drift_line(finding)
    assert record.exc_info is None


@pytest.mark.parametrize(("severity", "levelno"), [
    ("error", logging.ERROR), ("warning", logging.WARNING), ("info", logging.WARNING),
])
def test_the_fallback_detail_is_at_least_a_warning(
    caplog: pytest.LogCaptureFixture, severity: str, levelno: int
) -> None:
    """It stands in for a lost alert: a log kept at WARNING must not drop an info finding."""
    with caplog.at_level(logging.DEBUG, logger="dlt_contract_ops"):
        LoggingSink(detail=True).emit_drift(make_finding(severity=severity))
    assert [r.levelno for r in caplog.records] == [levelno]


def test_detail_is_the_line_then_the_whole_finding(caplog: pytest.LogCaptureFixture) -> None:
    """The fallback for an undelivered finding: nothing a sink would have carried is lost."""
    finding = make_finding(
        drift_type="type", expected_types={"payload_size": "text"}, alert="undelivered"
    )
    with caplog.at_level(logging.DEBUG, logger="dlt_contract_ops"):
        LoggingSink(detail=True).emit_drift(finding)
    [record] = caplog.records
    assert (record.name, record.levelno) == ("dlt_contract_ops.alerts", logging.WARNING)
    assert record.getMessage() == drift_detail(finding)
    first, _, rest = record.getMessage().partition("\n")
    assert first == drift_line(finding)
    assert json.loads(rest) == {
        "id": finding.id,
        "drift_type": "type",
        "severity": "warning",  # as built: a run grades it (`detectors.severity`)
        "source": "shop",
        "resource": "Order Items",
        "table": "order_items",
        "columns": ["payload_size", "Straße-Nr"],
        "column_types": {"payload_size": "BIGINT", "Straße-Nr": "VARCHAR"},
        "samples": {"payload_size": [519, 526], "Straße-Nr": ["12a"]},
        "first_seen": "2026-07-16T16:25:09+00:00",
        "reproduce": 'SELECT "payload_size", "Straße-Nr" FROM "shop_raw"."order_items" LIMIT 5',
        "expected_types": {"payload_size": "text"},
        "alert": "undelivered",
    }
    assert "Straße-Nr" in rest  # not \u-escaped: readable in a log


def test_error_is_one_error_with_traceback(caplog: pytest.LogCaptureFixture) -> None:
    event = make_error()
    with caplog.at_level(logging.DEBUG, logger="dlt_contract_ops"):
        LoggingSink().emit_error(event)
    [record] = caplog.records
    assert (record.name, record.levelno) == ("dlt_contract_ops.alerts", logging.ERROR)
    assert record.getMessage() == error_line(event)
    assert record.exc_info is not None
    assert record.exc_info[1] is event.exception
    assert "Traceback" in caplog.text
    assert "RuntimeError" in caplog.text


def test_reconciler_line_is_a_warning_without_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """The sink owns the ERROR; the reconciler's own line must not trip an ERROR bridge."""
    event = make_error()
    emitter = Emitter([("logging", LoggingSink())])
    with caplog.at_level(logging.DEBUG, logger="dlt_contract_ops"):
        emitter.error(event)
    own = [r for r in caplog.records if r.name == "dlt_contract_ops"]
    sink = [r for r in caplog.records if r.name == "dlt_contract_ops.alerts"]
    assert [r.levelno for r in own] == [logging.WARNING]
    assert own[0].exc_info is None
    assert own[0].getMessage() == f"{error_line(event)} [reported to alert sinks: logging]"
    assert [r.levelno for r in sink] == [logging.ERROR]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == sink
