"""Dedup across runs: alert on a finding when it is new or changed, and again after
`realert_after`, so an hourly cron does not page anyone twelve times for the same column.

The state is a small local JSON file (never the destination) keyed by (source, resource,
drift type, columns). By default it lives in dlt's data directory (where dlt keeps its own
local pipeline state, `~/.dlt/` or `DLT_DATA_DIR`), one file per project folder:
`<data dir>/contract_ops/alert_state/<project>-<hash>.json`. `[contract_ops.dedup]
state_file` moves it (relative paths are relative to the project), e.g. onto a volume that
outlives a container.

Every finding is still returned and printed; what dedup decides is recorded in an
`AlertLedger` (finding key -> "new" | "repeat") that renderers and callers read.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.findings import DriftFinding
from dlt_contract_ops.sinks.statefile import StateFileError, locked, read_json, write_json

AlertStatus = Literal["new", "repeat"]
AlertReason = Literal["first", "changed", "realert", "unchanged", "unchecked"]
FindingKey = tuple[str, str, str, tuple[str, ...]]

DEFAULT_REALERT_AFTER = 24 * 3600.0
STATE_FORMAT_VERSION = 1
DEDUP_SECTION = "contract_ops.dedup"
DEDUP_KEYS = frozenset({"enabled", "realert_after", "state_file"})


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
    body = json.dumps(
        {"column_types": finding.column_types, "expected_types": finding.expected_types},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([dhms])")
_UNIT = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}


def parse_duration(value: Any, key: str) -> float:
    """Seconds from `86400`, `"24h"`, `"90m"`, `"1d"` or `"1h30m"`; ConfigError otherwise.

    >>> parse_duration("1h30m", "k")
    5400.0
    """
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        with contextlib.suppress(ValueError):
            number = float(text)
            if number >= 0:
                return number
        parts = _DURATION.findall(text)
        if parts and "".join(n + u for n, u in parts) == text:
            return sum(float(n) * _UNIT[u] for n, u in parts)
    raise ConfigError(
        f"`{key}` must be a duration like \"24h\", \"90m\", \"1d\" or a number of seconds; "
        f"got {value!r}."
    )


@dataclass(frozen=True)
class DedupSettings:
    """The `[contract_ops.dedup]` table."""

    enabled: bool = True
    realert_after: float = DEFAULT_REALERT_AFTER
    state_file: Path | None = None


def default_state_file(project_dir: str | os.PathLike[str], data_dir: str) -> Path:
    """`<data dir>/contract_ops/alert_state/<project name>-<hash of its path>.json`."""
    absolute = os.path.abspath(os.fspath(project_dir))
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", os.path.basename(absolute)) or "project"
    digest = hashlib.sha256(absolute.encode()).hexdigest()[:12]
    return Path(data_dir) / "contract_ops" / "alert_state" / f"{slug}-{digest}.json"


def load_dedup_settings() -> DedupSettings:
    """Read `[contract_ops.dedup]` through dlt's provider chain (inside a project context)."""
    import dlt

    def get(key: str) -> Any:
        try:
            return dlt.config.get(f"{DEDUP_SECTION}.{key}")
        except Exception as exc:  # dlt raises several types for a value it cannot read
            raise ConfigError(f"Cannot read `{DEDUP_SECTION}.{key}`: {exc}") from exc

    enabled_raw = get("enabled")
    if enabled_raw is None:
        enabled = True
    elif isinstance(enabled_raw, bool):
        enabled = enabled_raw
    elif isinstance(enabled_raw, str) and enabled_raw.lower() in ("true", "false"):
        enabled = enabled_raw.lower() == "true"
    else:
        raise ConfigError(f"`{DEDUP_SECTION}.enabled` must be true or false; got {enabled_raw!r}.")
    realert_raw = get("realert_after")
    realert = (
        DEFAULT_REALERT_AFTER
        if realert_raw is None
        else parse_duration(realert_raw, f"{DEDUP_SECTION}.realert_after")
    )
    state_raw = get("state_file")
    run_dir = os.path.abspath(dlt.current.run_context().run_dir)
    if state_raw in (None, ""):
        state = default_state_file(run_dir, dlt.current.run_context().data_dir)
    elif isinstance(state_raw, str):
        state = Path(run_dir, os.path.expanduser(state_raw))
    else:
        raise ConfigError(f"`{DEDUP_SECTION}.state_file` must be a path; got {state_raw!r}.")
    return DedupSettings(enabled=enabled, realert_after=realert, state_file=state)


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).isoformat(timespec="seconds")


class DedupStore:
    """The state file and the rule: `check` reads, `claim` decides and records atomically."""

    def __init__(
        self,
        path: Path,
        realert_after: float = DEFAULT_REALERT_AFTER,
        *,
        clock: Callable[[], float] = time.time,
        lock_timeout: float = 10.0,
    ) -> None:
        self.path = path
        self.realert_after = realert_after
        self._clock = clock
        self._lock_timeout = lock_timeout

    def _alerts(self, *, repair: bool) -> dict[str, Any]:
        try:
            doc = read_json(self.path)
        except StateFileError:
            if not repair:
                raise
            # A hand-edited or truncated file must not stop alerting forever: keep it aside
            # for inspection and start over (the worst case is one repeated alert).
            with contextlib.suppress(OSError):
                os.replace(self.path, self.path.with_name(self.path.name + ".corrupt"))
            return {}
        alerts = doc.get("alerts")
        return dict(alerts) if isinstance(alerts, dict) else {}

    def check(self, finding: DriftFinding) -> AlertMark:
        """What `claim` would decide now, without writing (dry runs, disabled emission)."""
        alerts = self._alerts(repair=False)
        return decide(
            alerts.get(finding_key(finding)),
            finding_digest(finding),
            self._clock(),
            self.realert_after,
        )

    def claim(self, finding: DriftFinding) -> AlertMark:
        """Decide under the file lock and, for "new", record the alert before returning, so of
        two concurrent runs exactly one alerts."""
        with locked(self.path, self._lock_timeout):
            alerts = self._alerts(repair=True)
            now = self._clock()
            key = finding_key(finding)
            digest = finding_digest(finding)
            mark = decide(alerts.get(key), digest, now, self.realert_after)
            if mark.status == "new":
                previous = alerts.get(key) or {}
                alerts[key] = {
                    "source": finding.source,
                    "resource": finding.resource,
                    "drift_type": finding.drift_type,
                    "columns": list(finding.columns),
                    "digest": digest,
                    "first_alerted": previous.get("first_alerted", now),
                    "last_alerted": now,
                    "last_alerted_at": _iso(now),
                }
                # An entry older than realert_after decides exactly like no entry: drop it so
                # the file stays as small as the set of live alerts.
                alerts = {
                    k: v
                    for k, v in alerts.items()
                    if isinstance(v, dict)
                    and isinstance(v.get("last_alerted"), int | float)
                    and now - float(v["last_alerted"]) < self.realert_after
                }
                write_json(self.path, {"format_version": STATE_FORMAT_VERSION, "alerts": alerts})
            return mark


class AlertLedger(Mapping[FindingKey, AlertStatus]):
    """Finding key -> "new" | "repeat" for one run, kept apart from the findings themselves.

    >>> with recording_alerts() as alerts:  # doctest: +SKIP
    ...     results = reconcile_all()
    >>> alerts.get(results[0].findings[0].key)  # doctest: +SKIP
    'repeat'
    """

    def __init__(self) -> None:
        self._marks: dict[FindingKey, AlertMark] = {}

    def record(self, finding: DriftFinding, mark: AlertMark) -> None:
        self._marks[finding.key] = mark

    def mark(self, finding: DriftFinding) -> AlertMark | None:
        """The full decision (status and reason) for `finding`, None if dedup was off."""
        return self._marks.get(finding.key)

    def __getitem__(self, key: FindingKey) -> AlertStatus:
        return self._marks[key].status

    def __iter__(self) -> Iterator[FindingKey]:
        return iter(self._marks)

    def __len__(self) -> int:
        return len(self._marks)


_ACTIVE: ContextVar[AlertLedger | None] = ContextVar("dlt_contract_ops_alerts", default=None)


def active_ledger() -> AlertLedger | None:
    """The ledger of the innermost `recording_alerts()` block, if any."""
    return _ACTIVE.get()


@contextlib.contextmanager
def recording_alerts() -> Iterator[AlertLedger]:
    """Collect the dedup decisions of every sweep run inside the block."""
    ledger = AlertLedger()
    token = _ACTIVE.set(ledger)
    try:
        yield ledger
    finally:
        _ACTIVE.reset(token)
