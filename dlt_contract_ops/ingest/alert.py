"""A rejected batch goes to the alert sinks as one event (`drift_type: "gate"`), with dry run,
dedup and per-sink delivery like every other finding: a sink that did not deliver it gets it
again on the next rejection, and a paging sink that did not is reported (a WARNING here; the
returned `DeliveryReport` says which)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from dlt_contract_ops.errors import NOT_KEPT
from dlt_contract_ops.model.gate import GateReport

if TYPE_CHECKING:
    from dlt_contract_ops.sinks.delivery import DeliveryReport
    from dlt_contract_ops.sinks.emitter import Emitter

log = logging.getLogger("dlt_contract_ops")


def gate_emitter(alert_sinks: Iterable[str] | None, *, dry_run: bool) -> Emitter:
    """The sinks a rejection would go to, built before the batch is looked at: a sink that
    cannot be built (a bad webhook `url`, an unknown option) raises its `AlertSinkError`, a
    `ConfigError`, before anything is extracted, as `reconcile` refuses to start; dropped
    with a warning, it would leave a rejection with no page."""
    from dlt_contract_ops.settings.project import load_project_settings
    from dlt_contract_ops.sinks.emitter import Emitter

    project = load_project_settings()
    names = tuple(alert_sinks) if alert_sinks is not None else project.alert_sinks
    return Emitter.from_names(names, dry_run=dry_run, dedup_settings=project.dedup,
                              strict=True)


def alert_rejection(
    report: GateReport, source: str, alert_sinks: Iterable[str] | None = None, *,
    dry_run: bool = False, emitter: Emitter | None = None,
) -> DeliveryReport:
    """Send the rejection to the sinks (`emitter`, else `gate_emitter(alert_sinks)`); what
    became of it (`undelivered` is not empty when a paging sink, or every sink, did not
    deliver it). The emitter is flushed and closed."""
    from dlt_contract_ops.detectors.severity import severity_of
    from dlt_contract_ops.model.findings import DriftFinding

    if emitter is None:
        emitter = gate_emitter(alert_sinks, dry_run=dry_run)
    first = report.differences[0] if report.differences else None
    table = first.table if first else "(batch)"
    finding = DriftFinding(
        drift_type="gate",
        source=source,
        pipeline=report.pipeline,
        resource=table,
        table=table,
        columns=sorted({d.label for d in report.differences if not d.approved}),
        column_types={d.label: d.observed_type for d in report.differences
                      if d.observed_type and not d.approved},
        expected_types={d.label: d.expected_type or "" for d in report.differences
                        if d.expected_type and not d.approved} or None,
        reproduce="; ".join(
            [report.reason, *(n for n in report.notes if n.startswith(NOT_KEPT))]
        ),
    )
    finding = finding.model_copy(update={"severity": severity_of(finding, source)})
    try:
        emitter.drift(finding)
    finally:
        emitter.flush()
    delivery = emitter.report
    if delivery.undelivered:
        log.warning("gate rejection of `%s`: %s", source, delivery.problem(delivery.undelivered))
    return delivery
