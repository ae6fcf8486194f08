"""What each detector measured beside the columns: one details model per detector, and the
finding carries one of them (`DriftFinding.details`, a union discriminated by `kind`).

The JSON document, the webhook payload and every output keep the flat keys they always had
(`coverage`, `renamed_from`, `violations`, ...): `DriftFinding` serialises its details back to
them, and accepts them flat when it is built (`DriftFinding(drift_type="removal",
coverage=...)`). A third-party detector's own measurements are `PluginDetails`: a mapping of
JSON values, `details` in the document.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Tag


class Coverage(BaseModel):
    """Share of non-NULL values of one column in the baseline and the recent window."""

    model_config = ConfigDict(frozen=True)

    baseline: float | None
    recent: float | None


class _Details(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AdditiveDetails(_Details):
    kind: Literal["additive"] = "additive"
    #: per column, when its first value arrived; `first_seen` is the earliest of them
    column_first_seen: dict[str, str] | None = None
    sample_error: str | None = None


class RemovalDetails(_Details):
    kind: Literal["removal"] = "removal"
    #: per column, the load where it went dark
    column_first_seen: dict[str, str] | None = None
    coverage: dict[str, Coverage] | None = None
    #: the distribution metrics the dark columns explain (their NULL rate's jump), folded in
    metrics: list[dict[str, Any]] | None = None
    #: the findings those metrics were folded out of (`[{"id", "drift_type", "columns",
    #: "metrics"}]`)
    components: list[dict[str, Any]] | None = None


class MissingDetails(_Details):
    kind: Literal["missing"] = "missing"
    expected_types: dict[str, str] | None = None


class TypeDetails(_Details):
    kind: Literal["type"] = "type"
    expected_types: dict[str, str] | None = None
    #: per column, why its live type cannot hold the declared one
    reasons: list[str] | None = None


class GateDetails(_Details):
    kind: Literal["gate"] = "gate"
    expected_types: dict[str, str] | None = None


class RenameDetails(_Details):
    """A probable rename: old and new column, the load where one stopped and the other began,
    how sure, why, and the folded component findings (`[{"id": ...}]`; one that lists
    `metrics` gave up only those metrics of its columns)."""

    kind: Literal["rename"] = "rename"
    renamed_from: str | None = None
    renamed_to: str | None = None
    handoff_load: str | None = None
    confidence: float | None = None
    reasons: list[str] | None = None
    components: list[dict[str, Any]] | None = None
    coverage: dict[str, Coverage] | None = None
    #: the distribution metrics the rename explains (the old column's NULL rate), folded in
    metrics: list[dict[str, Any]] | None = None


class ContractDetails(_Details):
    """Declared semantics the data breaks: per violated rule,
    `{column, rule, count, examples, declared}`."""

    kind: Literal["contract"] = "contract"
    violations: list[dict[str, Any]] | None = None
    sample_error: str | None = None


class DistributionDetails(_Details):
    """Shifted per-load metrics: per metric, `{column, metric, category, baseline, current,
    change}`."""

    kind: Literal["distribution"] = "distribution"
    metrics: list[dict[str, Any]] | None = None


class PluginDetails(_Details, Mapping[str, Any]):  # a read-only mapping too
    """What a third-party detector measured (`Detector.lines` words it): its own keys, JSON
    values; reads as a mapping (`finding.details.get("age")`)."""

    kind: Literal["plugin"] = "plugin"
    data: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # a mapping's keys
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


#: every built-in kind's model; a finding of any other drift type carries `PluginDetails`
BUILT_IN: dict[str, type[_Details]] = {
    m.model_fields["kind"].default: m
    for m in (AdditiveDetails, RemovalDetails, MissingDetails, TypeDetails, GateDetails,
              RenameDetails, ContractDetails, DistributionDetails)
}


def _kind(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if isinstance(kind, str) else "plugin"


Details = Annotated[
    Union[  # noqa: UP007  # Tag annotations read clearer one per line
        Annotated[AdditiveDetails, Tag("additive")],
        Annotated[RemovalDetails, Tag("removal")],
        Annotated[MissingDetails, Tag("missing")],
        Annotated[TypeDetails, Tag("type")],
        Annotated[GateDetails, Tag("gate")],
        Annotated[RenameDetails, Tag("rename")],
        Annotated[ContractDetails, Tag("contract")],
        Annotated[DistributionDetails, Tag("distribution")],
        Annotated[PluginDetails, Tag("plugin")],
    ],
    Discriminator(_kind),
]

#: the flat keys the document has always carried for the details, in document order
FLAT_KEYS: tuple[str, ...] = (
    "column_first_seen", "coverage", "expected_types", "sample_error", "renamed_from",
    "renamed_to", "handoff_load", "confidence", "reasons", "components", "violations",
    "metrics",
)


def details_from_flat(drift_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """`data` (a finding's keyword arguments) with the flat detail keys folded into
    `details` for `drift_type`; a third-party detector's `details` dict becomes its
    `PluginDetails`. A flat key the detector's model has no place for is an error there."""
    flat = {k: data.pop(k) for k in FLAT_KEYS if k in data}
    given = data.get("details")
    if drift_type in BUILT_IN:
        if isinstance(given, Mapping) and not isinstance(given, PluginDetails):
            flat = {**given, **flat}
        elif given is not None:
            return data  # a details model already
        values = {k: v for k, v in flat.items() if v is not None}
        data["details"] = {**values, "kind": drift_type} if values else None
        return data
    misplaced = sorted(k for k, v in flat.items() if v is not None)
    if misplaced:
        raise ValueError(
            f"{', '.join(misplaced)}: keys of the built-in detectors; a `{drift_type}` "
            "finding carries what it measured in `details`"
        )
    if isinstance(given, Mapping) and not isinstance(given, PluginDetails):
        data["details"] = {"kind": "plugin", "data": dict(given)}
    return data

