"""An acknowledgement covers what was acknowledged: the finding's content when it was given
(columns, metric, category, kind), or narrower. New content under the same id (a new category
on an acknowledged column) is new drift: alerted, and failing `--fail-on-drift`. An entry
written before content was recorded covers its id as it always did. Real loads into DuckDB."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from dlt_contract_ops.acks.service import record_ack
from dlt_contract_ops.acks.store import ACKS_FILE, Ack, add_ack, load_book, read_acks
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.sinks.memory import MemorySink
from tests.profiles.conftest import DATASET, PIPELINE, SOURCE, load
from tests.projects import Project

NOW = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
STEADY = [{"batch": b} for b in range(6)]
#: the shop source, able to put a category no load had before into `status` (declared, so
#: dlt's validation lets it in)
REFUNDS = SOURCE.replace(
    '            status = "other"  # 4% of rows fall into the default bucket\n',
    '            status = "other"  # 4% of rows fall into the default bucket\n'
    '        if "refund" in drift and i % 20 == 3:\n'
    '            status = "refunded"  # a category no earlier load had\n',
).replace('"shipped", "other"]', '"shipped", "other", "refunded"]')


@pytest.fixture
def shop(project: Project) -> Project:
    assert REFUNDS.count("refunded") == 2  # declared, and loaded
    project.module("shop_mod", REFUNDS)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source("shop", "shop_mod:shop", pipeline_name=PIPELINE, dataset_name=DATASET)
    return project


def _sweep(project: Project, sink: MemorySink) -> ReconcileResult:
    [result] = run(["shop"], detectors=("distribution",), project_dir=project.root,
                   alert_sinks=[sink])
    assert result.error is None, result.error
    return result


def _status(finding: DriftFinding) -> set[tuple[str, str | None]]:
    return {(m["metric"], m["category"]) for m in finding.metrics or ()
            if m["column"] == "status"}


def _with_metrics(finding: DriftFinding, metrics: list[dict[str, Any]]) -> DriftFinding:
    assert finding.details is not None
    return finding.model_copy(
        update={"details": finding.details.model_copy(update={"metrics": metrics})})


def test_a_new_category_on_an_acknowledged_column_alerts_and_fails(shop: Project) -> None:
    load(shop, *STEADY, {"batch": 6, "drift": ["other"]})
    sink = MemorySink()
    [shift] = _sweep(shop, sink).findings
    assert shift.columns == ["status"]
    assert _status(shift) == {("category_share", "other")}
    _ack, path = record_ack(shift.id, "14d", "the `other` bucket is expected", "ana",
                           project_dir=shop.root, now=NOW)
    # the file says what was acknowledged, for the person reviewing it
    [entry] = read_acks(path)[0]
    assert entry.content == ("`status` category_share `other`", "column `status` VARCHAR")
    assert entry.summary == (
        "distribution drift of `orders`: `status` category_share `other`; column `status` VARCHAR")
    assert entry.digest
    assert len(entry.digest) == 16
    written = path.read_text()
    assert 'summary = "distribution drift of `orders`' in written
    assert "content = [" in written

    load(shop, {"batch": 7, "drift": ["other", "refund"]})
    sink.drift.clear()
    [grown] = _sweep(shop, sink).findings
    assert grown.id == shift.id  # the same column: the same id
    assert ("category_share", "refunded") in _status(grown)
    assert not grown.acknowledged  # new content: not covered
    assert [f.id for f in sink.drift] == [grown.id]  # alerted
    proc = shop.cli("reconcile", "-s", "shop", "--include-distribution", "--fail-on-drift",
                    "--format", "json")
    assert proc.returncode == 3, proc.stderr  # drift, nothing errored
    [doc] = [f for r in json.loads(proc.stdout)["results"] for f in r["findings"]]
    assert "ack" not in doc


def test_narrower_content_stays_covered_and_an_old_entry_covers_its_id(shop: Project) -> None:
    load(shop, *STEADY, {"batch": 6, "drift": ["other", "refund"]})
    sink = MemorySink()
    [wide] = _sweep(shop, sink).findings
    assert {("category_share", "other"), ("category_share", "refunded")} <= _status(wide)
    record_ack(wide.id, "14d", "both known", "ana", project_dir=shop.root, now=NOW)
    narrower = _with_metrics(wide, [m for m in wide.metrics or ()
                                    if m["category"] != "refunded"])
    book = load_book(shop.root, NOW)
    assert book.stamp(wide).acknowledged
    assert book.stamp(narrower).acknowledged  # less than was acknowledged: still covered
    more = _with_metrics(wide, [*(wide.metrics or ()), {
        "column": "status", "metric": "new_category", "category": "void", "baseline": 0.0,
        "current": 0.1, "change": 0.1}])
    assert not book.stamp(more).acknowledged
    # a removal on the acknowledged column is another detector: another finding
    removal = DriftFinding(drift_type="removal", source="shop", resource="orders",
                           table="orders", columns=["status"])
    assert not book.stamp(removal).acknowledged

    # an entry written before content was recorded covers its id, whatever it says now
    path = shop.root / ACKS_FILE
    path.unlink()
    add_ack(path, Ack(id=wide.id, until=NOW + dt.timedelta(days=1), reason="old", by="bob",
                      created=NOW))
    assert "content" not in path.read_text()
    assert load_book(shop.root, NOW).stamp(more).acknowledged
    sink.drift.clear()
    [still] = _sweep(shop, sink).findings
    assert still.acknowledged
    assert sink.drift == []


def test_acks_json_lists_what_each_entry_acknowledged(shop: Project) -> None:
    """`acks --format json` holds what the file holds: where, the content with its summary
    and digest, and `null` content for an entry written before content was recorded."""
    load(shop, *STEADY, {"batch": 6, "drift": ["other"]})
    [shift] = _sweep(shop, MemorySink()).findings
    entry, path = record_ack(shift.id, "14d", "expected", "ana", project_dir=shop.root, now=NOW)
    add_ack(path, Ack(id="0123456789ab", until=NOW + dt.timedelta(days=1), reason="old",
                      by="bob", created=NOW - dt.timedelta(days=1)))
    proc = shop.cli("acks", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    old, new = json.loads(proc.stdout)
    assert new == {
        "id": shift.id, "source": "shop", "table": "orders", "detector": "distribution",
        "columns": ["status"],
        "summary": "distribution drift of `orders`: `status` category_share `other`; "
                   "column `status` VARCHAR",
        "content": ["`status` category_share `other`", "column `status` VARCHAR"],
        "digest": entry.digest, "until": entry.until.isoformat(), "reason": "expected",
        "by": "ana", "created": entry.created.isoformat(), "expired": False,
    }
    assert entry.digest is not None
    assert (old["id"], old["content"], old["digest"], old["summary"]) == (
        "0123456789ab", None, None, None)
    assert (old["source"], old["columns"]) == (None, [])
