"""Each detector's details model: a finding is built with the flat keys, carries one details
model, and serialises back to the flat keys the JSON document and the webhook always had."""

from __future__ import annotations

from typing import Any

import pytest

from dlt_contract_ops.model.details import (
    BUILT_IN,
    AdditiveDetails,
    ContractDetails,
    DistributionDetails,
    GateDetails,
    MissingDetails,
    PluginDetails,
    RemovalDetails,
    RenameDetails,
    TypeDetails,
)
from dlt_contract_ops.model.findings import DriftFinding, finding_document

BASE: dict[str, Any] = {"source": "s", "resource": "r", "table": "t", "columns": ["a"]}

CASES = [
    ("additive", {"column_first_seen": {"a": "2026-01-01"}, "sample_error": "boom"},
     AdditiveDetails),
    ("removal", {"column_first_seen": {"a": "1"}, "coverage": {"a": {"baseline": 1.0,
                                                                    "recent": 0.0}}},
     RemovalDetails),
    ("missing", {"expected_types": {"a": "bigint"}}, MissingDetails),
    ("type", {"expected_types": {"a": "bigint"}, "reasons": ["too narrow"]}, TypeDetails),
    ("gate", {"expected_types": {"a": "text"}}, GateDetails),
    ("rename", {"renamed_from": "a", "renamed_to": "b", "handoff_load": "1", "confidence": 0.9,
                "reasons": ["hand-off"], "components": [{"id": "x"}]}, RenameDetails),
    ("contract", {"violations": [{"column": "a", "rule": "unit"}], "sample_error": "e"},
     ContractDetails),
    ("distribution", {"metrics": [{"column": "a", "metric": "null_share"}]},
     DistributionDetails),
    ("freshness", {"details": {"age": "3d", "max_age": "1d"}}, PluginDetails),
]


def test_every_built_in_kind_has_a_case() -> None:
    assert set(BUILT_IN) == {kind for kind, _, _ in CASES} - {"freshness"}


@pytest.mark.parametrize(("kind", "flat", "model"), CASES, ids=[c[0] for c in CASES])
def test_flat_keys_in_one_details_model_and_back(
    kind: str, flat: dict[str, Any], model: type[Any]
) -> None:
    finding = DriftFinding(drift_type=kind, **BASE, **flat)
    assert type(finding.details) is model
    doc = finding_document(finding)
    assert {k: doc[k] for k in flat} == flat  # the document's keys, as given
    assert "kind" not in doc
    # the whole dump (the webhook payload) validates back to the same finding
    assert DriftFinding.model_validate(finding.model_dump(mode="json")) == finding


def test_the_flat_attributes_still_read() -> None:
    f = DriftFinding(drift_type="rename", **BASE, renamed_from="a", confidence=0.5)
    assert (f.renamed_from, f.confidence, f.coverage, f.violations) == ("a", 0.5, None, None)


def test_a_plugins_details_read_as_a_mapping() -> None:
    f = DriftFinding(drift_type="freshness", **BASE, details={"age": "3d"})
    assert (f.details or {}).get("age") == "3d"
    assert dict(f.details or {}) == {"age": "3d"}


def test_a_key_the_detector_has_no_place_for_is_an_error() -> None:
    with pytest.raises(ValueError, match="coverage"):
        DriftFinding(drift_type="additive", **BASE, coverage={})
    with pytest.raises(ValueError, match="renamed_from: keys of the built-in detectors"):
        DriftFinding(drift_type="freshness", **BASE, renamed_from="a")


def test_no_details_no_keys() -> None:
    f = DriftFinding(drift_type="additive", **BASE)
    assert f.details is None
    assert set(finding_document(f)) == {"id", "drift_type", "severity", "source", "resource",
                                        "table",
                                        "columns", "column_types", "samples", "first_seen",
                                        "reproduce"}
