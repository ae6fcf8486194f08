"""Dedup across runs: alert on a finding when it is new or changed, and again after
`realert_after`, so an hourly cron does not page anyone twelve times for the same column.

The state is a small local JSON file (never the destination) keyed by the finding's id
(`DriftFinding.id`, the identity acknowledgements use too). An entry written under the 0.1.0
key, (source, resource, drift type, columns) as a JSON array, is found by that key and moved
under the id the next time it is written. By default it lives in dlt's data directory
(where dlt keeps its own local pipeline state, `~/.dlt/` or `DLT_DATA_DIR`), one file per
project folder: `<data dir>/contract_ops/alert_state/<project>-<hash>.json`. `[contract_ops.dedup]
state_file` moves it (relative paths are relative to the project), e.g. onto a volume that
outlives a container.

Delivery is tracked per sink: each entry holds one record per sink name (`sinks`), and a
finding is settled for a sink only once THAT sink delivered it. The next run sends it again to
the sinks that did not (and only to them), so a log line never stands in for a page. A state
written by format 1 (one record per finding) still reads: its record counts for every sink
(`*`) until it ages out or the finding changes.

Every finding is still returned and printed; what dedup and delivery decided is recorded
in an `AlertLedger` (finding id -> "new" | "repeat" | "undelivered") and then carried on
each finding (`DriftFinding.alert`).

The alert's lifecycle (open, resolved, reopened, escalated) lives in the same records, under
the same lock (`sinks.lifecycle`): `resolve_all` resolves what a sweep no longer found and
claims the resolves to send, `settle` records them delivered.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from dlt_contract_ops.model.content import finding_content, finding_depth
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.settings.project import (
    DEFAULT_REALERT_AFTER,
    DedupSettings,
    default_state_file,
)
from dlt_contract_ops.sinks.base import ResolvedAlert
from dlt_contract_ops.sinks.claims import PENDING_LEASE, owner, owner_alive
from dlt_contract_ops.sinks.dedup_rule import (
    ANY_SINK,
    STATE_FORMAT_VERSION,
    AlertMark,
    AlertReason,
    AlertStatus,
    FindingId,
    alerted,
    decide,
    finding_digest,
    finding_key,
    legacy_key,
    overall,
    upgraded,
)
from dlt_contract_ops.sinks.lifecycle import (
    Swept,
    alert_of,
    iso,
    kept,
    mark_resolved,
    settle_resolves,
    superseded_by,
    wider_than_open,
)
from dlt_contract_ops.statefile import StateFileError, locked, read_json, write_json

__all__ = [
    "ANY_SINK", "PENDING_LEASE", "STATE_FORMAT_VERSION", "AlertMark", "AlertReason",
    "AlertStatus", "DedupStore", "FindingId", "decide", "finding_digest", "finding_key",
    "legacy_key", "overall", "upgraded",
]

log = logging.getLogger("dlt_contract_ops")


def _entry(alerts: dict[str, Any], finding: DriftFinding, *, adopt: bool) -> Any:
    """`finding`'s entry in `alerts`, under its id or else its 0.1.0 key; `adopt` moves an
    entry found under the old key to the id (in `alerts`, written with the next write)."""
    key = finding_key(finding)
    if key in alerts:
        return alerts[key]
    old = legacy_key(finding)
    if old not in alerts:
        return None
    if not adopt:
        return alerts[old]
    alerts[key] = alerts.pop(old)
    return alerts[key]


class DedupStore:
    """The state file and the rule, per sink, in two phases so an alert counts only once
    delivered.

    `reserve_all` decides a batch of findings for each named sink under the file lock and,
    for each "new" one, marks the finding *pending* for that sink (owned by this process), so
    a concurrent run treats it as in flight there and does not send it too. `settle` records,
    per sink, the findings it delivered as alerted and drops its claims on the others, which
    the next run sends again to that sink only. `check` decides without writing (dry runs).
    A sweep reads and writes the file once per batch (a source's findings) and once at the
    end, whatever the number of findings.
    """

    def __init__(
        self,
        path: Path,
        realert_after: float = DEFAULT_REALERT_AFTER,
        *,
        clock: Callable[[], float] = time.time,
        lock_timeout: float = 10.0,
        lease: float = PENDING_LEASE,
    ) -> None:
        self.path = path
        self.realert_after = realert_after
        self._clock = clock
        self._lock_timeout = lock_timeout
        self._lease = lease
        self._owner = owner()
        #: the file as the first `check` read it, until this store writes it
        self._snapshot: dict[str, Any] | None = None

    @classmethod
    def from_settings(cls, settings: DedupSettings) -> DedupStore:
        """The store `[contract_ops.dedup]` describes (inside a project context: the default
        file is in dlt's data dir), waiting `[contract_ops] lock_timeout` for its lock."""
        path = settings.state_file
        if path is None:
            import dlt

            ctx = dlt.current.run_context()
            path = default_state_file(ctx.run_dir, ctx.data_dir)
        return cls(path, settings.realert_after, lock_timeout=settings.lock_timeout)

    def _alerts(self, *, repair: bool) -> dict[str, Any]:
        try:
            doc = read_json(self.path)
        except StateFileError as exc:
            if not repair:
                raise
            # A hand-edited or truncated file must not stop alerting forever: keep it aside
            # for inspection (never over an earlier one) and start over: the worst case is
            # one repeated alert.
            aside = _aside_path(self.path)
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            log.warning(
                "alert dedup state `%s` is unreadable (%s): moved to `%s`, starting afresh",
                self.path, exc, aside,
            )
            return {}
        alerts = doc.get("alerts")
        if not isinstance(alerts, dict):
            return {}
        # a record no longer kept (`lifecycle.kept`) decides like none, written or not yet
        now = self._clock()
        out = {}
        for key, value in alerts.items():
            if isinstance(value, dict):
                entry = upgraded(value)
                entry["sinks"] = {n: r for n, r in entry["sinks"].items()
                                  if kept(r, now, self.realert_after)}
                out[key] = entry
        return out

    def check(self, finding: DriftFinding, sinks: Sequence[str] = ()) -> dict[str, AlertMark]:
        """What `reserve` would decide now for each of `sinks`, without writing (dry runs,
        disabled emission). No sinks: each sink the state knows for `finding` (or `*`).

        The file is read once, at the first check: a store that never writes decides every
        finding of its run against that one snapshot."""
        if self._snapshot is None:
            self._snapshot = self._alerts(repair=False)
        entry = _entry(self._snapshot, finding, adopt=False)
        records = (entry or {}).get("sinks", {})
        now = self._clock()
        return {
            sink: self._decide(self._snapshot, records, finding, sink, now)
            for sink in (sinks or tuple(records) or (ANY_SINK,))
        }

    def _decide(self, alerts: Mapping[str, Any], records: Mapping[str, Any],
                finding: DriftFinding, sink: str, now: float) -> AlertMark:
        """`decide` for `sink` with the finding's content and depth; a first alert that
        widens a finding open there (more columns) is "escalated"."""
        mark = decide(alerted(records, sink), finding_digest(finding), now, self.realert_after,
                      content=finding_content(finding), depth=finding_depth(finding))
        if mark.reason == "first" and wider_than_open(alerts, finding, sink):
            return AlertMark("new", "escalated")
        return mark

    def reserve(self, finding: DriftFinding, sinks: Sequence[str]) -> dict[str, AlertMark]:
        """Decide for each of `sinks` under the file lock; leave a pending claim of this
        process on each sink decided "new"."""
        return self.reserve_all([finding], sinks)[finding_key(finding)]

    def reserve_all(
        self, findings: Sequence[DriftFinding], sinks: Sequence[str]
    ) -> dict[FindingId, dict[str, AlertMark]]:
        """`reserve` for every finding of a batch in one locked read and at most one write:
        finding id -> sink -> mark. Every claim is on disk before any of them is sent."""
        out: dict[FindingId, dict[str, AlertMark]] = {}
        if not findings:
            return out
        with locked(self.path, self._lock_timeout):
            alerts = self._alerts(repair=True)
            now = self._clock()
            claimed = False
            for finding in findings:
                out[finding_key(finding)], new = self._claim(alerts, finding, sinks, now)
                claimed = claimed or new
            if claimed:
                self._write(alerts, now)
        return out

    def _claim(
        self, alerts: dict[str, Any], finding: DriftFinding, sinks: Sequence[str], now: float
    ) -> tuple[dict[str, AlertMark], bool]:
        """Decide `finding` for each sink in `alerts` (in memory), claiming the "new" ones;
        the marks, and whether anything was claimed."""
        key = finding_key(finding)
        entry = _entry(alerts, finding, adopt=True) or {"sinks": {}}
        records: dict[str, Any] = entry["sinks"]
        marks: dict[str, AlertMark] = {}
        for sink in sinks:
            if any(
                self._claimed_by_another(records.get(name), now)
                for name in (sink, ANY_SINK)
            ):
                marks[sink] = AlertMark("repeat", "in_flight")
                continue
            marks[sink] = self._decide(alerts, records, finding, sink, now)
            if marks[sink].status == "new":
                records[sink] = {**records.get(sink, {}),
                                 "pending": {"owner": self._owner, "since": now}}
        claimed = any(m.status == "new" for m in marks.values())
        if claimed:
            alerts[key] = {**entry, **_header(finding), "sinks": records}
        return marks, claimed

    def _claimed_by_another(self, record: Any, now: float, claim: str = "pending") -> bool:
        pending = record.get(claim) if isinstance(record, dict) else None
        return (
            isinstance(pending, dict)
            and pending.get("owner") != self._owner
            and owner_alive(pending.get("owner"), now, pending.get("since"), self._lease)
        )

    def resolve_all(
        self, swept: Swept, resolving: Collection[str]
    ) -> tuple[list[ResolvedAlert], list[tuple[ResolvedAlert, list[str]]]]:
        """Under the lock, in at most one write: resolve every finding `swept` checked the
        table of and did not find (`lifecycle.mark_resolved`), and claim each resolve due at
        a sink of `resolving` (of this sweep or an earlier one whose resolve was not
        delivered) whose finding stays away. (resolved now, [(resolve, sinks to send to)])."""
        with locked(self.path, self._lock_timeout):
            alerts = self._alerts(repair=True)
            now = self._clock()
            fresh = {key: alert_of(key, entry, iso(now), superseded_by(entry, swept))
                     for key, entry in mark_resolved(alerts, swept, frozenset(resolving), now)}
            sends = []
            for key, entry in alerts.items():
                records = entry.get("sinks", {})
                targets = [
                    name for name, r in records.items()
                    if key not in swept.found and name in resolving and isinstance(r, dict)
                    and r.get("resolve_due") and not self._claimed_by_another(
                        r, now, "resolve_pending")
                ]
                for name in targets:
                    records[name]["resolve_pending"] = {"owner": self._owner, "since": now}
                if targets:
                    at = str(records[targets[0]].get("resolved_at") or iso(now))
                    sends.append((fresh.get(key) or alert_of(key, entry, at), targets))
            if fresh or sends:
                self._write(alerts, now)
        return list(fresh.values()), sends

    def settle(
        self,
        delivered: Mapping[str, Sequence[DriftFinding]],
        undelivered: Mapping[str, Sequence[DriftFinding]],
        resolved: Mapping[str, Sequence[str]] | None = None,
        unresolved: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Record, per sink name, the findings it delivered as alerted now; release its
        claims on the ones it did not. `resolved`/`unresolved`: per sink, the finding ids
        whose resolve it delivered (no longer due) or did not (due again next run)."""
        resolved, unresolved = resolved or {}, unresolved or {}
        if not any((*delivered.values(), *undelivered.values(), *resolved.values(),
                    *unresolved.values())):
            return
        with locked(self.path, self._lock_timeout):
            alerts = self._alerts(repair=True)
            now = self._clock()
            for sink, findings in delivered.items():
                for finding in findings:
                    key = finding_key(finding)
                    entry = {"sinks": {}, **(_entry(alerts, finding, adopt=True) or {}),
                             **_header(finding)}
                    records = entry["sinks"]
                    # an alert first sent by the previous version dates from then
                    first = next(
                        (r["first_alerted"] for r in (records.get(sink), records.get(ANY_SINK))
                         if isinstance(r, dict) and "first_alerted" in r),
                        now,
                    )
                    records[sink] = {
                        "digest": finding_digest(finding),
                        "first_alerted": first,
                        "last_alerted": now,
                        "last_alerted_at": iso(now),
                        "content": list(finding_content(finding)),
                        **({"depth": d} if (d := finding_depth(finding)) else {}),
                    }
                    alerts[key] = entry
            for sink, findings in undelivered.items():
                for finding in findings:
                    _entry(alerts, finding, adopt=True)
                    self._release(alerts, finding_key(finding), sink)
            settle_resolves(alerts, resolved, unresolved, self._owner)
            self._write(alerts, now)

    def _release(self, alerts: dict[str, Any], key: str, sink: str) -> None:
        entry = alerts.get(key)
        record = entry["sinks"].get(sink) if entry is not None else None
        if entry is None or not isinstance(record, dict):
            return
        pending = record.get("pending")
        if isinstance(pending, dict) and pending.get("owner") == self._owner:
            record = {k: v for k, v in record.items() if k != "pending"}
        if record:
            entry["sinks"][sink] = record
        else:  # never delivered to this sink: as if it had never been seen there
            entry["sinks"].pop(sink, None)
        if not entry["sinks"]:
            alerts.pop(key, None)

    def _write(self, alerts: dict[str, Any], now: float) -> None:
        # A record no longer needed (`lifecycle.kept`: an open alert long past realert_after,
        # a resolved one past RESOLVED_KEEP) is dropped, unless a run is sending it right now,
        # so the file stays as small as the set of live and lately resolved alerts.
        live: dict[str, Any] = {}
        for key, entry in alerts.items():
            records = {
                sink: rec
                for sink, rec in entry.get("sinks", {}).items()
                if isinstance(rec, dict) and kept(rec, now, self.realert_after)
            }
            if records:
                live[key] = {**entry, "sinks": records}
        write_json(self.path, {"format_version": STATE_FORMAT_VERSION, "alerts": live})
        self._snapshot = None  # a later `check` sees what this store wrote


def _header(finding: DriftFinding) -> dict[str, Any]:
    """What an entry says about its finding, for a person reading the file."""
    return {
        "source": finding.source,
        **({"pipeline": finding.pipeline} if finding.pipeline else {}),
        "resource": finding.resource,
        "table": finding.table,
        "drift_type": finding.drift_type,
        "columns": list(finding.columns),
    }


def _aside_path(path: Path) -> Path:
    """`<state>.corrupt`, or `<state>.corrupt.1`, `.2`, ... : never over an earlier one."""
    aside = path.with_name(path.name + ".corrupt")
    n = 0
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.corrupt.{n}")
    return aside
