"""Dedup across runs: alert on a finding when it is new or changed, and again after
`realert_after`, so an hourly cron does not page anyone twelve times for the same column.

The state is a small local JSON file (never the destination) keyed by (source, resource,
drift type, columns). By default it lives in dlt's data directory (where dlt keeps its own
local pipeline state, `~/.dlt/` or `DLT_DATA_DIR`), one file per project folder:
`<data dir>/contract_ops/alert_state/<project>-<hash>.json`. `[contract_ops.dedup]
state_file` moves it (relative paths are relative to the project), e.g. onto a volume that
outlives a container.

Every finding is still returned and printed; what dedup and delivery decided is recorded
in an `AlertLedger` (finding key -> "new" | "repeat" | "undelivered") and then carried on
each finding (`DriftFinding.alert`). A finding counts as alerted only once a sink confirmed
delivery; an undelivered one is sent again by the next run.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dlt_contract_ops.findings import DriftFinding
from dlt_contract_ops.settings.project import DEFAULT_REALERT_AFTER
from dlt_contract_ops.statefile import StateFileError, locked, read_json, write_json

AlertStatus = Literal["new", "repeat", "undelivered"]
AlertReason = Literal[
    "first", "changed", "realert", "unchanged", "unchecked", "in_flight", "no_sink_confirmed"
]
FindingKey = tuple[str, str, str, tuple[str, ...]]

STATE_FORMAT_VERSION = 1
#: a pending claim of a run on another host stops counting after this many seconds
PENDING_LEASE = 900.0

log = logging.getLogger("dlt_contract_ops")


@dataclass(frozen=True)
class AlertMark:
    """What dedup decided for one finding: sent to sinks ("new") or suppressed ("repeat")."""

    status: AlertStatus
    reason: AlertReason


def decide(
    entry: Mapping[str, Any] | None, digest: str, now: float, realert_after: float
) -> AlertMark:
    """The pure dedup rule for one finding given its previous state entry.

    >>> decide(None, "d", 0.0, 60.0)
    AlertMark(status='new', reason='first')
    >>> decide({"digest": "d", "last_alerted": 0.0}, "d", 30.0, 60.0)
    AlertMark(status='repeat', reason='unchanged')
    """
    if entry is None:
        return AlertMark("new", "first")
    if entry.get("digest") != digest:
        return AlertMark("new", "changed")
    last = entry.get("last_alerted")
    if not isinstance(last, int | float) or now - float(last) >= realert_after:
        return AlertMark("new", "realert")
    return AlertMark("repeat", "unchanged")


def finding_key(finding: DriftFinding) -> str:
    """The state-file key: (source, resource, drift type, columns) as a JSON array."""
    source, resource, drift_type, columns = finding.key
    return json.dumps([source, resource, drift_type, list(columns)], ensure_ascii=False)


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


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).isoformat(timespec="seconds")


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_alive(owner: Any, now: float, since: Any, lease: float) -> bool:
    """Whether a pending claim still stands: its process runs (same host) or, on another
    host, its lease has not run out. A claim left by a killed run never blocks for long."""
    if not isinstance(since, int | float) or now - float(since) >= lease:
        return False
    host, _, pid = str(owner).rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


class DedupStore:
    """The state file and the rule, in two phases so an alert counts only once delivered.

    `reserve` decides under the file lock and, for "new", marks the finding *pending* (owned
    by this process), so a concurrent run treats it as in flight and does not send it too.
    `settle` records the delivered ones as alerted and drops the claims of the others, which
    are then sent again by the next run. `check` decides without writing (dry runs).
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
        self._owner = _owner()

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
        return dict(alerts) if isinstance(alerts, dict) else {}

    def check(self, finding: DriftFinding) -> AlertMark:
        """What `reserve` would decide now, without writing (dry runs, disabled emission)."""
        alerts = self._alerts(repair=False)
        return decide(
            alerts.get(finding_key(finding)),
            finding_digest(finding),
            self._clock(),
            self.realert_after,
        )

    def reserve(self, finding: DriftFinding) -> AlertMark:
        """Decide under the file lock; for "new", leave a pending claim of this process."""
        with locked(self.path, self._lock_timeout):
            alerts = self._alerts(repair=True)
            now = self._clock()
            key = finding_key(finding)
            entry = alerts.get(key) if isinstance(alerts.get(key), dict) else None
            pending = (entry or {}).get("pending")
            if (
                isinstance(pending, dict)
                and pending.get("owner") != self._owner
                and _owner_alive(pending.get("owner"), now, pending.get("since"), self._lease)
            ):
                return AlertMark("repeat", "in_flight")
            # an entry holding only a claim (no digest: never delivered) was never alerted
            alerted = entry if entry is not None and "digest" in entry else None
            mark = decide(alerted, finding_digest(finding), now, self.realert_after)
            if mark.status == "new":
                alerts[key] = {
                    **(entry or {}),
                    "source": finding.source,
                    "resource": finding.resource,
                    "drift_type": finding.drift_type,
                    "columns": list(finding.columns),
                    "pending": {"owner": self._owner, "since": now},
                }
                self._write(alerts, now)
            return mark

    def settle(
        self, delivered: Sequence[DriftFinding], undelivered: Sequence[DriftFinding]
    ) -> None:
        """Record `delivered` as alerted now; release the claims on `undelivered`."""
        if not delivered and not undelivered:
            return
        with locked(self.path, self._lock_timeout):
            alerts = self._alerts(repair=True)
            now = self._clock()
            for finding in delivered:
                key = finding_key(finding)
                previous = alerts.get(key) if isinstance(alerts.get(key), dict) else {}
                alerts[key] = {
                    "source": finding.source,
                    "resource": finding.resource,
                    "drift_type": finding.drift_type,
                    "columns": list(finding.columns),
                    "digest": finding_digest(finding),
                    "first_alerted": (previous or {}).get("first_alerted", now),
                    "last_alerted": now,
                    "last_alerted_at": _iso(now),
                }
            for finding in undelivered:
                key = finding_key(finding)
                entry = alerts.get(key)
                if not isinstance(entry, dict):
                    continue
                pending = entry.get("pending")
                if isinstance(pending, dict) and pending.get("owner") == self._owner:
                    entry = {k: v for k, v in entry.items() if k != "pending"}
                if "last_alerted" in entry:
                    alerts[key] = entry
                else:  # never delivered: as if it had never been seen
                    alerts.pop(key, None)
            self._write(alerts, now)

    def _write(self, alerts: dict[str, Any], now: float) -> None:
        # An entry older than realert_after decides exactly like no entry: drop it (unless a
        # run is sending it right now) so the file stays as small as the set of live alerts.
        kept = {
            k: v
            for k, v in alerts.items()
            if isinstance(v, dict)
            and (
                "pending" in v
                or (
                    isinstance(v.get("last_alerted"), int | float)
                    and now - float(v["last_alerted"]) < self.realert_after
                )
            )
        }
        write_json(self.path, {"format_version": STATE_FORMAT_VERSION, "alerts": kept})


def _aside_path(path: Path) -> Path:
    """`<state>.corrupt`, or `<state>.corrupt.1`, `.2`, ... : never over an earlier one."""
    aside = path.with_name(path.name + ".corrupt")
    n = 0
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.corrupt.{n}")
    return aside


class AlertLedger(Mapping[FindingKey, AlertStatus]):
    """Finding key -> "new" | "repeat" | "undelivered" for one run.

    The emitter fills it as it decides and delivers; the sweep copies each status onto its
    finding (`DriftFinding.alert`) once the sinks are flushed.
    """

    def __init__(self) -> None:
        self._marks: dict[FindingKey, AlertMark] = {}

    def record(self, finding: DriftFinding, mark: AlertMark) -> None:
        self._marks[finding.key] = mark

    def mark(self, finding: DriftFinding) -> AlertMark | None:
        """The full decision (status and reason) for `finding`, None if none was made."""
        return self._marks.get(finding.key)

    def __getitem__(self, key: FindingKey) -> AlertStatus:
        return self._marks[key].status

    def __iter__(self) -> Iterator[FindingKey]:
        return iter(self._marks)

    def __len__(self) -> int:
        return len(self._marks)
