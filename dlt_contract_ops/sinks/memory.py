"""An alert sink that keeps every event in memory: the test double shipped with the library.

Like httpx's `MockTransport`, it lets a test (or a notebook) see exactly what a run alerted,
through the emitter's real fan-out, dedup and delivery rules, without a server or a patch:

>>> from dlt_contract_ops.sinks.memory import MemorySink
>>> sink = MemorySink()
>>> sink.drift, sink.errors, sink.resolved, sink.flushes
([], [], [], 0)

Pass the instance where sink names are accepted, `run(alert_sinks=[sink])` (mixed with names
if wanted); its `name` (default "memory") is the sink the dedup state records the findings
as alerted to.
"""

from __future__ import annotations

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.base import ErrorEvent, ResolvedAlert


class MemorySink:
    """Records every finding, error and resolve it is handed; `pages` as a paging sink
    (True)."""

    pages = True

    def __init__(self, name: str = "memory") -> None:
        self.name = name
        self.drift: list[DriftFinding] = []
        self.errors: list[ErrorEvent] = []
        self.resolved: list[ResolvedAlert] = []
        self.flushes = 0

    def emit_drift(self, finding: DriftFinding) -> None:
        self.drift.append(finding)

    def emit_error(self, event: ErrorEvent) -> None:
        self.errors.append(event)

    def emit_resolved(self, alert: ResolvedAlert) -> None:
        self.resolved.append(alert)

    def flush(self, timeout: float) -> None:
        self.flushes += 1
