"""The result values every detector produces and every renderer and sink consumes.

Frozen pydantic models: immutable, and JSON-serializable with one call. A value imports
nothing above it: the detector registry checks a result's names (`detectors.registry.checked`)
when the run hands the result over, not the value when it is built.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    computed_field,
    model_serializer,
    model_validator,
)

from dlt_contract_ops.model.details import (
    FLAT_KEYS,
    Coverage,
    Details,
    PluginDetails,
    details_from_flat,
)
from dlt_contract_ops.model.identity import finding_id
from dlt_contract_ops.model.severity import DEFAULT_SEVERITY, Severity, at_least, rank

__all__ = ["Coverage", "DriftFinding", "ReconcileResult"]  # Coverage: from model.details

#: what became of a finding's alert: sent and delivered, held back by dedup, or not delivered
AlertStatus = Literal["new", "repeat", "undelivered"]


FORMAT_VERSION = 1


class DriftFinding(BaseModel):
    """One drifted resource: every drifted column of it, never one finding per column.

    >>> DriftFinding(drift_type="additive", source="s", resource="r", table="t",
    ...              columns=["c"]).columns
    ['c']
    """

    model_config = ConfigDict(frozen=True)

    drift_type: str
    source: str
    resource: str
    table: str
    columns: list[str]
    #: how bad it is (`model.severity`): set by the run from its detector's default and the
    #: project's `[contract_ops.severity]` tables (`detectors.severity.graded`)
    severity: Severity = DEFAULT_SEVERITY
    pipeline: str | None = None
    column_types: dict[str, str] = Field(default_factory=dict)
    samples: dict[str, list[Any]] = Field(default_factory=dict)
    first_seen: str | None = None
    reproduce: str | None = None
    #: set by the sweep after the sinks were flushed; None when nothing was decided
    alert: AlertStatus | None = None
    #: why an alert was sent again (`alert: "new"`): "reopened" (it had been resolved) or
    #: "escalated" (its scope grew); None otherwise
    alert_reason: str | None = None
    #: the acknowledgement that covers (or covered, `expired: true`) this finding
    ack: dict[str, Any] | None = None
    #: what the detector measured beside the columns: its own details model (`model.details`);
    #: the document carries it as the flat keys it always had
    details: Details | None = None

    @model_validator(mode="before")
    @classmethod
    def _fold_flat_details(cls, data: Any) -> Any:
        """The flat keys (`coverage=`, `renamed_from=`, a plugin's `details={...}`) into the
        detector's details model."""
        if isinstance(data, dict):
            return details_from_flat(str(data.get("drift_type", "")), dict(data))
        return data

    @model_serializer(mode="wrap")
    def _flat_document(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Serialised with the details back at the flat keys, in the document's order."""
        data: dict[str, Any] = handler(self)
        dumped = data.pop("details", None)
        flat: dict[str, Any] = dict.fromkeys(FLAT_KEYS)
        plugin = None
        if isinstance(self.details, PluginDetails):
            plugin = dumped["data"] if isinstance(dumped, dict) else None
        elif isinstance(dumped, dict):
            flat.update({k: v for k, v in dumped.items() if k != "kind"})
        data.update(flat, details=plugin)
        return {k: data[k] for k in _DUMP_ORDER if k in data} | {
            k: v for k, v in data.items() if k not in _DUMP_ORDER
        }

    def _detail(self, key: str) -> Any:
        return getattr(self.details, key, None) if self.details is not None else None

    @property
    def column_first_seen(self) -> dict[str, str] | None:
        """Per column, when its drift began (additive: its first value; removal: the load
        where it went dark); `first_seen` is the earliest of them."""
        return cast("dict[str, str] | None", self._detail("column_first_seen"))

    @property
    def coverage(self) -> dict[str, Coverage] | None:
        return cast("dict[str, Coverage] | None", self._detail("coverage"))

    @property
    def expected_types(self) -> dict[str, str] | None:
        return cast("dict[str, str] | None", self._detail("expected_types"))

    @property
    def sample_error(self) -> str | None:
        return cast("str | None", self._detail("sample_error"))

    @property
    def renamed_from(self) -> str | None:
        return cast("str | None", self._detail("renamed_from"))

    @property
    def renamed_to(self) -> str | None:
        return cast("str | None", self._detail("renamed_to"))

    @property
    def handoff_load(self) -> str | None:
        return cast("str | None", self._detail("handoff_load"))

    @property
    def confidence(self) -> float | None:
        return cast("float | None", self._detail("confidence"))

    @property
    def reasons(self) -> list[str] | None:
        return cast("list[str] | None", self._detail("reasons"))

    @property
    def components(self) -> list[dict[str, Any]] | None:
        return cast("list[dict[str, Any]] | None", self._detail("components"))

    @property
    def violations(self) -> list[dict[str, Any]] | None:
        return cast("list[dict[str, Any]] | None", self._detail("violations"))

    @property
    def metrics(self) -> list[dict[str, Any]] | None:
        return cast("list[dict[str, Any]] | None", self._detail("metrics"))

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented use on a property
    @property
    def id(self) -> str:
        """The finding's one identity (`finding_id`): stable across runs for the same drift,
        (source, table, detector, columns in any order)."""
        return finding_id(self.source, self.table, self.drift_type, self.columns)

    @property
    def acknowledged(self) -> bool:
        """Covered by an acknowledgement that has not expired: not alerted, not failing."""
        return self.ack is not None and not self.ack.get("expired", False)



#: `error_kind` of a source whose pipeline never ran on this machine: a note ("not loaded
#: yet"), neither an error nor an alert
NOT_LOADED = "not_loaded"


class ReconcileResult(BaseModel):
    """What one detector found for one source."""

    model_config = ConfigDict(frozen=True)

    source: str
    pipeline: str | None = None
    destination: str | None = None
    dataset: str | None = None
    detector: str = "additive"
    findings: list[DriftFinding] = Field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None
    notes: list[str] = Field(default_factory=list)
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def failing_findings(self) -> list[DriftFinding]:
        """The findings that fail a run: every one not covered by an unexpired
        acknowledgement. The one rule the CLI's exit code, the orchestrator checks and the
        CI formats (JUnit, GitHub, SARIF, HTML) all read."""
        return [f for f in self.findings if not f.acknowledged]

    def failing_at(self, threshold: Severity) -> list[DriftFinding]:
        """The failing findings of `threshold` severity or worse (`--fail-on-drift=error`
        fails on errors alone; `info`: on every failing finding)."""
        return [f for f in self.failing_findings if at_least(f.severity, threshold)]


def by_severity(findings: list[DriftFinding]) -> list[DriftFinding]:
    """`findings` worst first (errors, warnings, then infos), each severity in its order."""
    return sorted(findings, key=lambda f: rank(f.severity))


#: the note that opens a source's result when none of its tables could be checked (never
#: loaded): the text output then says so instead of a clean line
NOTHING_CHECKED = "nothing checked: "


#: a finding's keys as `model_dump` gives them (the webhook payload), in order
_DUMP_ORDER: tuple[str, ...] = (
    "drift_type", "severity", "source", "resource", "table", "columns", "pipeline",
    "column_types", "samples", "first_seen", "column_first_seen", "reproduce", "coverage",
    "expected_types", "sample_error", "alert", "alert_reason", "ack", "renamed_from", "renamed_to",
    "handoff_load", "confidence", "reasons", "components", "violations", "metrics", "details",
    "id",
)

#: keys of every result in the `--format json` document, in order
RESULT_KEYS: tuple[str, ...] = (
    "source",
    "pipeline",
    "destination",
    "dataset",
    "detector",
    "findings",
    "error",
    "notes",
    "duration_s",
)
#: keys of every finding in the document, in order
FINDING_KEYS: tuple[str, ...] = (
    "drift_type",
    "severity",
    "source",
    "resource",
    "table",
    "columns",
    "column_types",
    "samples",
    "first_seen",
    "reproduce",
)
#: detector-specific finding keys: in the document only when the detector set them
OPTIONAL_FINDING_KEYS: tuple[str, ...] = (
    "column_first_seen", "coverage", "expected_types", "sample_error", "alert", "alert_reason",
    "ack", "renamed_from", "renamed_to", "handoff_load", "confidence", "reasons", "components",
    "violations", "metrics", "details",
)


def finding_document(finding: DriftFinding) -> dict[str, Any]:
    """One finding as the JSON document carries it (see `FINDING_KEYS`)."""
    data = finding.model_dump(mode="json")
    doc = {"id": finding.id, **{k: data[k] for k in FINDING_KEYS}}
    doc.update({k: data[k] for k in OPTIONAL_FINDING_KEYS if data.get(k) is not None})
    return doc


def result_document(result: ReconcileResult) -> dict[str, Any]:
    """One result as the JSON document carries it (see `RESULT_KEYS`).

    The pipeline is carried once, by the result; `error_kind` is internal (it picks the exit
    code) and stays out of the document.
    """
    data = result.model_dump(mode="json")
    doc = {k: data[k] for k in RESULT_KEYS}
    doc["findings"] = [finding_document(f) for f in result.findings]
    return doc


def results_document(results: list[ReconcileResult]) -> dict[str, Any]:
    """The `--format json` document: `{"format_version": 1, "results": [...]}`."""
    return {
        "format_version": FORMAT_VERSION,
        "results": [result_document(r) for r in results],
    }
