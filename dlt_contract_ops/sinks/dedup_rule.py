"""The dedup rule, pure: what decides that a finding is news at a sink, and the shape of a
state entry (formats 1 to 3). The file, its lock and the claims are `sinks.dedup`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dlt_contract_ops.model.content import deeper, grew
from dlt_contract_ops.model.findings import DriftFinding

AlertStatus = Literal["new", "repeat", "undelivered"]
AlertReason = Literal[
    "first", "changed", "realert", "unchanged", "unchecked", "in_flight",
    "no_sink_confirmed", "paging_sink_failed", "reopened", "escalated",
]
#: a finding's one identity, `DriftFinding.id`
FindingId = str

#: 3: keyed by the finding's id; 2: one record per sink (`sinks`), keyed by the 0.1.0 key;
#: formats 1 (one record per finding) and 2 still read
STATE_FORMAT_VERSION = 3
#: the sink name under which a format 1 record is read: it counts for every sink
ANY_SINK = "*"


@dataclass(frozen=True)
class AlertMark:
    """What dedup decided for one finding: sent to sinks ("new") or suppressed ("repeat")."""

    status: AlertStatus
    reason: AlertReason


def decide(
    entry: Mapping[str, Any] | None, digest: str, now: float, realert_after: float, *,
    content: Sequence[str] | None = None, depth: Mapping[str, float] | None = None,
) -> AlertMark:
    """The pure dedup rule for one finding given its previous state entry (a sink's record).

    A record its finding was resolved in (`resolved`) is news again ("reopened"); content
    the record lacks (`model.content`: another category, metric, rule) or a coverage drop at
    least `ESCALATE_STEP` deeper is news ("escalated"); narrower content is not. A record
    written before content was recorded (no `content`) decides on its digest alone.

    >>> decide(None, "d", 0.0, 60.0)
    AlertMark(status='new', reason='first')
    >>> decide({"digest": "d", "last_alerted": 0.0}, "d", 30.0, 60.0)
    AlertMark(status='repeat', reason='unchanged')
    >>> decide({"digest": "d", "last_alerted": 0.0, "content": ["a"]}, "d", 30.0, 60.0,
    ...        content=["a", "b"])
    AlertMark(status='new', reason='escalated')
    """
    if entry is None:
        return AlertMark("new", "first")
    if entry.get("resolved") is not None:
        return AlertMark("new", "reopened")
    if entry.get("digest") != digest:
        return AlertMark("new", "changed")
    before = entry.get("content")
    if content is not None and isinstance(before, list) and grew(before, content):
        return AlertMark("new", "escalated")
    was = entry.get("depth")
    if depth and isinstance(was, dict) and deeper(was, depth):
        return AlertMark("new", "escalated")
    last = entry.get("last_alerted")
    if not isinstance(last, int | float) or now - float(last) >= realert_after:
        return AlertMark("new", "realert")
    return AlertMark("repeat", "unchanged")


def overall(marks: Mapping[str, AlertMark]) -> AlertMark:
    """The finding's mark from its per-sink marks: "new" when some sink is due to get it
    (with the first such sink's reason), else "repeat" ("in_flight" when a sink's copy is
    being sent by another run).

    >>> overall({"logging": AlertMark("repeat", "unchanged"),
    ...          "webhook": AlertMark("new", "first")})
    AlertMark(status='new', reason='first')
    """
    due = [m for m in marks.values() if m.status == "new"]
    if due:
        return due[0]
    if any(m.reason == "in_flight" for m in marks.values()):
        return AlertMark("repeat", "in_flight")
    return AlertMark("repeat", "unchanged")


def finding_key(finding: DriftFinding) -> str:
    """The state-file key: the finding's id."""
    return finding.id


def legacy_key(finding: DriftFinding) -> str:
    """The key 0.1.0 wrote (state formats 1 and 2): (source, resource, drift type, columns in
    their order) as a JSON array."""
    return json.dumps(
        [finding.source, finding.resource, finding.drift_type, list(finding.columns)],
        ensure_ascii=False,
    )


def finding_digest(finding: DriftFinding) -> str:
    """What makes the same key "changed": the live and declared types of its columns.

    Samples, coverage ratios and timestamps move on every run and are deliberately left out.
    """
    expired_ack = (
        f"{finding.ack.get('id')}@{finding.ack.get('until')}"
        if finding.ack is not None and finding.ack.get("expired") else None
    )
    body = json.dumps(
        # an acknowledgement that just expired makes the drift news once: alert it again
        {"column_types": finding.column_types, "expected_types": finding.expected_types,
         **({"ack_expired": expired_ack} if expired_ack else {})},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def alerted(records: Mapping[str, Any], sink: str) -> Mapping[str, Any] | None:
    """The record that says when `sink` last got the finding: its own once it delivered,
    else the format 1 record (`*`, every sink), else None (never delivered there)."""
    for name in (sink, ANY_SINK):
        record = records.get(name)
        if isinstance(record, dict) and "digest" in record:
            return record
    return None


def upgraded(entry: Mapping[str, Any]) -> dict[str, Any]:
    """`entry` in format 2 (`sinks`: sink name -> record). A format 1 entry (one record for
    the finding, written before delivery was tracked per sink) becomes the record of `*`:
    settled for every sink, exactly as the previous version treated it.

    >>> upgraded({"source": "s", "digest": "d", "last_alerted": 5.0})
    {'source': 's', 'sinks': {'*': {'digest': 'd', 'last_alerted': 5.0}}}
    """
    if isinstance(entry.get("sinks"), dict):
        return {**entry, "sinks": {k: v for k, v in entry["sinks"].items()
                                   if isinstance(v, dict)}}
    record = {k: entry[k] for k in _V1_RECORD if k in entry}
    header = {k: v for k, v in entry.items() if k not in _V1_RECORD}
    return {**header, "sinks": {ANY_SINK: record} if record else {}}


_V1_RECORD = ("digest", "first_alerted", "last_alerted", "last_alerted_at", "pending")
