"""The AlertSink protocol: the contract of the `dlt_contract_ops.alert_sinks` plugin axis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from dlt_contract_ops.findings import DriftFinding


@dataclass(frozen=True)
class ErrorEvent:
    """A reconciler error handed to sinks: where it happened and what it was."""

    source: str
    message: str
    pipeline: str | None = None
    resource: str | None = None
    detector: str | None = None
    exception: BaseException | None = None


@runtime_checkable
class AlertSink(Protocol):
    """Receives every drift finding and every reconciler error of a run.

    A sink is constructed with its options as keyword arguments (from
    `[contract_ops.alert_sink.<name>]`), must not raise out of `emit_*` on purpose (the
    emitter isolates it anyway) and must bound `flush` by `timeout` seconds.
    """

    def emit_drift(self, finding: DriftFinding) -> None: ...

    def emit_error(self, event: ErrorEvent) -> None: ...

    def flush(self, timeout: float) -> None: ...
