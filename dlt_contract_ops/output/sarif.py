"""SARIF 2.1.0: one result per finding, the detectors as the tool's rules.

A finding is a result at its severity's level (`error`, `warning`; `info`: `note`), its
`ruleId` its drift type (whose `defaultConfiguration.level` is the detector's default
severity), located logically
at its table (`source.dataset.table`); its columns, types and reproduce SQL ride in the
result's property bag. An acknowledged finding is a `note`-level result with an accepted
external suppression (`justification`: the reason; `properties`: `by`, `until`). Errors
and notes are tool execution notifications (`error` / `note`), and `executionSuccessful` is
false when anything errored. The log validates against the OASIS SARIF 2.1.0 schema
(tests/formats/sarif-schema-2.1.0.json).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dlt_contract_ops.detectors.registry import get, registered_detectors
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult, finding_document
from dlt_contract_ops.model.severity import as_severity, level
from dlt_contract_ops.output.documents import json_text
from dlt_contract_ops.output.wording import summary
from dlt_contract_ops.version import __version__

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "dlt-contract-ops"


def rules() -> tuple[str, ...]:
    """The tool's rules: every registered detector, in registry order (`Detector.order`
    keeps a built-in's rule index where it was; a plugin's rules come after them)."""
    return tuple(d.name for d in registered_detectors())


def _rule(name: str) -> dict[str, Any]:
    detector = get(name)
    return {
        "id": name,
        "name": f"{name.capitalize()}Drift",
        "shortDescription": {"text": f"{name} drift: {detector.summary}"},
        "defaultConfiguration": {"level": level("sarif", as_severity(detector.severity))},
    }


def _location(r: ReconcileResult, f: DriftFinding) -> dict[str, Any]:
    where = [p for p in (r.source, r.dataset, f.table) if p]
    return {
        "logicalLocations": [
            {"name": f.table, "fullyQualifiedName": ".".join(where), "kind": "table"}
        ]
    }


def _result(r: ReconcileResult, f: DriftFinding) -> dict[str, Any]:
    properties = finding_document(f)
    properties.update({"pipeline": r.pipeline, "destination": r.destination,
                       "dataset": r.dataset})
    result: dict[str, Any] = {
        "ruleId": f.drift_type,
        "ruleIndex": rules().index(f.drift_type),
        "level": "note" if f.acknowledged else level("sarif", f.severity),
        "message": {"text": f"{r.source}: {summary(f)}"},
        "locations": [_location(r, f)],
        # the finding's id: stable across runs for the same drift, so viewers dedup it
        "partialFingerprints": {"findingId/v1": f.id},
        "properties": {k: v for k, v in properties.items() if v is not None},
    }
    if f.acknowledged:
        ack = f.ack or {}
        result["suppressions"] = [{
            "kind": "external",  # recorded in .dlt/contract_ops_acks.toml, not in the data
            "status": "accepted",
            "justification": str(ack.get("reason")),
            "properties": {"by": ack.get("by"), "until": ack.get("until")},
        }]
    return result


def _notification(level: str, text: str, r: ReconcileResult) -> dict[str, Any]:
    return {
        "level": level,
        "message": {"text": text},
        "properties": {"source": r.source, "detector": r.detector},
    }


def sarif_log(results: Sequence[ReconcileResult]) -> dict[str, Any]:
    """The SARIF log as a dict: one run, one result per finding.

    >>> log = sarif_log([ReconcileResult(source="shop", error="boom")])
    >>> log["runs"][0]["invocations"][0]["executionSuccessful"]
    False
    """
    notifications = []
    for r in results:
        if r.error:
            notifications.append(_notification("error", r.error, r))
        notifications += [_notification("note", note, r) for note in r.notes]
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": __version__,
                        "rules": [_rule(name) for name in rules()],
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not any(r.error for r in results),
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "results": [_result(r, f) for r in results for f in r.findings],
            }
        ],
    }


def to_sarif(results: Sequence[ReconcileResult]) -> str:
    """The SARIF 2.1.0 log (`reconcile --format sarif`)."""
    return json_text(sarif_log(results)) + "\n"
