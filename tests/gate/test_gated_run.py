"""`gated_run` through real pipelines into DuckDB and PostgreSQL: the seed's five shapes, what
a rejection leaves behind (nothing but the quarantine), snapshots, coercion, incremental
cursors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import dlt
import pytest
from dlt.pipeline.exceptions import PipelineStepFailed

from dlt_contract_ops import GateRejected, gated_run
from dlt_contract_ops.core.ingest import GatePolicy
from dlt_contract_ops.model.gate import GateReport
from tests.gate.conftest import (
    Target,
    baseline,
    baseline_orders,
    columns_of,
    marks,
    q,
    query,
    slice_of,
    stored_version,
    trusted,
)
from tests.gate.seed import (
    BASELINE,
    D18,
    D19,
    MERGE,
    REASONS,
    REFUSED,
    SHAPES,
    SLICE,
    Order,
    orders,
    shop,
)
from tests.projects import Project


def _baseline(target: Target) -> Any:
    pipeline = baseline_orders(target)
    assert trusted(pipeline) == (3, 18500)
    return pipeline


@pytest.mark.parametrize(
    ("shape", "differences"),
    [
        ("baseline", []),
        ("added", [("added", "orders.currency", "text", True)]),
    ],
)
def test_an_admissible_shape_replaces_the_slice(
    target: Target, shape: str, differences: list[tuple[str, str, str, bool]]
) -> None:
    pipeline = _baseline(target)
    report = gated_run(pipeline, orders(SHAPES[shape]))
    assert report.action == "loaded"
    assert [(d.change, d.label, d.observed_type, d.approved)
            for d in report.differences] == differences
    assert trusted(pipeline) == (3, 18500)
    assert slice_of(pipeline) == (2, 14500)
    assert slice_of(pipeline, "2026-03-17") == (1, 4000)
    # the version the report names is the one the pipeline and the destination hold
    assert report.schema_version == pipeline.default_schema.version == stored_version(pipeline)
    assert report.load_info is not None
    assert not pipeline.has_pending_data


def test_an_approved_addition_keeps_its_values(target: Target) -> None:
    pipeline = _baseline(target)
    version = pipeline.default_schema.version
    report = gated_run(pipeline, orders(SHAPES["added"]))
    assert report.reason == "added: orders.currency (approved)"
    rows = query(pipeline, f"SELECT order_id, currency FROM {q(pipeline, 'orders')} "
                           "ORDER BY order_id")
    assert rows == [("o-1", None), ("o-2", "EUR"), ("o-3", "USD")]
    # the new column is a new schema version, recorded with the rows
    assert report.schema_version == stored_version(pipeline) > version


def _rejected(pipeline: Any, rows: Any, quarantine: Path, **kwargs: Any) -> GateReport:
    """Run a batch the gate must reject and check that the destination did not move."""
    before = marks(pipeline)
    state = copy.deepcopy(pipeline.state)
    schema = pipeline.default_schema.to_dict()
    with pytest.raises(GateRejected) as caught:
        gated_run(pipeline, rows, quarantine_dir=quarantine, **kwargs)
    report = caught.value.report
    assert isinstance(report, GateReport)
    assert report.reason in str(caught.value)
    assert report.action == "rejected"
    assert trusted(pipeline) == (3, 18500)
    assert slice_of(pipeline) == (2, 14500)
    assert marks(pipeline) == before  # no `_dlt_loads` row, no stored schema
    assert not pipeline.has_pending_data
    assert pipeline.state == state
    assert pipeline.default_schema.to_dict() == schema
    assert report.schema_version == pipeline.default_schema.version
    return report


@pytest.mark.parametrize("shape", sorted(REASONS))
def test_a_breaking_shape_changes_nothing_and_is_quarantined(
    target: Target, shape: str, tmp_path: Path
) -> None:
    pipeline = _baseline(target)
    landed = columns_of(pipeline)
    report = _rejected(pipeline, orders(SHAPES[shape]), tmp_path / "quarantine")
    assert report.reason == REASONS[shape] + REFUSED
    assert columns_of(pipeline) == landed
    folder = Path(str(report.quarantine))
    assert folder.parent == tmp_path / "quarantine" / "orders_gate"
    doc = json.loads((folder / "diff.json").read_text(encoding="utf-8"))
    assert doc["reason"] == report.reason
    assert [d["column"] for d in doc["differences"]] == [d.column for d in report.differences]
    assert any("validation error" in note for note in doc["notes"])
    # the model refused the rows, so there is no package: the rows as sent are kept
    sent = [json.loads(line) for line in (folder / "raw" / "orders.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert sent == [{k: (str(v) if k in ("order_date", "sale_date") else v)
                     for k, v in r.items()} for r in SHAPES[shape]]
    # and the next good batch loads
    again = gated_run(pipeline, orders(SLICE))
    assert again.action == "loaded"
    assert marks(pipeline)[0] == 2
    assert (trusted(pipeline), slice_of(pipeline)) == ((3, 18500), (2, 14500))


def test_without_raising_the_report_is_returned(target: Target, tmp_path: Path) -> None:
    pipeline = _baseline(target)
    before = marks(pipeline)
    report = gated_run(pipeline, orders(SHAPES["removed"]), raise_on_reject=False,
                       quarantine_dir=tmp_path / "q")
    assert (report.action, report.reason) == ("rejected", REASONS["removed"] + REFUSED)
    assert not report.admissible
    assert report.load_info is None
    assert (trusted(pipeline), marks(pipeline)) == ((3, 18500), before)
    assert (Path(str(report.quarantine)) / "diff.json").is_file()


# -- a resource without a model: the contract is a snapshot ------------------------------

SNAPSHOT_SOURCE = """
import datetime as dt

import dlt
from pydantic import BaseModel


class Order(BaseModel):
    order_id: str
    order_date: dt.date
    channel: str
    amount_cents: int


@dlt.source(name="shop")
def shop():
    return dlt.resource([], name="orders", columns=Order)
"""


@pytest.fixture
def contracts(project: Project) -> Path:
    """The seed's contract as `dlt-contract-ops contract snapshot` writes it."""
    project.module("pipes.shop", SNAPSHOT_SOURCE)
    project.source("shop", "pipes.shop:shop")
    proc = project.cli("contract", "snapshot", "-s", "shop", "--version", "1.0.0")
    assert proc.returncode == 0, proc.stderr
    assert (project.root / "contracts" / "shop" / "1.0.0" / "orders.json").is_file()
    return project.root / "contracts"


def _snapshot_baseline(target: Target, contracts: Path) -> Any:
    """The seed's baseline gated by the snapshot alone (`baseline`: built once per run on
    DuckDB; the snapshot is the one `contracts` writes for every test: the same source, same
    version)."""

    def build(pipeline: Any) -> None:
        first = gated_run(pipeline, shop(BASELINE, columns=None), contracts_dir=contracts)
        assert first.action == "loaded"
        assert "resource `orders`: contract from snapshot `Order`" in first.notes

    return baseline(target, "shop-snapshot-1.0.0", build)


@pytest.mark.parametrize("shape", ["baseline", "added"])
def test_a_snapshot_admits_like_the_model(target: Target, contracts: Path, shape: str) -> None:
    pipeline = _snapshot_baseline(target, contracts)
    report = gated_run(pipeline, shop(SHAPES[shape], columns=None), contracts_dir=contracts)
    assert report.action == "loaded"
    assert (trusted(pipeline), slice_of(pipeline)) == ((3, 18500), (2, 14500))
    if shape == "added":
        assert report.reason == "added: orders.currency (approved)"
        assert [r for (r,) in query(pipeline, f"SELECT currency FROM {q(pipeline, 'orders')} "
                                              "ORDER BY order_id")] == [None, "EUR", "USD"]


@pytest.mark.parametrize("shape", sorted(REASONS))
def test_a_snapshot_rejects_like_the_model(
    target: Target, contracts: Path, shape: str, tmp_path: Path
) -> None:
    pipeline = _snapshot_baseline(target, contracts)
    landed = columns_of(pipeline)
    report = _rejected(pipeline, shop(SHAPES[shape], columns=None), tmp_path / "q",
                       contracts_dir=contracts)
    # no model to refuse anything: the shape alone rejects
    assert report.reason == REASONS[shape]
    assert columns_of(pipeline) == landed  # no `sale_date`, no `amount_cents__v_text`
    folder = Path(str(report.quarantine))
    [package] = [p for p in folder.iterdir() if p.name not in ("diff.json", "raw")]
    assert [p.name.split(".")[0] for p in (package / "new_jobs").iterdir()] == ["orders"]
    again = gated_run(pipeline, shop(SLICE, columns=None), contracts_dir=contracts)
    assert (again.action, trusted(pipeline)) == ("loaded", (3, 18500))


def test_without_model_or_snapshot_the_resource_is_not_gated(target: Target) -> None:
    pipeline = target.pipeline()
    gated_run(pipeline, shop(BASELINE, columns=None))
    report = gated_run(pipeline, shop(SHAPES["removed"], columns=None))
    assert report.action == "loaded"
    assert any("not gated" in note for note in report.notes)
    # the permissive load the gate exists to stop: the slice's known-channel total is gone
    assert (trusted(pipeline), slice_of(pipeline)) == ((3, 18500), (2, 0))


# -- coercion -----------------------------------------------------------------------------

AS_TEXT = tuple({**r, "amount_cents": str(r["amount_cents"])} for r in SLICE)


def test_a_value_the_model_coerces_is_still_a_retype(target: Target, tmp_path: Path) -> None:
    pipeline = _baseline(target)
    report = _rejected(pipeline, orders(AS_TEXT), tmp_path / "q")
    assert report.reason == REASONS["retyped"]  # the model took "9000": no refusal
    folder = Path(str(report.quarantine))
    raw = (folder / "raw" / "orders.jsonl").read_text(encoding="utf-8")
    assert '"amount_cents":"9000"' in raw  # kept as sent, not as the model coerced it
    [package] = [p for p in folder.iterdir() if p.name not in ("diff.json", "raw")]
    assert (package / "new_jobs").is_dir()


def test_coercion_allowed_loads_the_coerced_values(target: Target) -> None:
    pipeline = _baseline(target)
    report = gated_run(pipeline, orders(AS_TEXT), policy=GatePolicy(allow_coercion=True))
    assert (report.action, report.reason) == (
        "loaded", "retyped: orders.amount_cents (text, expected bigint) (approved)")
    assert (trusted(pipeline), slice_of(pipeline)) == ((3, 18500), (2, 14500))
    assert "amount_cents__v_text" not in columns_of(pipeline)


def test_coercion_allowed_does_not_admit_what_the_model_refuses(
    target: Target, tmp_path: Path
) -> None:
    pipeline = _baseline(target)
    report = _rejected(pipeline, orders(SHAPES["retyped"]), tmp_path / "q",
                       policy=GatePolicy(allow_coercion=True))
    assert report.reason == REASONS["retyped"] + REFUSED


# -- incremental cursors ------------------------------------------------------------------

NEXT_DAY = (
    {"order_id": "o-4", "order_date": D19, "channel": "web", "amount_cents": 2000},
    {"order_id": "o-5", "order_date": D19, "channel": "store", "amount_cents": 3000},
)


def incremental_orders(rows: Any) -> Any:
    @dlt.resource(name="orders", columns=Order, write_disposition=MERGE, merge_key="order_date")
    def orders_since(
        order_date: Any = dlt.sources.incremental("order_date"),  # noqa: B008  dlt's idiom
    ) -> Any:
        yield [dict(r) for r in rows]

    return orders_since()


def cursor(pipeline: Any) -> Any:
    """The incremental cursor's last value, wherever dlt keeps the resource's state."""
    found = [
        res["incremental"]["order_date"]["last_value"]
        for src in pipeline.state.get("sources", {}).values()
        for name, res in src.get("resources", {}).items() if name == "orders"
    ]
    assert len(found) == 1, pipeline.state
    return found[0]


def test_a_rejected_batch_does_not_advance_the_cursor(target: Target, tmp_path: Path) -> None:
    pipeline = target.pipeline()
    gated_run(pipeline, incremental_orders(BASELINE))
    assert cursor(pipeline) == D18
    # coercible text: the model passes it on, so the cursor step sees 2026-03-19
    retyped = tuple({**r, "amount_cents": str(r["amount_cents"])} for r in NEXT_DAY)
    report = _rejected(pipeline, incremental_orders(retyped), tmp_path / "q")
    assert report.reason == REASONS["retyped"]
    assert cursor(pipeline) == D18
    # a fresh pipeline object sees the same state: nothing was persisted
    assert cursor(dlt.attach(pipeline.pipeline_name)) == D18
    loaded = gated_run(pipeline, incremental_orders(BASELINE + NEXT_DAY))
    assert loaded.action == "loaded"
    assert cursor(pipeline) == D19
    assert trusted(pipeline) == (5, 23500)
    assert slice_of(pipeline, "2026-03-19") == (2, 5000)


def test_the_callers_resource_keeps_its_own_validator(duckdb_target: Target) -> None:
    """The gate lets the model keep additions and defers its refusals only while it
    extracts: afterwards a plain `pipeline.run` of the same resource refuses as before."""
    pipeline = _baseline(duckdb_target)
    resource = orders(SHAPES["retyped"])
    assert gated_run(pipeline, resource, raise_on_reject=False).action == "rejected"
    assert resource.validator.column_mode == "discard_value"
    with pytest.raises(PipelineStepFailed, match="amount_cents"):
        pipeline.run(resource)
    assert trusted(pipeline) == (3, 18500)
