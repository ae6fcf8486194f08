"""The lifecycle of an alert, kept in the dedup state (`sinks.dedup`, same file and lock).

- **open**: a sink delivered the finding (its record has a `digest`).
- **resolved**: a later sweep checked the finding's table completely for its detector
  and did not find it (`Swept.resolves`, the one rule: the report's "resolved since the last
  sweep" asks it too). Each open record gets `resolved` (and `resolved_at`); a sink
  that resolves alerts (`ResolvesAlerts`) also `resolve_due`, until its `emit_resolved`
  returned. An undelivered resolve stays due and is sent again by the next run (whatever
  that run sweeps), while the finding stays away.
- **reopened**: a resolved record whose finding is found again decides "new" (`decide`).
- **escalated**: a finding whose content grew or whose coverage drop went deeper under the
  same id (`decide`), or a new id on the same table and detector whose columns hold every
  column of a finding open there (`wider_than_open`).

A resolve is claimed like a drift alert (`resolve_pending`: host and process id) before it is
sent, so an overlapping run does not send it too, and a claim of a killed run stops counting
once its process is gone. A run killed after sending a resolve and before recording it sends
it once more: at least once, like drift.

Records are kept while they matter: an open one for `max(realert_after, OPEN_KEEP)` after its
last alert (it still may resolve), a resolved one for `RESOLVED_KEEP` (to tell "reopened"
from "first", and to retry its resolve), a claimed one until its claim is settled.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dlt_contract_ops.core.history import Where
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.base import ResolvedAlert
from dlt_contract_ops.sinks.dedup_rule import ANY_SINK

#: how long an open record is kept after its last alert at least (a finding may resolve
#: days after it was paged, however short `realert_after` is)
OPEN_KEEP = 30 * 86400.0
#: how long a resolved record is kept: a return within it is "reopened", and an undelivered
#: resolve is retried that long
RESOLVED_KEEP = 7 * 86400.0


@dataclass(frozen=True)
class Swept:
    """What one sweep checked completely, and what it found there.

    `tables`: (source, detector, table) for every table a detector checked without an error
    (a failed query, an unreadable table, a source that failed, a detector not run: absent).
    `found`: the ids of every finding of the sweep, acknowledged ones and the components a
    combiner folded into its finding included.
    """

    tables: frozenset[Where] = frozenset()
    found: frozenset[str] = frozenset()
    #: (source, detector, table) -> the findings found there (for `superseded_by`)
    findings: Mapping[Where, tuple[DriftFinding, ...]] = field(default_factory=dict)

    def resolves(self, finding_id: str, where: Where) -> bool:
        """Whether this sweep resolves the finding `finding_id` at `where` (source, detector,
        table): it checked that table completely for that detector and did not find it. A
        detector it did not run (removal without `--include-removal`) resolves nothing.

        >>> swept = Swept(frozenset({("shop", "additive", "orders")}), frozenset({"b"}))
        >>> swept.resolves("a", ("shop", "additive", "orders")), swept.resolves(
        ...     "b", ("shop", "additive", "orders")), swept.resolves("a", ("shop", "removal",
        ...     "orders"))
        (True, False, False)
        """
        return where in self.tables and finding_id not in self.found


def iso(ts: float) -> str:
    """A state time (epoch seconds) as people read it, UTC."""
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).isoformat(timespec="seconds")


def is_open(record: Any) -> bool:
    """A record of a delivered alert not resolved since."""
    return isinstance(record, dict) and "digest" in record and record.get("resolved") is None


def where(entry: Mapping[str, Any]) -> Where:
    return (str(entry.get("source")), str(entry.get("drift_type")), str(entry.get("table")))


def alert_of(key: str, entry: Mapping[str, Any], resolved_at: str,
             superseded_by: str | None = None) -> ResolvedAlert:
    """What the sinks are told of the resolved finding `key` (its state entry's header)."""
    return ResolvedAlert(
        id=key, source=str(entry.get("source")), resource=str(entry.get("resource")),
        table=str(entry.get("table")), drift_type=str(entry.get("drift_type")),
        columns=tuple(str(c) for c in entry.get("columns") or ()), resolved_at=resolved_at,
        pipeline=entry.get("pipeline"), superseded_by=superseded_by,
    )


def resolved_note(alert: ResolvedAlert) -> str:
    """The note a sweep's result carries for a finding it resolved.

    >>> resolved_note(ResolvedAlert("f0ade38db3c4", "app", "events", "events", "additive",
    ...                             ("x",), "2026-01-01T00:00:00+00:00"))
    'resolved: additive drift of `events` (`x`), id f0ade38db3c4: no longer found'
    """
    columns = ", ".join(f"`{c}`" for c in alert.columns)
    gone = (f"superseded by {alert.superseded_by}" if alert.superseded_by
            else "no longer found")
    return (f"resolved: {alert.drift_type} drift of `{alert.table}` ({columns}), id "
            f"{alert.id}: {gone}")


def superseded_by(entry: Mapping[str, Any], swept: Swept) -> str | None:
    """The finding of the sweep on the same table and detector whose columns hold every
    column of `entry`'s (its scope grew), else None."""
    columns = set(entry.get("columns") or ())
    for finding in swept.findings.get(where(entry), ()):
        if columns < set(finding.columns):
            return finding.id
    return None


def mark_resolved(
    alerts: dict[str, Any], swept: Swept, resolving: frozenset[str], now: float
) -> list[tuple[str, dict[str, Any]]]:
    """Resolve, in `alerts`, every finding with an open record that `swept` checked the table
    of and did not find: each open record gets `resolved`, and `resolve_due` for a sink in
    `resolving`. The (key, entry) of each finding resolved now."""
    out = []
    for key, entry in alerts.items():
        records = entry.get("sinks", {})
        if not swept.resolves(key, where(entry)):
            continue
        if not any(is_open(r) for r in records.values()):
            continue
        for name, record in records.items():
            if is_open(record):
                record.update(resolved=now, resolved_at=iso(now))
                if name in resolving and name != ANY_SINK:
                    record["resolve_due"] = True
        out.append((key, entry))
    return out


def settle_resolves(
    alerts: Mapping[str, Any], resolved: Mapping[str, Sequence[str]],
    unresolved: Mapping[str, Sequence[str]], owner: str,
) -> None:
    """Per sink, the resolves it delivered (no longer due) and those it did not (due again
    next run): this run's claims on both released."""
    for sink, keys, done in [*((s, k, True) for s, k in resolved.items()),
                             *((s, k, False) for s, k in unresolved.items())]:
        for key in keys:
            record = alerts.get(key, {}).get("sinks", {}).get(sink)
            if not isinstance(record, dict):
                continue
            claim = record.get("resolve_pending")
            if isinstance(claim, dict) and claim.get("owner") == owner:
                record.pop("resolve_pending")
            if done:
                record.pop("resolve_due", None)


def wider_than_open(
    alerts: Mapping[str, Any], finding: DriftFinding, sink: str
) -> bool:
    """Whether a finding open at `sink` on the same source, table and detector has only
    columns `finding` has too (and fewer): `finding` is that drift grown wider. `ANY_SINK`
    (a check naming no sink: a dry run, the report) asks whether it is open at any sink."""
    columns = set(finding.columns)
    for entry in alerts.values():
        if (entry.get("source"), entry.get("drift_type"), entry.get("table")) != (
            finding.source, finding.drift_type, finding.table
        ):
            continue
        records: Mapping[str, Any] = entry.get("sinks", {})
        shown = records.values() if sink == ANY_SINK else [records.get(sink)]
        if set(entry.get("columns") or ()) < columns and any(map(is_open, shown)):
            return True
    return False


def kept(record: Mapping[str, Any], now: float, realert_after: float) -> bool:
    """Whether a sink's record still counts (see the module docstring), else it is pruned."""
    if "pending" in record or "resolve_pending" in record:
        return True
    resolved = record.get("resolved")
    if isinstance(resolved, int | float):
        return now - float(resolved) < RESOLVED_KEEP
    last = record.get("last_alerted")
    return isinstance(last, int | float) and now - float(last) < max(realert_after, OPEN_KEEP)
