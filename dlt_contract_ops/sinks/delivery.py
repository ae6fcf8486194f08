"""What became of a run's findings at each sink, and the rule that makes one undelivered.

Delivery is per sink: a finding is settled for a sink once that sink delivered it. A sink that
only keeps a local record (`pages = False`: the logging sink) settles itself and nothing else,
so a finding whose page failed is undelivered even though the log has it. A finding is
undelivered when a paging sink it was sent to did not deliver it, or when no sink did.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.dedup import AlertMark, AlertStatus, FindingId

log = logging.getLogger("dlt_contract_ops")
#: the share of the flush timeout each sink gets: one that honours its timeout is done (and
#: has logged its own warning) before the emitter gives up on it
SINK_SHARE = 0.9


def pages(sink: Any) -> bool:
    """Whether `sink` pages someone (the default) or only keeps a local record.

    >>> from dlt_contract_ops.sinks.logging_sink import LoggingSink
    >>> pages(LoggingSink()), pages(object())
    (False, True)
    """
    return bool(getattr(sink, "pages", True))


def missed(
    targets: Sequence[str], delivered: Collection[str], paging: Collection[str]
) -> list[str]:
    """The sinks whose failure makes a finding undelivered: each paging sink of `targets` that
    did not deliver it; every target when none delivered it.

    >>> missed(["logging", "webhook"], {"logging"}, {"webhook"})
    ['webhook']
    >>> missed(["logging", "webhook"], {"webhook"}, {"webhook"})
    []
    >>> missed(["logging"], set(), set())
    ['logging']
    """
    failed = [name for name in targets if name not in delivered]
    if not any(name in delivered for name in targets):
        return failed
    return [name for name in failed if name in paging]


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)



class AlertLedger(Mapping[FindingId, AlertStatus]):
    """Finding key -> "new" | "repeat" | "undelivered" for one run.

    The emitter fills it as it decides and delivers; the sweep copies each status onto its
    finding (`DriftFinding.alert`) once the sinks are flushed.
    """

    def __init__(self) -> None:
        self._marks: dict[FindingId, AlertMark] = {}

    def record(self, finding: DriftFinding, mark: AlertMark) -> None:
        self._marks[finding.id] = mark

    def mark(self, finding: DriftFinding) -> AlertMark | None:
        """The full decision (status and reason) for `finding`, None if none was made."""
        return self._marks.get(finding.id)

    def __getitem__(self, key: FindingId) -> AlertStatus:
        return self._marks[key].status

    def __iter__(self) -> Iterator[FindingId]:
        return iter(self._marks)

    def __len__(self) -> int:
        return len(self._marks)


@dataclass
class DeliveryReport:
    """What became of this run's findings once the sinks were flushed."""

    ledger: AlertLedger = field(default_factory=AlertLedger)
    #: findings a paging sink (or every sink) they were sent to did not deliver
    undelivered: list[DriftFinding] = field(default_factory=list)
    #: finding key -> the sinks that did not deliver it (sent to them again next run)
    undelivered_to: dict[FindingId, tuple[str, ...]] = field(default_factory=dict)
    #: finding key -> the sinks that delivered it this run
    delivered_to: dict[FindingId, tuple[str, ...]] = field(default_factory=dict)
    #: sink name -> why it failed, for the error message
    failures: dict[str, str] = field(default_factory=dict)

    def problem(self, lost: Sequence[DriftFinding]) -> str:
        """The error a result carries for its undelivered findings `lost`, naming them, the
        sinks that did not deliver them and why."""
        sinks = sorted({n for f in lost for n in self.undelivered_to.get(f.id, ())})
        why = "; ".join(
            f"'{n}': {m}" for n, m in sorted(self.failures.items()) if not sinks or n in sinks
        )
        which = ", ".join(f"`{f.table}` {f.drift_type}" for f in lost)
        if not any(self.delivered_to.get(f.id) for f in lost):
            return (
                f"alert not delivered for {len(lost)} finding(s) ({which}): no alert sink "
                f"confirmed delivery ({why or 'no sink accepted it'}). They were written to "
                "the log and will be sent again on the next run."
            )
        return (
            f"alert not delivered to {_names(sinks)} for {len(lost)} finding(s) ({which}) "
            f"({why or 'not confirmed'}). They were written to the log and will be sent to "
            f"{_names(sinks)} again on the next run."
        )


def flush_all(sinks: Sequence[tuple[str, Any]], timeout: float) -> None:
    """Flush every sink in parallel within `timeout` seconds in total, then close each.

    A sink that overruns is abandoned (its thread is a daemon) with a warning naming it.
    """
    deadline = time.monotonic() + timeout
    threads: list[tuple[str, threading.Thread]] = []
    for name, sink in sinks:
        thread = threading.Thread(
            target=_flush_one, args=(name, sink, timeout * SINK_SHARE),
            name=f"dlt-contract-ops-flush-{name}", daemon=True,
        )
        thread.start()
        threads.append((name, thread))
    for name, thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            log.warning(
                "alert sink '%s' did not flush within %gs: its unconfirmed events count as "
                "undelivered", name, timeout,
            )


def _flush_one(name: str, sink: Any, timeout: float) -> None:
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
