"""The JSON documents the webhook sink POSTs: its own `json` shape and Slack's
incoming-webhook shape (`text` plus Block Kit `blocks`). Pure functions, no I/O.

Version 2 added `event` ("drift", "resolved", "error") to every document, and the resolve
documents; the keys of version 1 are all still there."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.base import ErrorEvent, ResolvedAlert
from dlt_contract_ops.sinks.logging_sink import one_line, where

PAYLOAD_VERSION = 2

# Slack rejects a message whose section text exceeds 3000 characters or whose header exceeds
# 150; long values are cut with an ellipsis instead.
SLACK_SECTION_MAX = 3000
SLACK_HEADER_MAX = 150
SLACK_SAMPLES_SHOWN = 3


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def drift_summary(finding: DriftFinding) -> str:
    """One human line: `schema drift (additive) at p.s.r: 2 column(s): a, b`."""
    return (
        f"schema drift ({finding.drift_type}) at "
        f"{where(finding.pipeline, finding.source, finding.resource)}: "
        f"{len(finding.columns)} column(s): {', '.join(finding.columns)}"
    )


def resolved_summary(alert: ResolvedAlert) -> str:
    """One human line: `schema drift (additive) resolved at p.s.r: 1 column(s): a`."""
    line = (
        f"schema drift ({alert.drift_type}) resolved at "
        f"{where(alert.pipeline, alert.source, alert.resource)}: "
        f"{len(alert.columns)} column(s): {', '.join(alert.columns)}"
    )
    return line + (f" (superseded by {alert.superseded_by})" if alert.superseded_by else "")


def error_summary(event: ErrorEvent) -> str:
    """One human line for a reconciler error."""
    detector = f" ({event.detector})" if event.detector else ""
    return (
        f"reconciler error{detector} at {where(event.pipeline, event.source, event.resource)}: "
        f"{one_line(event.message)}"
    )


def drift_json(finding: DriftFinding, *, send_samples: bool = True) -> dict[str, Any]:
    """`{"type": "schema_drift", "version": 1, "sent_at", "summary", "finding": {...}}`;
    the finding is the `--format json` one, samples emptied when `send_samples` is false.
    Its `severity` (`error`, `warning`, `info`) is a PagerDuty Events v2 `severity` as it is."""
    body = finding.model_dump(mode="json")
    if not send_samples:
        body["samples"] = {c: [] for c in finding.columns}
    return {
        "type": "schema_drift",
        "event": "drift",
        "version": PAYLOAD_VERSION,
        "sent_at": _now(),
        "summary": drift_summary(finding),
        "finding": body,
    }


def resolved_json(alert: ResolvedAlert) -> dict[str, Any]:
    """`{"type": "schema_drift", "event": "resolved", "version": 2, "sent_at", "summary",
    "finding": {"id", "drift_type", "source", "pipeline", "resource", "table", "columns",
    "resolved_at", "superseded_by"}}`: the finding `id` the drift event carried is gone."""
    return {
        "type": "schema_drift",
        "event": "resolved",
        "version": PAYLOAD_VERSION,
        "sent_at": _now(),
        "summary": resolved_summary(alert),
        "finding": {
            "id": alert.id, "drift_type": alert.drift_type, "source": alert.source,
            "pipeline": alert.pipeline, "resource": alert.resource, "table": alert.table,
            "columns": list(alert.columns), "resolved_at": alert.resolved_at,
            "superseded_by": alert.superseded_by,
        },
    }


def error_json(event: ErrorEvent) -> dict[str, Any]:
    """`{"type": "reconciler_error", "version": 1, "sent_at", "summary", "error": {...}}`."""
    return {
        "type": "reconciler_error",
        "event": "error",
        "version": PAYLOAD_VERSION,
        "sent_at": _now(),
        "summary": error_summary(event),
        "error": {
            "source": event.source,
            "pipeline": event.pipeline,
            "resource": event.resource,
            "detector": event.detector,
            "message": event.message,
            "exception_type": type(event.exception).__name__ if event.exception else None,
        },
    }


def slack_escape(text: str) -> str:
    """Escape the three characters Slack's mrkdwn treats as control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": _cut(text, SLACK_SECTION_MAX)}}


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": _cut(text, SLACK_HEADER_MAX)}}


def _fields(pairs: list[tuple[str, str | None]]) -> dict[str, Any]:
    return {
        "type": "section",
        "fields": [
            {"type": "mrkdwn", "text": _cut(f"*{k}*\n{slack_escape(v)}", 2000)}
            for k, v in pairs
            if v
        ],
    }


def _code(text: str) -> str:
    # a backtick inside a code span would end it early and Slack has no escape for it: use
    # a look-alike (U+02CB) so the column name stays readable
    return "`" + slack_escape(text).replace("`", "\u02cb") + "`"


def drift_slack(finding: DriftFinding, *, send_samples: bool = True) -> dict[str, Any]:
    """Slack's incoming-webhook document: fallback `text` and Block Kit `blocks`."""
    lines = []
    for column in finding.columns:
        line = f"• {_code(column)}"
        ctype = finding.column_types.get(column)
        expected = (finding.expected_types or {}).get(column)
        if ctype and expected:
            line += f" declared {slack_escape(expected)}, live {slack_escape(ctype)}"
        elif ctype:
            line += f" ({slack_escape(ctype)})"
        samples = finding.samples.get(column) or []
        if send_samples and samples:
            shown = ", ".join(_cut(str(s), 60) for s in samples[:SLACK_SAMPLES_SHOWN])
            line += f": {slack_escape(shown)}"
        lines.append(line)
    blocks = [
        _header(f"Schema drift ({finding.drift_type}): {finding.resource}"),
        _fields(
            [
                ("Severity", finding.severity),
                ("Pipeline", finding.pipeline),
                ("Source", finding.source),
                ("Resource", finding.resource),
                ("Table", finding.table),
            ]
        ),
        _section(f"*{len(finding.columns)} column(s)*\n" + "\n".join(lines)),
    ]
    if finding.reproduce:
        blocks.append(_section(f"*Reproduce*\n```{slack_escape(finding.reproduce)}```"))
    return {"text": slack_escape(drift_summary(finding)), "blocks": blocks}


def resolved_slack(alert: ResolvedAlert) -> dict[str, Any]:
    """Slack's incoming-webhook document for a resolved finding."""
    columns = "\n".join(f"• {_code(c)}" for c in alert.columns)
    blocks = [
        _header(f"Resolved: schema drift ({alert.drift_type}): {alert.resource}"),
        _fields([("Pipeline", alert.pipeline), ("Source", alert.source),
                 ("Resource", alert.resource), ("Table", alert.table)]),
        _section(f"*No longer found* ({len(alert.columns)} column(s), id "
                 f"{_code(alert.id)})\n{columns}"),
    ]
    return {"text": slack_escape("Resolved: " + resolved_summary(alert)), "blocks": blocks}


def error_slack(event: ErrorEvent) -> dict[str, Any]:
    """Slack's incoming-webhook document for a reconciler error."""
    blocks = [
        _header(f"Reconciler error: {event.source}"),
        _fields(
            [
                ("Pipeline", event.pipeline),
                ("Source", event.source),
                ("Resource", event.resource),
                ("Detector", event.detector),
            ]
        ),
        _section(f"```{slack_escape(event.message)}```"),
    ]
    return {"text": slack_escape(error_summary(event)), "blocks": blocks}
