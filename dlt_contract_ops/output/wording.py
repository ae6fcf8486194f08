"""Sentences about findings that the CI formats share (JUnit, GitHub, SARIF), and the words
and times a person reads on the HTML report (`when`, `alert_words`, `metric_words`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timezone

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.output.text import text_name


def columns_phrase(finding: DriftFinding) -> str:
    """The drifted columns on one line, each unambiguous (`text_name`).

    >>> columns_phrase(DriftFinding(drift_type="additive", source="s", resource="r",
    ...                             table="t", columns=["a, b", "c"]))
    '"a, b", c'
    """
    return ", ".join(text_name(c) for c in finding.columns)


def details(finding: DriftFinding) -> str:
    """What the detector measured, when it measured more than the column names: a detector's
    own lines (`Detector.lines`), else the built-ins' types and coverage."""
    from dlt_contract_ops.detectors.registry import get

    own = get(finding.drift_type).line_renderer()
    if own is not None:
        return "; ".join(str(line) for line in own(finding))
    parts: list[str] = []
    if finding.expected_types:
        parts += [
            f"{text_name(c)} declared {t}, live {finding.column_types.get(c, '?')}"
            for c, t in finding.expected_types.items()
        ]
    if finding.coverage:
        parts += [
            f"{text_name(c)} coverage {_pct(v.baseline)} → {_pct(v.recent)}"
            for c, v in finding.coverage.items()
        ]
    return "; ".join(parts)


def acknowledgement(finding: DriftFinding) -> str:
    """`acknowledged until <day> by <who>: <why>` for a finding an unexpired acknowledgement
    covers, else empty (an expired one fails again, as if never given).

    >>> acknowledgement(DriftFinding(drift_type="additive", source="s", resource="r",
    ...     table="t", columns=["c"], ack={"until": "2026-12-31T23:59:59+00:00",
    ...                                    "by": "alice", "reason": "known"}))
    'acknowledged until 2026-12-31 by alice: known'
    """
    if not finding.acknowledged:
        return ""
    ack = finding.ack or {}
    return (
        f"acknowledged until {str(ack.get('until', ''))[:10]} by {ack.get('by')}: "
        f"{ack.get('reason')}"
    )


def summary(finding: DriftFinding) -> str:
    """One sentence naming the drift, its table and its columns.

    >>> summary(DriftFinding(drift_type="additive", source="s", resource="Orders",
    ...                      table="orders", columns=["ip"]))
    'additive drift in table `orders` (resource Orders): 1 column(s): ip'
    """
    text = (
        f"{finding.drift_type} drift in table `{text_name(finding.table)}` (resource "
        f"{text_name(finding.resource)}): {len(finding.columns)} column(s): "
        f"{columns_phrase(finding)}"
    )
    more = details(finding)
    return f"{text} ({more})" if more else text


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

#: what became of a finding's alert (`DriftFinding.alert`), as a person says it
ALERT_WORDS = {
    "new": "alert due",
    "repeat": "already alerted",
    "undelivered": "alert not delivered",
}

#: a distribution metric (`metrics[].metric`), as a person says it
METRIC_WORDS = {
    "null_rate": "NULL share",
    "distinct_count": "distinct values",
    "category_share": "share of a category",
    "new_category": "new category",
}


def alert_words(status: str | None) -> str:
    """What became of a finding's alert, in words (an unknown state is shown as it is).

    >>> alert_words("repeat"), alert_words("undelivered"), alert_words(None)
    ('already alerted', 'alert not delivered', '')
    """
    return ALERT_WORDS.get(status or "", status or "")


def metric_words(metric: object) -> str:
    """A distribution metric's name in words (a third party's is shown as it is).

    >>> metric_words("null_rate"), metric_words("p99_latency")
    ('NULL share', 'p99_latency')
    """
    return METRIC_WORDS.get(str(metric), str(metric))


def moment(value: datetime | str | None) -> datetime | None:
    """`value` as an aware datetime (UTC when it names no zone): a datetime, an ISO text, or
    None for None and for text that is not a time.

    >>> moment("2026-12-07T04:52:10.123456+00:00").minute, moment("soon")
    (52, None)
    """
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def ago(at: datetime, now: datetime) -> str:
    """How long before `now` `at` was (or how long after, "in ..."), rounded down to the
    largest unit that reads well.

    >>> now = datetime(2026, 12, 7, 8, 0, tzinfo=timezone.utc)
    >>> [ago(now.replace(hour=h), now) for h in (8, 7, 4)]
    ['just now', '1 h ago', '4 h ago']
    >>> ago(datetime(2026, 12, 1, tzinfo=timezone.utc), now), ago(datetime(2026, 12, 21,
    ...     tzinfo=timezone.utc), now)
    ('6 days ago', 'in 13 days')
    """
    seconds = (now - at).total_seconds()
    span = abs(seconds)
    if span < 60:
        return "just now"
    if span < 3600:
        amount = f"{span // 60:.0f} min"
    elif span < 48 * 3600:
        amount = f"{span // 3600:.0f} h"
    else:
        amount = f"{span // 86400:.0f} days"
    return f"{amount} ago" if seconds > 0 else f"in {amount}"


def day(at: date, *, year: bool = True) -> str:
    """A day as a person reads it (a datetime's day in UTC; the same in every locale).

    >>> day(datetime(2026, 12, 7, 23, 30, tzinfo=timezone.utc)), day(date(2026, 1, 2), year=False)
    ('7 Dec 2026', '2 Jan')
    """
    if isinstance(at, datetime):
        at = at.astimezone(timezone.utc)
    text = f"{at.day} {_MONTHS[at.month - 1]}"
    return f"{text} {at.year}" if year else text


def when(value: datetime | str | None, now: datetime | None = None) -> str:
    """A moment as a person reads it: the day, the time to the minute in UTC and, given the
    run's `now`, how long ago. Text that is not a time is shown as it is; None as "n/a".

    >>> now = datetime(2026, 12, 7, 7, 52, 30, tzinfo=timezone.utc)
    >>> when("2026-12-07T04:52:10.123456+00:00", now)
    '7 Dec 2026 04:52 UTC (3 h ago)'
    >>> when(now), when(None), when("yesterday")
    ('7 Dec 2026 07:52 UTC', 'n/a', 'yesterday')
    """
    at = moment(value)
    if at is None:
        return "n/a" if value is None else str(value)
    at = at.astimezone(timezone.utc)
    text = f"{day(at)} {at:%H:%M} UTC"
    return f"{text} ({ago(at, now)})" if now is not None else text


def axis_times(times: Sequence[float]) -> list[str]:
    """Labels for moments on a chart's time axis (epoch seconds, UTC), as short as the span
    allows: the time of day within one day, day and time within three, else the day.

    >>> axis_times([0.0, 3600.0]), axis_times([0.0, 86400.0]), axis_times([0.0, 6 * 86400.0])
    (['00:00', '01:00'], ['1 Jan 00:00', '2 Jan 00:00'], ['1 Jan', '7 Jan'])
    """
    moments = [datetime.fromtimestamp(t, timezone.utc) for t in times]
    if not moments:
        return []
    span = (max(moments) - min(moments)).total_seconds()
    if len({m.date() for m in moments}) == 1:
        return [f"{m:%H:%M}" for m in moments]
    if span < 3 * 86400:
        return [f"{day(m, year=False)} {m:%H:%M}" for m in moments]
    return [day(m, year=False) for m in moments]
