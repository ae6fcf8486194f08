"""The AlertSink protocol: the contract of the `dlt_contract_ops.alert_sinks` plugin axis."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from dlt_contract_ops.model.findings import DriftFinding


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
    `[contract_ops.alert_sink.<name>]`) and must bound `flush` by `timeout` seconds.

    Delivery signal: an event counts as delivered by a sink when `emit_*` returned normally
    and, for a sink that also implements `ConfirmsDelivery`, `undelivered()` does not list it
    after `flush`. A sink that could not deliver raises (`DeliveryError` by convention; the
    emitter isolates any exception) so the emitter can fall back and re-send next run.
    Delivery is tracked per sink: a sink settles a finding for itself only.

    Optional class attribute `pages: bool` (default True): False declares a local record (the
    logging sink) rather than a page. A paging sink that did not deliver a finding makes it
    undelivered (an error, exit 1) even when another sink has it; a local record's failure
    does so only when no sink delivered the finding.
    """

    def emit_drift(self, finding: DriftFinding) -> None: ...

    def emit_error(self, event: ErrorEvent) -> None: ...

    def flush(self, timeout: float) -> None: ...


@runtime_checkable
class ConfirmsDelivery(Protocol):
    """Optional for asynchronous sinks (Sentry): delivery is known only after `flush`.

    `undelivered()` is called after `flush` (also when flush ran out of time) and returns
    every finding handed to `emit_drift` whose event the receiving end did not confirm
    (non-2xx answer, network error, dropped, still queued).
    """

    def undelivered(self) -> Sequence[DriftFinding]: ...


@dataclass(frozen=True)
class ResolvedAlert:
    """A finding a sink was alerted about that a later complete sweep of its table no
    longer found (`ResolvesAlerts.emit_resolved`): what it was, and since when it is gone.

    `id` is the finding's id (`DriftFinding.id`, the drift event's dedup key);
    `superseded_by` names the finding that took its place when its scope grew (more columns:
    another id), else None.
    """

    id: str
    source: str
    resource: str
    table: str
    drift_type: str
    columns: tuple[str, ...]
    resolved_at: str
    pipeline: str | None = None
    superseded_by: str | None = None


@runtime_checkable
class ResolvesAlerts(Protocol):
    """Optional: a sink that closes what it opened. `emit_resolved` is called once a finding
    the sink delivered is resolved (see docs/sinks.md, lifecycle); it is delivered when the
    call returns, and raising (`DeliveryError`) leaves it due for the next run. A sink without
    it is never told of a resolution: sinks written for `AlertSink` alone keep working."""

    def emit_resolved(self, alert: ResolvedAlert) -> None: ...


class Emits(Protocol):
    """What a detector runner hands its findings and errors to."""

    def drift(self, finding: DriftFinding) -> None: ...

    def error(self, event: ErrorEvent) -> None: ...


class HeldDrift:
    """Holds one source's drift findings until the combining detectors (renames) ran, so a
    folded component is never alerted on its own; errors pass straight through."""

    def __init__(self, emitter: Emits) -> None:
        self.emitter = emitter
        self.findings: list[DriftFinding] = []

    def drift(self, finding: DriftFinding) -> None:
        self.findings.append(finding)

    def error(self, event: ErrorEvent) -> None:
        self.emitter.error(event)
