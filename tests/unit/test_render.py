"""Text for people and the JSON document for machines, from the same result objects."""

from __future__ import annotations

import json

import pytest

from dlt_contract_ops.model.findings import (
    FINDING_KEYS,
    FORMAT_VERSION,
    RESULT_KEYS,
    Coverage,
    DriftFinding,
    ReconcileResult,
)
from dlt_contract_ops.output.text import to_json, to_text

ISSUE_RESULT_KEYS = {
    "source", "pipeline", "destination", "dataset", "detector", "findings", "error", "notes",
    "duration_s",
}
ISSUE_FINDING_KEYS = {
    "drift_type", "severity", "source", "resource", "table", "columns", "column_types", "samples",
    "first_seen", "reproduce",
}


def _finding(**overrides: object) -> DriftFinding:
    values: dict[str, object] = {
        "drift_type": "additive",
        "source": "shop",
        "pipeline": "shop_pipeline",
        "resource": "OrderItems",
        "table": "order_items",
        "columns": ['Weird "Name"', "größe"],
        "column_types": {'Weird "Name"': "VARCHAR", "größe": "INTEGER"},
        "samples": {'Weird "Name"': ["x"], "größe": [3, 4]},
        "first_seen": "2026-11-01T00:00:00+00:00",
        "reproduce": 'SELECT "Weird ""Name""", "größe" FROM "shop_raw"."order_items" LIMIT 5',
    }
    values.update(overrides)
    return DriftFinding.model_validate(values)


def _result(**overrides: object) -> ReconcileResult:
    values: dict[str, object] = {
        "source": "shop",
        "pipeline": "shop_pipeline",
        "destination": "duckdb",
        "dataset": "shop_raw",
        "findings": [_finding()],
        "notes": ["resource `no_model` has no Pydantic model: skipped"],
        "duration_s": 0.1234,
    }
    values.update(overrides)
    return ReconcileResult.model_validate(values)


def test_issue_keys_are_the_documented_keys() -> None:
    assert set(RESULT_KEYS) == ISSUE_RESULT_KEYS
    assert set(FINDING_KEYS) == ISSUE_FINDING_KEYS


def test_json_document_shape() -> None:
    doc = json.loads(to_json([_result(), _result(source="clean", findings=[], notes=[])]))
    assert set(doc) == {"format_version", "results"}
    assert doc["format_version"] == FORMAT_VERSION == 1
    first, clean = doc["results"]
    assert list(first) == list(RESULT_KEYS)
    assert first["detector"] == "additive"
    assert first["error"] is None
    assert first["notes"] == ["resource `no_model` has no Pydantic model: skipped"]
    assert first["duration_s"] == 0.1234
    (finding,) = first["findings"]
    # the stable id (what `ack` takes) first, then the documented keys
    assert list(finding) == ["id", *FINDING_KEYS]
    assert finding["id"] == _finding().id
    assert finding["columns"] == ['Weird "Name"', "größe"]
    assert finding["samples"] == {'Weird "Name"': ["x"], "größe": [3, 4]}
    assert clean["findings"] == []


def test_json_keeps_unicode_readable() -> None:
    assert '"größe"' in to_json([_result()])


def test_json_error_result() -> None:
    result = ReconcileResult(
        source="nope", error="Unknown source `nope`", error_kind="UnknownSourceError"
    )
    (doc,) = json.loads(to_json([result]))["results"]
    assert list(doc) == list(RESULT_KEYS)
    assert doc["error"] == "Unknown source `nope`"
    assert doc["findings"] == []


@pytest.mark.parametrize(
    ("extra", "present"),
    [
        ({}, set()),
        ({"sample_error": "sample query failed"}, {"sample_error"}),
        # each detector's own keys on a finding of that detector (its details model)
        ({"drift_type": "removal", "coverage": {"c": Coverage(baseline=0.8, recent=0.0)}},
         {"coverage"}),
        ({"drift_type": "type", "expected_types": {"c": "bigint"}}, {"expected_types"}),
    ],
)
def test_detector_specific_keys_only_when_set(extra: dict[str, object], present: set[str]) -> None:
    (result,) = json.loads(to_json([_result(findings=[_finding(**extra)])]))["results"]
    (finding,) = result["findings"]
    assert set(finding) == ISSUE_FINDING_KEYS | {"id"} | present


def test_text_block_with_a_finding() -> None:
    text = to_text([_result()])
    assert text.splitlines() == [
        "Source: shop  |  Findings: 1  |  Duration: 0.12s",
        # the table, where the user looks; the resource as well when it differs
        f"  • order_items (resource OrderItems): additive drift (2 column(s)) [warning]  id "
        f"{_finding().id}",
        '      Columns: Weird "Name", größe',
        "      First seen: 2026-11-01T00:00:00+00:00",
        "  ! resource `no_model` has no Pydantic model: skipped",
    ]


def test_text_names_the_table_alone_when_it_is_the_resource() -> None:
    same = _result(findings=[_finding(resource="orders", table="orders")])
    shop = _result(findings=[_finding(resource="orders", table="shop_orders")])
    assert "  • orders: additive drift" in to_text([same])
    assert "  • shop_orders (resource orders): additive drift" in to_text([shop])


def test_text_error_keeps_its_lines_and_not_loaded_is_a_note() -> None:
    dlt_text = "Credentials are not configured: missing `password`.\nMissing 1 field(s)\n  tried: x"
    broken = ReconcileResult(source="pg", error=dlt_text, error_kind="config")
    fresh = ReconcileResult(source="fresh", error_kind="not_loaded",
                            notes=["not loaded yet: pipeline `fresh` has no local state here"])
    blocks = to_text([broken, fresh]).split("\n\n")
    assert blocks[0].splitlines()[1:] == [
        "  ✗ Error: Credentials are not configured: missing `password`.",
        "      Missing 1 field(s)",
        "        tried: x",
    ]
    assert blocks[1].splitlines()[1:] == [
        "  ○ Not loaded yet: nothing to check (see the note)",
        "  ! not loaded yet: pipeline `fresh` has no local state here",
    ]


def test_text_clean_error_and_dry_run() -> None:
    clean = _result(source="clean", findings=[], notes=[], duration_s=0.5)
    broken = ReconcileResult(source="nope", error="Unknown source `nope`")
    no_time = _result(findings=[_finding(first_seen=None)], notes=[])
    text = to_text([clean, broken, no_time], dry_run=True)
    blocks = text.split("\n\n")
    assert blocks[0] == "Dry-run: alert emission suppressed"
    assert blocks[1].splitlines() == [
        "Source: clean  |  Findings: 0  |  Duration: 0.50s",
        "  ✓ No drift",
    ]
    assert blocks[2].splitlines() == [
        "Source: nope  |  Findings: 0  |  Duration: 0.00s",
        "  ✗ Error: Unknown source `nope`",
    ]
    assert "      First seen: n/a" in blocks[3].splitlines()
    assert text.endswith("\n")
    assert not text.endswith("\n\n")


def test_text_labels_other_detectors() -> None:
    removal = _result(detector="removal", findings=[], notes=[])
    assert to_text([removal]).startswith("Source: shop (removal)  |  Findings: 0")


def test_text_shows_each_shifted_metric_of_a_distribution_finding() -> None:
    metrics = [
        {"column": "status", "metric": "category_share", "category": "other",
         "baseline": 0.0, "current": 0.04, "change": 0.04},
        {"column": "note\nforged", "metric": "null_rate", "category": None,
         "baseline": 0.1, "current": 0.8, "change": 0.7},
        {"column": "code", "metric": "distinct_count", "category": None,
         "baseline": 98.0, "current": 1.0, "change": -97.0},
    ]
    finding = _finding(drift_type="distribution", columns=["code", "note\nforged", "status"],
                       samples={}, metrics=metrics)
    text = to_text([_result(detector="distribution", findings=[finding])])
    lines = [line.strip() for line in text.splitlines() if "Metric:" in line]
    assert lines == [
        "Metric: status category_share `other` 0.0% → 4.0% (+4.0 points)",
        'Metric: "note\\nforged" null_rate 10.0% → 80.0% (+70.0 points)',
        "Metric: code distinct_count 98 → 1 (-97)",
    ]


@pytest.mark.parametrize(
    ("ack", "fails"),
    [
        pytest.param(None, True, id="not-acknowledged"),
        pytest.param({"until": "2099-01-01", "by": "a", "reason": "r"}, False, id="active"),
        pytest.param({"until": "2020-01-01", "by": "a", "reason": "r", "expired": True}, True,
                     id="expired"),
    ],
)
def test_failing_findings_leave_out_only_an_unexpired_ack(
    ack: dict[str, object] | None, fails: bool
) -> None:
    result = ReconcileResult(source="s", findings=[_finding(ack=ack)])
    assert result.failing_findings == (result.findings if fails else [])
