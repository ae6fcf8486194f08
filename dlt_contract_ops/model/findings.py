"""The result values every detector produces and every renderer and sink consumes.

Frozen pydantic models: immutable, and JSON-serializable with one call. A value imports
nothing above it: the detector registry checks a result's names (`detectors.registry.checked`)
when the run hands the result over, not the value when it is built.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from dlt_contract_ops.model.identity import finding_id

#: what became of a finding's alert: sent and delivered, held back by dedup, or not delivered
AlertStatus = Literal["new", "repeat", "undelivered"]


FORMAT_VERSION = 1


class Coverage(BaseModel):
    """Share of non-NULL values of one column in the baseline and the recent window."""

    model_config = ConfigDict(frozen=True)

    baseline: float | None
    recent: float | None


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
    pipeline: str | None = None
    column_types: dict[str, str] = Field(default_factory=dict)
    samples: dict[str, list[Any]] = Field(default_factory=dict)
    first_seen: str | None = None
    #: per column, when its drift began (additive: its first value; removal: the load where
    #: it went dark); `first_seen` is the earliest of them
    column_first_seen: dict[str, str] | None = None
    reproduce: str | None = None
    coverage: dict[str, Coverage] | None = None
    expected_types: dict[str, str] | None = None
    sample_error: str | None = None
    #: set by the sweep after the sinks were flushed; None when nothing was decided
    alert: AlertStatus | None = None
    #: the acknowledgement that covers (or covered, `expired: true`) this finding
    ack: dict[str, Any] | None = None
    #: a probable rename (`drift_type: "rename"`): old and new column, the load where one
    #: stopped and the other began, how sure, why, and the folded component findings
    renamed_from: str | None = None
    renamed_to: str | None = None
    handoff_load: str | None = None
    confidence: float | None = None
    reasons: list[str] | None = None
    components: list[dict[str, Any]] | None = None
    #: declared semantics the data breaks (`drift_type: "contract"`): per violated rule,
    #: `{column, rule, count, examples, declared}`
    violations: list[dict[str, Any]] | None = None
    #: shifted per-load metrics (`drift_type: "distribution"`): per metric,
    #: `{column, metric, category, baseline, current, change}`
    metrics: list[dict[str, Any]] | None = None
    #: what a third-party detector measured (`Detector.lines` words it): its own keys,
    #: JSON values
    details: dict[str, Any] | None = None

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented use on a property
    @property
    def id(self) -> str:
        """Stable across runs for the same drift: (source, table, detector, columns)."""
        return finding_id(self.source, self.table, self.drift_type, self.columns)

    @property
    def acknowledged(self) -> bool:
        """Covered by an acknowledgement that has not expired: not alerted, not failing."""
        return self.ack is not None and not self.ack.get("expired", False)

    @property
    def key(self) -> tuple[str, str, str, tuple[str, ...]]:
        """Identity of the finding across runs: (source, resource, drift type, columns)."""
        return (self.source, self.resource, self.drift_type, tuple(self.columns))


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


#: the note that opens a source's result when none of its tables could be checked (never
#: loaded): the text output then says so instead of a clean line
NOTHING_CHECKED = "nothing checked: "


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
    "column_first_seen", "coverage", "expected_types", "sample_error", "alert", "ack",
    "renamed_from", "renamed_to", "handoff_load", "confidence", "reasons", "components",
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
