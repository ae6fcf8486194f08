"""A rejection is one alert (`drift_type: "gate"`) to the configured sinks; a dry run and an
admitted batch send nothing. A real webhook sink against a loopback receiver."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dlt_contract_ops import GateRejected, gated_run
from dlt_contract_ops.settings import project_context
from tests.gate.conftest import Target, baseline_orders, trusted
from tests.gate.seed import BASELINE, REASONS, REFUSED, SHAPES, orders
from tests.projects import Project
from tests.servers import Receiver


@pytest.fixture
def hook(project: Project) -> Iterator[Receiver]:
    """A webhook receiver, configured as the project's only alert sink."""
    with Receiver() as receiver:
        project.config('[contract_ops]\nalert_sinks = ["webhook"]\n')
        project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{receiver.url}/gate"\n')
        with project_context(project.root):
            yield receiver


def test_a_rejection_sends_one_gate_event(duckdb_target: Target, hook: Receiver) -> None:
    pipeline = baseline_orders(duckdb_target)
    gated_run(pipeline, orders(SHAPES["added"]))
    assert hook.requests == []  # admitted batches are not alerts
    with pytest.raises(GateRejected) as caught:
        gated_run(pipeline, orders(SHAPES["removed"]))
    [request] = hook.wait_for(1)
    assert request.path == "/gate"
    doc = request.json()
    finding = doc["finding"]
    assert (doc["type"], finding["drift_type"]) == ("schema_drift", "gate")
    assert (finding["pipeline"], finding["table"]) == ("orders_gate", "orders")
    assert finding["columns"] == ["orders.channel"]
    assert finding["reproduce"] == REASONS["removed"] + REFUSED == caught.value.report.reason
    assert trusted(pipeline) == (3, 18500)


def test_a_dry_run_sends_nothing(duckdb_target: Target, hook: Receiver) -> None:
    pipeline = baseline_orders(duckdb_target)
    with pytest.raises(GateRejected):
        gated_run(pipeline, orders(SHAPES["renamed"]), dry_run=True)
    assert hook.requests == []
    # the same rejection for real is sent: the dry run did not mark it as alerted either
    with pytest.raises(GateRejected):
        gated_run(pipeline, orders(SHAPES["renamed"]))
    [request] = hook.wait_for(1)
    assert request.json()["finding"]["columns"] == ["orders.order_date", "orders.sale_date"]


def test_the_argument_names_the_sinks(duckdb_target: Target, hook: Receiver) -> None:
    pipeline = baseline_orders(duckdb_target)
    report = gated_run(pipeline, orders(SHAPES["retyped"]), alert_sinks=["logging"],
                       raise_on_reject=False)
    assert report.action == "rejected"
    assert hook.requests == []


def test_a_rejection_the_webhook_refused_says_so_on_the_report(
    duckdb_target: Target, project: Project
) -> None:
    from tests.servers import Reply

    with Receiver(default=Reply(500)) as refusing:
        project.config('[contract_ops]\nalert_sinks = ["logging", "webhook"]\n'
                       "[contract_ops.alert_sink.webhook]\nretries = 0\n")
        project.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{refusing.url}/gate"\n')
        with project_context(project.root):
            pipeline = duckdb_target.pipeline()
            gated_run(pipeline, orders(BASELINE))
            with pytest.raises(GateRejected) as caught:
                gated_run(pipeline, orders(SHAPES["removed"]))
    assert len(refusing.requests) == 1
    assert any("alert not delivered to 'webhook'" in n for n in caught.value.report.notes)
    assert trusted(pipeline) == (3, 18500)


@pytest.mark.parametrize("shape", ["added", "removed"])
def test_a_sink_that_cannot_be_built_stops_the_gate_before_the_batch(
    duckdb_target: Target, project: Project, shape: str
) -> None:
    """A webhook `url` that is no URL: the gate refuses to start, as `reconcile` does, for an
    admissible batch and a breaking one alike; before, the batch ran and the rejection went to
    a logging fallback with a WARNING (no page)."""
    from dlt_contract_ops.errors import AlertSinkError

    pipeline = baseline_orders(duckdb_target)
    project.config('[contract_ops]\nalert_sinks = ["webhook"]\n')
    project.secrets('[contract_ops.alert_sink.webhook]\nurl = "htps://127.0.0.1:9/gate"\n')
    with project_context(project.root), pytest.raises(AlertSinkError, match="webhook"):
        gated_run(pipeline, orders(SHAPES[shape]))
    assert trusted(pipeline) == (3, 18500)
    assert pipeline.list_extracted_load_packages() == []
    assert pipeline.list_normalized_load_packages() == []
