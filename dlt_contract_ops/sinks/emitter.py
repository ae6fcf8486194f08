"""Fan-out to the configured sinks: isolation, fallback, dry-run, dedup and bounded flush.

- Every sink receives every event; one sink raising never crashes the sweep or starves the
  others. One that fails to load is a configuration error when loaded `strict` (a
  reconcile); otherwise it is dropped for the run with a warning naming it, and if every
  configured sink drops, the logging sink takes over. `alert_sinks = []` disables emission.
- Delivery is per sink: a sink delivered a finding when `emit_drift` returned and, for an
  asynchronous sink (`ConfirmsDelivery`), the server confirmed it by the end of `flush`.
  Dedup settles the finding for each sink that delivered it; the next run sends it again to
  the others only. A finding a paging sink did not deliver (or no sink did) is written in
  full by the logging fallback and the sweep reports it as an error (`undelivered` in
  `DeliveryReport`). The logging sink (`pages = False`) is a local record: it never settles
  a finding for a paging sink, and its own failure alone is not an error (see `delivery`).
- A finding that carries an unexpired acknowledgement (`ack`, stamped by the run) is not
  sent; one whose acknowledgement expired is sent, carrying it.
- `dry_run` suppresses all emission (drift and error events); sinks are not even loaded.
- Dedup (on unless turned off) sends a drift finding to a sink only when it is new, changed
  or due for a re-alert there, decides a batch of findings at once (`drift_all`), and
  records each decision in an `AlertLedger`. `flush` bounds every sink's flush by one
  shared timeout, then closes the sinks.
- `resolve` (a sweep, once its sources ran) resolves what the sweep checked completely and no
  longer found, and sends each due resolve to the sinks that resolve alerts
  (`ResolvesAlerts`); delivery is per sink as for drift (`sinks.lifecycle`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.settings.duration import human
from dlt_contract_ops.settings.project import DedupSettings
from dlt_contract_ops.sinks.base import (
    AlertSink,
    ConfirmsDelivery,
    ErrorEvent,
    ResolvedAlert,
    ResolvesAlerts,
)
from dlt_contract_ops.sinks.dedup import ANY_SINK, AlertMark, DedupStore, FindingId, overall
from dlt_contract_ops.sinks.delivery import DeliveryReport, flush_all, missed, pages
from dlt_contract_ops.sinks.lifecycle import Swept
from dlt_contract_ops.sinks.loader import load_sink, load_sinks
from dlt_contract_ops.sinks.logging_sink import LoggingSink, error_line, where
from dlt_contract_ops.statefile import StateFileError

log = logging.getLogger("dlt_contract_ops")

DEFAULT_FLUSH_TIMEOUT = 5.0

__all__ = ["DEFAULT_FLUSH_TIMEOUT", "DeliveryReport", "Emitter", "load_sink"]


def sink_name(sink: AlertSink) -> str:
    """The name an instance passed as a sink goes by: its `name`, else its class name."""
    name = getattr(sink, "name", None)
    return name if isinstance(name, str) and name else type(sink).__name__


class Emitter:
    """Sends every event to every sink of one invocation."""

    def __init__(
        self,
        sinks: Sequence[tuple[str, AlertSink]],
        *,
        dry_run: bool = False,
        dedup: DedupStore | None = None,
        names: Sequence[str] | None = None,
    ) -> None:
        self.sinks = list(sinks)
        #: the sinks a finding is decided for: the loaded ones, or (a dry run loads none)
        #: the configured ones, so the marks say what a real run would do
        self.names = tuple(names) if names is not None else tuple(n for n, _ in self.sinks)
        self.dry_run = dry_run
        self.dedup = dedup
        self.report = DeliveryReport()
        self._fallback: LoggingSink | None = None
        self._dedup_broken = False
        self._closed = False
        #: finding key -> (finding, the sinks it went to, those whose emit_drift returned)
        self._handed: dict[FindingId, tuple[DriftFinding, list[str], set[str]]] = {}
        self._fell_back: set[FindingId] = set()
        #: (finding, the sinks dedup claimed it at) for this run, handed over or not
        self._claimed: list[tuple[DriftFinding, list[str]]] = []
        #: sink -> ids of the resolves it delivered / did not deliver this run
        self._resolves: tuple[dict[str, list[str]], dict[str, list[str]]] = ({}, {})

    @classmethod
    def from_names(
        cls,
        names: Sequence[str | AlertSink],
        options: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        dry_run: bool = False,
        dedup: bool = True,
        dedup_settings: DedupSettings | None = None,
        strict: bool = False,
    ) -> Emitter:
        """Load the sinks named `names` (inside a project context).

        An entry may also be a sink instance (e.g. `MemorySink`), used as given under its
        `name` attribute (else its class name): the seam for tests and library callers that
        hold their own sink.

        `options` maps a sink name to the keyword arguments it gets; a sink with no entry
        reads `[contract_ops.alert_sink.<name>]` from config and secrets. `dedup=False` turns
        dedup off for this invocation (`--no-dedup`); `[contract_ops.dedup] enabled = false`
        turns it off for the project.

        `strict`: a sink that cannot be loaded raises (`AlertSinkError`, a `ConfigError`: a
        reconcile refuses to start); else it is dropped with a warning (the gate's alert).
        """
        loaded: list[tuple[str, AlertSink]] = []
        given_sinks = {sink_name(n): n for n in names if not isinstance(n, str)}
        sink_names = [n if isinstance(n, str) else sink_name(n) for n in names]
        if dry_run:
            log.debug("dry run: alert sinks not loaded, emission suppressed")
        else:
            loaded = load_sinks(sink_names, given_sinks, options, strict=strict)
            if sink_names and not loaded:
                log.warning(
                    "every configured alert sink (%s) dropped: falling back to 'logging'",
                    ", ".join(sink_names),
                )
                loaded.append(("logging", LoggingSink()))
        store: DedupStore | None = None
        settings = dedup_settings or DedupSettings()
        if dedup and settings.enabled:
            store = DedupStore.from_settings(settings)
        planned = tuple(dict.fromkeys(sink_names)) if dry_run else None
        return cls(loaded, dry_run=dry_run, dedup=store, names=planned)

    # -- events --------------------------------------------------------------------------
    def _marks(
        self, findings: Sequence[DriftFinding]
    ) -> dict[FindingId, dict[str, AlertMark]] | None:
        """Finding id -> sink name -> what dedup decided there; None when dedup is off.
        One read (and at most one write) of the state for the whole batch."""
        if self.dedup is None:
            return None
        unchecked = {name: AlertMark("new", "unchecked") for name in self.names or (ANY_SINK,)}
        if self._dedup_broken:
            return {f.id: unchecked for f in findings}
        try:
            if self.dry_run or not self.sinks:  # nothing is sent: leave the state as is
                return {f.id: self.dedup.check(f, self.names) for f in findings}
            return self.dedup.reserve_all(findings, self.names)
        except (StateFileError, OSError) as exc:
            # Better one repeated alert than a missed one: alert and say why, once.
            self._dedup_broken = True
            log.warning(
                "alert dedup state `%s` unavailable (%s): alerting without dedup for this run",
                self.dedup.path,
                exc,
            )
            return {f.id: unchecked for f in findings}

    def drift(self, finding: DriftFinding) -> None:
        """Hand `finding` to every sink, unless dry run, an acknowledgement, or dedup (a
        repeat) holds it back."""
        self.drift_all([finding])

    def drift_all(self, findings: Sequence[DriftFinding]) -> None:
        """`drift` for each of `findings`, in order, with one dedup decision for the batch
        (the state file is read and written once, not once per finding)."""
        due = [f for f in map(self._unacknowledged, findings) if f is not None]
        marks = self._marks(due)
        if marks is not None and self.sinks and not self.dry_run:
            # claimed before any is sent: one never handed over (a signal) is released at flush
            self._claimed.extend((f, [n for n, m in marks[f.id].items() if m.status == "new"])
                                 for f in due)
        for finding in due:
            self._send(finding, None if marks is None else marks[finding.id])

    @staticmethod
    def _unacknowledged(finding: DriftFinding) -> DriftFinding | None:
        """`finding`, or None when the acknowledgement it carries (`AckBook.stamp`, once, by
        the run) holds it back; an expired one is alerted again, saying so."""
        if finding.acknowledged and finding.ack is not None:
            log.info(
                "drift at %s (%s) acknowledged until %s by %s: not sent",
                where(finding.pipeline, finding.source, finding.resource),
                finding.drift_type, finding.ack["until"], finding.ack["by"],
            )
            return None
        return finding

    def _send(self, finding: DriftFinding, marks: dict[str, AlertMark] | None) -> None:
        """Hand `finding` to the sinks dedup decided it is due at (all, without dedup)."""
        targets = list(self.names)
        if marks is not None:
            mark = overall(marks)
            self.report.ledger.record(finding, mark)
            if mark.status == "repeat":
                if self.dry_run:  # nothing would be sent anyway: the [repeat] mark says it
                    return
                window = human(timedelta(seconds=self.dedup.realert_after if self.dedup else 0))
                why = ("is being sent by another run right now" if mark.reason == "in_flight"
                       else f"already alerted within {window}")
                log.info("drift at %s (%s) %s: not sent again",
                         where(finding.pipeline, finding.source, finding.resource),
                         finding.drift_type, why)
                return
            targets = [name for name in targets if marks[name].status == "new"]
            if len(targets) < len(marks) and self.sinks and not self.dry_run:
                log.info(
                    "drift at %s (%s) not sent again to %s (alerted there already, or being "
                    "sent by another run): sent to %s only",
                    where(finding.pipeline, finding.source, finding.resource),
                    finding.drift_type,
                    ", ".join(f"'{n}'" for n in marks if n not in targets),
                    ", ".join(f"'{n}'" for n in targets),
                )
        if self.dry_run or not self.sinks:
            return
        accepted: set[str] = set()
        # handed over before any sink runs: a send cut short by SIGINT/SIGTERM leaves it
        # undelivered, so flush logs it and releases its dedup claims instead of forgetting it
        self._handed[finding.id] = (finding, targets, accepted)
        self._fan_out(
            "a drift event", lambda sink: sink.emit_drift(finding), accepted, only=targets
        )
        lost = missed(targets, accepted, self._paging())
        if lost:
            self._fall_back(finding, lost, delivered=bool(accepted))

    def resolve(self, swept: Swept) -> list[ResolvedAlert]:
        """Resolve the findings `swept` checked the table of and did not find, send each due
        resolve (this sweep's, or an earlier one's not delivered) to the sinks that resolve
        alerts; the findings resolved now. Nothing without the dedup state, in a dry run or
        with no sink."""
        if self.dedup is None or self._dedup_broken or self.dry_run or not self.sinks:
            return []
        resolving = [name for name, sink in self.sinks if isinstance(sink, ResolvesAlerts)]
        try:
            fresh, sends = self.dedup.resolve_all(swept, resolving)
        except (StateFileError, OSError) as exc:
            log.warning("alert dedup state `%s` unavailable (%s): nothing resolved this run",
                        self.dedup.path, exc)
            return []
        for alert, targets in sends:
            accepted = self._fan_out("a resolve event",
                                     lambda sink, a=alert: sink.emit_resolved(a), only=targets)
            for name in targets:
                done, due = self._resolves
                (done if name in accepted else due).setdefault(name, []).append(alert.id)
                if name not in accepted:
                    log.warning("alert sink '%s' did not deliver the resolve of %s (%s): it "
                                "is sent again next run", name, alert.id, alert.drift_type)
        return fresh

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

    def _paging(self) -> set[str]:
        return {name for name, sink in self.sinks if pages(sink)}

    def _fan_out(
        self,
        kind: str,
        call: Any,
        accepted: set[str] | None = None,
        only: Sequence[str] | None = None,
    ) -> set[str]:
        """Call every sink (of `only`, when given); the names of those that returned
        (delivered, for a sync sink), added to `accepted` as they return."""
        accepted = set() if accepted is None else accepted
        for name, sink in self.sinks:
            if only is not None and name not in only:
                continue
            try:
                call(sink)
                accepted.add(name)
            except Exception as exc:
                self.report.failures[name] = f"{type(exc).__name__}: {exc}"
                log.warning(
                    "alert sink '%s' failed on %s: %s: %s", name, kind, type(exc).__name__, exc
                )
        if self.sinks and not accepted and kind != "a drift event":
            self._fall_back_error(call, kind)
        return accepted

    def _fallback_sink(self) -> LoggingSink:
        if self._fallback is None:
            self._fallback = LoggingSink(detail=True)
        return self._fallback

    def _fall_back(self, finding: DriftFinding, lost: Sequence[str], *, delivered: bool) -> None:
        """Write the whole finding (columns, types, samples, reproduce) to the log: no sink,
        or not the paging sinks `lost`, has it. This does not count as delivery."""
        self._fell_back.add(finding.id)
        at = where(finding.pipeline, finding.source, finding.resource)
        if delivered:
            names = ", ".join(f"'{n}'" for n in lost)
            log.warning(
                "alert sink %s did not deliver the drift at %s (%s): writing it to the log "
                "instead; it will be sent to %s again on the next run",
                names, at, finding.drift_type, names,
            )
        else:
            log.warning(
                "no alert sink delivered the drift at %s (%s): writing it to the log instead; "
                "it will be sent again on the next run",
                at, finding.drift_type,
            )
        try:
            self._fallback_sink().emit_drift(finding)
        except Exception as exc:  # a broken logging setup must not crash the sweep
            log.debug("fallback logging sink failed: %s", exc)

    def _fall_back_error(self, call: Any, kind: str) -> None:
        if any(isinstance(s, LoggingSink) for _, s in self.sinks):
            return  # the logging sink itself failed: nothing better to fall back to
        log.warning("every alert sink failed on %s: logging it instead", kind)
        try:
            call(self._fallback_sink())
        except Exception as exc:
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
        flush_all(self.sinks, timeout)
        self._settle()

    def _settle(self) -> None:
        """Decide delivered vs undelivered per finding and sink, and record it in the dedup
        state: each sink settles only what it delivered."""
        for name, sink in self.sinks:
            if not isinstance(sink, ConfirmsDelivery):
                continue
            try:
                unconfirmed = {f.id for f in sink.undelivered()}
            except Exception as exc:  # cannot tell: better a repeated alert than a lost one
                log.warning("alert sink '%s' cannot report delivery: %s", name, exc)
                unconfirmed = set(self._handed)
            if unconfirmed & {k for k, h in self._handed.items() if name in h[1]}:
                self.report.failures.setdefault(name, "the receiving end did not confirm")
            for key in unconfirmed:
                if key in self._handed:
                    self._handed[key][2].discard(name)
        delivered: dict[str, list[DriftFinding]] = {}
        undelivered: dict[str, list[DriftFinding]] = {}
        paging = self._paging()
        for finding, targets, accepted in self._handed.values():
            for name in targets:
                (delivered if name in accepted else undelivered).setdefault(name, []).append(
                    finding
                )
            self.report.delivered_to[finding.id] = tuple(n for n in targets if n in accepted)
            lost = missed(targets, accepted, paging)
            if not lost:
                continue
            self.report.undelivered.append(finding)
            self.report.undelivered_to[finding.id] = tuple(lost)
            self.report.ledger.record(finding, AlertMark(
                "undelivered", "paging_sink_failed" if accepted else "no_sink_confirmed"
            ))
            if finding.id not in self._fell_back:  # an asynchronous sink lost it
                self._fall_back(finding, lost, delivered=bool(accepted))
        for finding, claimed in self._claimed:  # never handed over: release its claims
            if finding.id not in self._handed:
                for name in claimed:
                    undelivered.setdefault(name, []).append(finding)
        if self.dedup is not None and not self._dedup_broken:
            try:
                self.dedup.settle(delivered, undelivered, *self._resolves)
            except (StateFileError, OSError) as exc:
                log.warning("alert dedup state `%s` not updated: %s", self.dedup.path, exc)
