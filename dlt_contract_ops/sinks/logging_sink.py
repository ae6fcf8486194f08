"""The default sink: one structured log line per event."""

from __future__ import annotations

import logging

from dlt_contract_ops.findings import DriftFinding
from dlt_contract_ops.sinks.base import ErrorEvent

logger = logging.getLogger("dlt_contract_ops.alerts")


class LoggingSink:
    """WARNING per drift finding, ERROR with traceback per reconciler error."""

    def __init__(self, logger_name: str = "dlt_contract_ops.alerts") -> None:
        self._log = logging.getLogger(logger_name)

    def emit_drift(self, finding: DriftFinding) -> None:
        where = ".".join(p for p in (finding.pipeline, finding.source, finding.resource) if p)
        self._log.warning(
            "schema drift (%s): %s — %d column(s): %s | reproduce: %s",
            finding.drift_type,
            where,
            len(finding.columns),
            ", ".join(finding.columns),
            finding.reproduce,
        )

    def emit_error(self, event: ErrorEvent) -> None:
        where = ".".join(p for p in (event.pipeline, event.source, event.resource) if p)
        exc = event.exception
        exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
        self._log.error("reconciler error: %s — %s", where, event.message, exc_info=exc_info)

    def flush(self, timeout: float) -> None:
        for handler in self._log.handlers or logging.getLogger().handlers:
            handler.flush()
