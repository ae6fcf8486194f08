"""Fan-out to the configured sinks: isolation, fallback, dry-run, dedup and bounded flush.

- Every sink receives every event; one sink raising never crashes the sweep or starves the
  others.
- A sink that fails to load or construct is dropped for the invocation with a warning naming
  it; if every configured sink drops, emission falls back to the logging sink, and so does an
  event every sink raised on. `alert_sinks = []` disables emission on purpose.
- `dry_run` suppresses all emission (drift and error events); sinks are not even loaded.
- Dedup (on unless turned off) sends a drift finding only when it is new, changed or due for
  a re-alert, and records each decision in an `AlertLedger`.
- `flush` bounds every sink's flush by one shared timeout, then closes the sinks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from dlt_contract_ops.errors import AlertSinkError
from dlt_contract_ops.findings import DriftFinding
from dlt_contract_ops.sinks.base import AlertSink, ErrorEvent
from dlt_contract_ops.sinks.dedup import (
    AlertLedger,
    AlertMark,
    DedupStore,
    active_ledger,
    load_dedup_settings,
)
from dlt_contract_ops.sinks.loader import load_sink
from dlt_contract_ops.sinks.logging_sink import LoggingSink, error_line, where
from dlt_contract_ops.sinks.statefile import StateFileError

log = logging.getLogger("dlt_contract_ops")

DEFAULT_FLUSH_TIMEOUT = 5.0
SINK_SHARE = 0.9

__all__ = ["DEFAULT_FLUSH_TIMEOUT", "Emitter", "load_sink"]


def human_duration(seconds: float) -> str:
    """`86400.0` -> "24h", `5400.0` -> "90m", `45.0` -> "45s"."""
    for unit, size in (("h", 3600.0), ("m", 60.0)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


class Emitter:
    """Sends every event to every sink of one invocation."""

    def __init__(
        self,
        sinks: Sequence[tuple[str, AlertSink]],
        *,
        dry_run: bool = False,
        dedup: DedupStore | None = None,
        ledger: AlertLedger | None = None,
    ) -> None:
        self.sinks = list(sinks)
        self.dry_run = dry_run
        self.dedup = dedup
        self.ledger = ledger if ledger is not None else AlertLedger()
        self._fallback: AlertSink | None = None
        self._dedup_broken = False
        self._closed = False

    @classmethod
    def from_names(
        cls,
        names: Sequence[str],
        options: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        dry_run: bool = False,
        dedup: bool = True,
    ) -> Emitter:
        """Load the sinks named `names` (inside a project context).

        `options` maps a sink name to the keyword arguments it gets; a sink with no entry
        reads `[contract_ops.alert_sink.<name>]` from config and secrets. `dedup=False` turns
        dedup off for this invocation (`--no-dedup`); `[contract_ops.dedup] enabled = false`
        turns it off for the project.
        """
        loaded: list[tuple[str, AlertSink]] = []
        if dry_run:
            log.debug("dry run: alert sinks not loaded, emission suppressed")
        else:
            for name in dict.fromkeys(names):  # a name listed twice is one sink
                try:
                    given = (options or {}).get(name)
                    loaded.append((name, load_sink(name, given)))
                except AlertSinkError as exc:
                    log.warning("alert sink '%s' dropped for this run: %s", name, exc)
            if names and not loaded:
                log.warning(
                    "every configured alert sink (%s) dropped: falling back to 'logging'",
                    ", ".join(names),
                )
                loaded.append(("logging", LoggingSink()))
        store: DedupStore | None = None
        if dedup:
            settings = load_dedup_settings()
            if settings.enabled and settings.state_file is not None:
                store = DedupStore(settings.state_file, settings.realert_after)
        return cls(loaded, dry_run=dry_run, dedup=store, ledger=active_ledger())

    # -- events --------------------------------------------------------------------------
    def _mark(self, finding: DriftFinding) -> AlertMark | None:
        if self.dedup is None:
            return None
        if self._dedup_broken:
            return AlertMark("new", "unchecked")
        try:
            if self.dry_run or not self.sinks:
                return self.dedup.check(finding)  # nothing is sent: leave the state as is
            return self.dedup.claim(finding)
        except (StateFileError, OSError) as exc:
            # Better one repeated alert than a missed one: alert and say why, once.
            self._dedup_broken = True
            log.warning(
                "alert dedup state `%s` unavailable (%s): alerting without dedup for this run",
                self.dedup.path,
                exc,
            )
            return AlertMark("new", "unchecked")

    def drift(self, finding: DriftFinding) -> None:
        """Hand `finding` to every sink, unless dry run or dedup says it is a repeat."""
        mark = self._mark(finding)
        if mark is not None:
            self.ledger.record(finding, mark)
            if mark.status == "repeat":
                if self.dry_run:  # nothing would be sent anyway: the [repeat] mark says it
                    return
                log.info(
                    "drift at %s (%s) already alerted within %s: not sent again",
                    where(finding.pipeline, finding.source, finding.resource),
                    finding.drift_type,
                    human_duration(self.dedup.realert_after if self.dedup else 0.0),
                )
                return
        if self.dry_run:
            return
        self._fan_out("a drift event", lambda sink: sink.emit_drift(finding))

    def error(self, event: ErrorEvent) -> None:
        """Hand a reconciler error to every sink (never deduplicated)."""
        # The reconciler's own line is a WARNING without traceback: the sink owns the report,
        # so a logging->Sentry bridge on ERROR records does not report it twice.
        if self.dry_run:
            fate = "alert emission suppressed (dry run)"
        elif not self.sinks:
            fate = "alert emission disabled (alert_sinks = [])"
        else:
            fate = "reported to alert sinks: " + ", ".join(n for n, _ in self.sinks)
        log.warning("%s [%s]", error_line(event), fate)
        if self.dry_run:
            return
        self._fan_out("an error event", lambda sink: sink.emit_error(event))

    def _fan_out(self, kind: str, call: Any) -> None:
        failed = 0
        for name, sink in self.sinks:
            try:
                call(sink)
            except Exception as exc:
                failed += 1
                log.warning(
                    "alert sink '%s' failed on %s: %s: %s",
                    name,
                    kind,
                    type(exc).__name__,
                    exc,
                )
        if self.sinks and failed == len(self.sinks):
            if any(isinstance(s, LoggingSink) for _, s in self.sinks):
                return  # the logging sink itself failed: nothing better to fall back to
            log.warning("every alert sink failed on %s: logging it instead", kind)
            if self._fallback is None:
                self._fallback = LoggingSink()
            try:
                call(self._fallback)
            except Exception as exc:  # a broken logging setup must not crash the sweep
                log.debug("fallback logging sink failed: %s", exc)

    # -- the way out ---------------------------------------------------------------------
    def flush(self, timeout: float = DEFAULT_FLUSH_TIMEOUT) -> None:
        """Flush every sink in parallel within `timeout` seconds in total, then close them.

        A sink that overruns is abandoned (its thread is a daemon) with a warning; the
        emitter is finished afterwards.
        """
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + timeout
        # sinks get a little less than the whole budget, so one that honours its timeout is
        # done (and has logged its own warning) before the emitter gives up on it
        sink_timeout = timeout * SINK_SHARE
        threads: list[tuple[str, threading.Thread]] = []
        for name, sink in self.sinks:
            thread = threading.Thread(
                target=self._flush_one,
                args=(name, sink, sink_timeout),
                name=f"dlt-contract-ops-flush-{name}",
                daemon=True,
            )
            thread.start()
            threads.append((name, thread))
        for name, thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.warning(
                    "alert sink '%s' did not flush within %gs: undelivered events may be lost",
                    name,
                    timeout,
                )

    @staticmethod
    def _flush_one(name: str, sink: AlertSink, timeout: float) -> None:
        try:
            sink.flush(timeout)
        except Exception as exc:
            log.warning("alert sink '%s' failed to flush: %s: %s", name, type(exc).__name__, exc)
        close = getattr(sink, "close", None)
        if callable(close):
            try:
                close()
            except Exception as exc:
                log.debug("closing alert sink '%s' failed: %s", name, exc)
