"""A rejected batch goes to the alert sinks as one event (`drift_type: "gate"`), with dry run
and dedup like every other finding."""

from __future__ import annotations

from collections.abc import Iterable

from dlt_contract_ops.gate.report import GateReport

#: the note a rejection carries when its quarantine could not be written
NOT_KEPT = "the rejected batch was NOT kept"


def alert_rejection(
    report: GateReport, source: str, alert_sinks: Iterable[str] | None, *, dry_run: bool
) -> None:
    from dlt_contract_ops.findings import DriftFinding
    from dlt_contract_ops.settings.project import load_project_settings
    from dlt_contract_ops.sinks.emitter import Emitter

    project = load_project_settings()
    names = tuple(alert_sinks) if alert_sinks is not None else project.alert_sinks
    emitter = Emitter.from_names(names, dry_run=dry_run, dedup_settings=project.dedup)
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
    try:
        emitter.drift(finding)
    finally:
        emitter.flush()
