"""Additive drift through real dlt loads into DuckDB: odd identifiers are data.

Drifted columns `ip-address`, `Weird "Name"`, `größe` and `userId` (created quoted), a
resource named `OrderItems` and one with `table_name="plain_tbl"`: every one is found,
quoted in `reproduce`, and sampled correctly, through the Python API and the CLI alike.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import duckdb
import pytest

from dlt_contract_ops import DriftFinding, ReconcileResult, reconcile_all, reconcile_source
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import finding_document
from tests.integration import shop
from tests.projects import Project


def _by_resource(result: ReconcileResult) -> dict[str, DriftFinding]:
    assert result.error is None, result.error
    return {f.resource: f for f in result.findings}


def _expected_samples(column: str) -> list[object]:
    # the sample query reads the newest rows first (the time axis is loaded_at = T0 + id h)
    values = [shop.order_value(column, i) for i in reversed(range(8))]
    return [v for v in values if v is not None][:5]


def _stable_docs(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Finding documents with each sample list sorted: rows loaded together tie on the time
    axis, and the destination may return tied rows in any order (ordering has its own test).
    The CLI's `alert` mark (what alert dedup decided) is not part of the finding."""
    out = []
    for doc in docs:
        samples = {c: sorted(v, key=repr) for c, v in doc["samples"].items()}
        finding = {k: v for k, v in doc.items() if k != "alert"}
        out.append({**finding, "samples": samples})
    return out


def _stable(findings: list[DriftFinding]) -> list[dict[str, Any]]:
    return _stable_docs([finding_document(f) for f in findings])


def _load_time(project: Project, table: str, column: str) -> datetime:
    """When the earliest row holding `column` was loaded, by its `_dlt_load_id`."""
    with duckdb.connect(str(project.root / shop.DB_FILE), read_only=True) as con:
        row = con.execute(
            f"SELECT min(_dlt_load_id) FROM {shop.DATASET}.{table} "
            f"WHERE {shop.quote(column)} IS NOT NULL"
        ).fetchone()
    assert row is not None
    return datetime.fromtimestamp(float(row[0]), tz=timezone.utc)


def test_shop_findings_through_reconcile_source(shop_project: Project) -> None:
    result = reconcile_source("shop", dry_run=True, project_dir=shop_project.root)
    assert (result.source, result.pipeline, result.destination, result.dataset) == (
        "shop",
        shop.PIPELINE,
        "duckdb",
        shop.DATASET,
    )
    assert result.detector == "additive"
    findings = _by_resource(result)
    # one finding per drifted resource; the clean one has none
    assert set(findings) == {"OrderItems", "plain"}

    orders = findings["OrderItems"]
    assert (orders.drift_type, orders.source, orders.table) == ("additive", "shop", "order_items")
    assert orders.columns == sorted(shop.ORDER_DRIFT)
    assert orders.column_types == {c: spec[0] for c, spec in shop.ORDER_DRIFT.items()}
    assert orders.samples == {c: _expected_samples(c) for c in shop.ORDER_DRIFT}
    assert len(orders.samples['Weird "Name"']) == 5  # seven rows hold a value: capped at 5
    first_row = min(
        i for i in range(8) if any(shop.order_value(c, i) is not None for c in shop.ORDER_DRIFT)
    )
    assert orders.first_seen is not None
    assert datetime.fromisoformat(orders.first_seen) == shop.hours(first_row)
    assert orders.sample_error is None

    plain = findings["plain"]
    assert (plain.table, plain.columns) == ("plain_tbl", ["extra_col"])
    assert plain.column_types == {"extra_col": "BIGINT"}
    # one load: every row has the same load id, so the order among them is the destination's
    assert sorted(plain.samples["extra_col"]) == [200, 300, 400, 500]
    assert plain.first_seen is not None
    assert datetime.fromisoformat(plain.first_seen) == _load_time(
        shop_project, "plain_tbl", "extra_col"
    )


def test_skipped_resources_are_notes_not_errors(shop_project: Project) -> None:
    result = reconcile_source("shop", dry_run=True, project_dir=shop_project.root)
    assert result.error is None
    assert len(result.notes) == 2
    no_model, pending = sorted(result.notes)
    assert "`no_model`" in no_model
    assert "no Pydantic model" in no_model
    assert "`pending`" in pending
    assert "does not exist" in pending
    assert f"`{shop.DATASET}`" in pending
    assert {f.resource for f in result.findings}.isdisjoint({"no_model", "pending", "clean"})


def test_injected_system_and_load_timestamp_columns_are_not_drift(shop_project: Project) -> None:
    result = reconcile_source("shop", dry_run=True, project_dir=shop_project.root)
    drifted = {c for f in result.findings for c in f.columns}
    assert drifted.isdisjoint({"ingested_by", "tenant_id", "_dlt_extra", "loaded_at"})


@pytest.mark.parametrize(
    ("config_line", "appears"),
    [
        # the project-wide injected list
        ('injected_columns = ["ingested_by"]', "ingested_by"),
        # the source's own list, written camelCase and normalized by the source's naming
        ('injected_columns = ["tenantId"]', "tenant_id"),
        # the load timestamp column is ignored only because it is configured
        ('load_timestamp_column = "loaded_at"', "loaded_at"),
    ],
)
def test_each_ignore_rule_is_what_hides_its_column(
    shop_project: Project, config_line: str, appears: str
) -> None:
    config = shop_project.root / ".dlt" / "config.toml"
    text = config.read_text()
    assert text.count(config_line) == 1
    config.write_text(text.replace(config_line, ""))
    result = reconcile_source("shop", dry_run=True, project_dir=shop_project.root)
    orders = _by_resource(result)["OrderItems"]
    assert orders.columns == sorted([*shop.ORDER_DRIFT, appears])
    assert "_dlt_extra" not in orders.columns  # the system prefix needs no configuration


def test_reproduce_quotes_every_identifier_and_returns_the_rows(shop_project: Project) -> None:
    result = reconcile_source("shop", dry_run=True, project_dir=shop_project.root)
    findings = _by_resource(result)
    orders = findings["OrderItems"]
    assert orders.reproduce is not None
    for quoted in ('"ip-address"', '"Weird ""Name"""', '"größe"', '"userId"'):
        assert quoted in orders.reproduce
    assert f'"{shop.DATASET}"."order_items"' in orders.reproduce
    assert f'"{shop.DATASET}"."plain_tbl"' in (findings["plain"].reproduce or "")

    with duckdb.connect(str(shop_project.root / shop.DB_FILE), read_only=True) as con:
        for finding in findings.values():
            assert finding.reproduce is not None
            cursor = con.execute(finding.reproduce)
            rows = cursor.fetchall()
            names = [d[0] for d in cursor.description]
            assert rows, finding.reproduce
            assert names[: len(finding.columns)] == finding.columns
            for i, column in enumerate(finding.columns):
                # the rows the samples came from, newest first: a column's values there are
                # its newest samples (one filled on a few rows only may show fewer of them)
                shown = [row[i] for row in rows if row[i] is not None]
                assert shown == finding.samples[column][: len(shown)], finding.reproduce
            if len(finding.columns) == 1:  # one drifted column: every sample, in order
                assert [row[0] for row in rows] == finding.samples[finding.columns[0]]


def test_reconcile_all_and_run_agree_with_reconcile_source(shop_project: Project) -> None:
    root = shop_project.root
    single = reconcile_source("shop", dry_run=True, project_dir=root)
    everything = reconcile_all(dry_run=True, project_dir=root)
    additive = {r.source: r for r in everything if r.detector == "additive"}
    assert set(additive) == {"shop", "shop_clean", "shop_extra"}
    assert all(r.error is None for r in everything)
    assert additive["shop_clean"].findings == []
    (refunds,) = additive["shop_extra"].findings
    assert (refunds.resource, refunds.columns) == ("refunds", ["reason_code"])
    assert sorted(refunds.samples["reason_code"]) == ["R0", "R1", "R2", "R3"]
    assert _stable(additive["shop"].findings) == _stable(single.findings)
    (via_run,) = run(["shop"], detectors=("additive",), dry_run=True, project_dir=root)
    assert _stable(via_run.findings) == _stable(single.findings)


def test_cli_json_reports_the_same_findings(shop_project: Project) -> None:
    api = reconcile_source("shop", dry_run=True, project_dir=shop_project.root)
    proc = shop_project.cli("reconcile", "-s", "shop", "--format", "json", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (additive,) = [r for r in doc["results"] if r["detector"] == "additive"]
    assert _stable_docs(additive["findings"]) == _stable(api.findings)
    assert additive["notes"] == api.notes


def test_cli_text_lists_the_odd_columns(shop_project: Project) -> None:
    proc = shop_project.cli("reconcile", "-s", "shop", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Dry-run: alert emission suppressed"
    assert any(line.startswith("Source: shop  |  Findings: 2  |  Duration: ") for line in lines)
    assert "  • order_items (resource OrderItems): additive drift (4 column(s))" in proc.stdout
    assert '      Columns: Weird "Name", größe, ip-address, userId' in lines
    assert "  • plain_tbl (resource plain): additive drift (1 column(s))" in proc.stdout
    assert "      Columns: extra_col" in lines
