"""Sentences about findings that the CI formats share (JUnit, GitHub, SARIF)."""

from __future__ import annotations

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
