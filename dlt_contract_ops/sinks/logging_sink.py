"""The default sink: one structured log line per event.

Drift, at the finding's severity on the `dlt_contract_ops.alerts` logger (ERROR, WARNING or
INFO: `model.severity.LEVELS["logging"]`)::

    schema drift kind=additive at=gh.gh_api.events table=events columns=["size"] id=… | …

A reconciler error, at ERROR with the traceback::

    reconciler error detector=additive at=github.gh_api.events: sample query for `events` failed: …

`at` is pipeline.source.resource; a part that is not a plain token (a space, a dot, a quote)
is JSON-quoted, and columns are a JSON list, so odd identifiers stay unambiguous. The
reproduce SELECT is not in the line (it spans several lines and names every drifted column):
the line says where it is (`--format json`, the report), under the finding's `id`.
Every line is written with its unprintable characters escaped (`core.escaping.visible`): a
column name holding ESC, BEL or a bidi override (U+202E) shows as `\u001b`, `\u0007`,
`\u202e`, never as a control that reaches the terminal.
"""

from __future__ import annotations

import json
import logging
import re

from dlt_contract_ops.core.escaping import visible
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.model.severity import level
from dlt_contract_ops.sinks.base import ErrorEvent, ResolvedAlert

LOGGER_NAME = "dlt_contract_ops.alerts"

_PLAIN = re.compile(r"[^\s.\"'=|\\]+")


def token(value: str) -> str:
    """`value` bare when it is a plain token, else JSON-quoted (`"my events"`)."""
    return value if _PLAIN.fullmatch(value) else json.dumps(value, ensure_ascii=False)


def where(pipeline: str | None, source: str | None, resource: str | None) -> str:
    """pipeline.source.resource with odd parts quoted; missing parts left out."""
    return ".".join(token(p) for p in (pipeline, source, resource) if p)


def one_line(text: str) -> str:
    """`text` with line breaks turned into spaces (nothing else touched: SQL stays valid)."""
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


#: where a finding's reproduce SELECT is, said instead of the SELECT itself
REPRODUCE_HINT = "reproduce SELECT: `reconcile --format json` or the report"


def drift_line(finding: DriftFinding) -> str:
    """The one line the logging sink writes for a drift finding: where, the table, the
    columns and the finding id. The reproduce SELECT is not on it (a
    log line stays one line): it is in the JSON output and the report, under the same id."""
    line = (
        f"schema drift kind={finding.drift_type} "
        f"at={where(finding.pipeline, finding.source, finding.resource)} "
        f"table={token(finding.table)} "
        f"columns={json.dumps(list(finding.columns), ensure_ascii=False)} id={finding.id}"
    )
    if finding.reproduce:
        line += f" | {REPRODUCE_HINT}"
    return visible(line)


def drift_detail(finding: DriftFinding) -> str:
    """The whole finding, for the fallback when no sink delivered it: the one line, then
    the finding as JSON (types, samples, coverage, reproduce SQL) on the lines after it."""
    from dlt_contract_ops.model.findings import finding_document

    doc = json.dumps(finding_document(finding), indent=2, ensure_ascii=False, default=str)
    return "\n".join([drift_line(finding), *(visible(line) for line in doc.splitlines())])


def error_line(event: ErrorEvent) -> str:
    """The one line (before its traceback) the logging sink writes for a reconciler error."""
    head = "reconciler error"
    if event.detector:
        head += f" detector={event.detector}"
    head += f" at={where(event.pipeline, event.source, event.resource)}"
    return visible(f"{head}: {one_line(event.message)}")


def resolved_line(alert: ResolvedAlert) -> str:
    """The one line the logging sink writes (INFO) when a finding it logged is resolved."""
    line = (
        f"schema drift resolved kind={alert.drift_type} "
        f"at={where(alert.pipeline, alert.source, alert.resource)} table={token(alert.table)} "
        f"columns={json.dumps(list(alert.columns), ensure_ascii=False)} id={alert.id}"
    )
    if alert.superseded_by:
        line += f" superseded_by={alert.superseded_by}"
    return visible(line)


def log_level(finding: DriftFinding) -> int:
    """The stdlib logging level of `finding`'s severity (`model.severity.LEVELS["logging"]`).

    >>> log_level(DriftFinding(drift_type="missing", source="s", resource="r", table="r",
    ...     columns=["c"], severity="error")) == logging.ERROR
    True
    """
    # getLevelName maps a registered name back to its number (getLevelNamesMapping is 3.11+)
    return int(logging.getLevelName(level("logging", finding.severity)))


class LoggingSink:
    """One line per drift finding at its severity's level, ERROR with traceback per reconciler
    error. With `detail` (the emitter's fallback for a finding no sink delivered) a finding is
    written at WARNING at least: it stands in for a lost alert, and a log set to WARNING must
    not drop it.

    >>> LoggingSink().emit_drift(DriftFinding(drift_type="additive", source="s",
    ...     resource="r", table="r", columns=["c"]))  # logs one WARNING line
    """

    #: a local record, not a page: it settles a finding for itself only (see `sinks.delivery`)
    pages = False

    def __init__(self, logger_name: str = LOGGER_NAME, detail: bool = False) -> None:
        self._log = logging.getLogger(logger_name)
        self._detail = detail

    def emit_drift(self, finding: DriftFinding) -> None:
        if self._detail:
            self._log.log(max(log_level(finding), logging.WARNING), "%s", drift_detail(finding))
        else:
            self._log.log(log_level(finding), "%s", drift_line(finding))

    def emit_resolved(self, alert: ResolvedAlert) -> None:
        self._log.info("%s", resolved_line(alert))

    def emit_error(self, event: ErrorEvent) -> None:
        exc = event.exception
        exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
        self._log.error("%s", error_line(event), exc_info=exc_info)

    def flush(self, timeout: float) -> None:
        logger: logging.Logger | None = self._log
        while logger is not None:  # every handler a record from this logger can reach
            for handler in logger.handlers:
                handler.flush()
            logger = logger.parent if logger.propagate else None
