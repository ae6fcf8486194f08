"""The orchestrator example (`examples/orchestrators/gated_task.py`) run as a task would run
it: an admitted batch returns its summary, a rejected one fails with the gate's reason."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.gate.conftest import Target, baseline, marks, slice_of, trusted
from tests.gate.seed import BASELINE, REASONS, REFUSED, SHAPES

EXAMPLE = Path(__file__).parents[2] / "examples" / "orchestrators" / "gated_task.py"
EXAMPLE_KEY = hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()[:12]


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gated_task_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # pydantic resolves the model's postponed annotations through sys.modules
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_task_loads_an_admissible_batch(example: ModuleType, duckdb_target: Target) -> None:
    kwargs = {"destination": duckdb_target.destination(), "dataset_name": duckdb_target.dataset,
              "pipeline_name": "orders_gate"}
    first = example.gated_orders_task(BASELINE, **kwargs)
    summary = example.gated_orders_task(SHAPES["added"], **kwargs)
    json.dumps(summary)  # what an orchestrator stores must be JSON
    assert (summary["action"], summary["reason"]) == (
        "loaded", "added: orders.currency (approved)")
    assert summary["schema_version"] > first["schema_version"]
    assert len(summary["load_ids"]) == 1
    pipeline = duckdb_target.pipeline()
    assert (trusted(pipeline), slice_of(pipeline)) == ((3, 18500), (2, 14500))


@pytest.mark.parametrize("shape", sorted(REASONS))
def test_the_task_fails_with_the_reason(
    example: ModuleType, duckdb_target: Target, shape: str
) -> None:
    kwargs = {"destination": duckdb_target.destination(), "dataset_name": duckdb_target.dataset,
              "pipeline_name": "orders_gate"}

    def build(_: Any) -> None:
        example.gated_orders_task(BASELINE, **kwargs)

    # the task's first run, built once per run and copied (`baseline`; keyed by the example)
    pipeline = baseline(duckdb_target, f"task-{EXAMPLE_KEY}", build)
    before = marks(pipeline)
    with pytest.raises(example.BatchRejected) as caught:
        example.gated_orders_task(SHAPES[shape], **kwargs)
    assert caught.value.reason == REASONS[shape] + REFUSED
    assert str(caught.value).startswith(f"orders batch rejected: {REASONS[shape]}")
    assert (Path(caught.value.quarantine) / "diff.json").is_file()
    assert (trusted(pipeline), marks(pipeline)) == ((3, 18500), before)
