"""A rejected batch reaches the trusted table under no crash: a real signal (SIGKILL, SIGTERM,
SIGINT) stops a gated run in a process of its own at each step, then a plain `pipeline.run()`
of a good batch loads that batch and nothing else. Also: a cut hand-over of an accepted batch
is finished by the next gate, a quarantine that cannot be written still rejects and alerts, and
a second gate on the same pipeline waits or refuses, leaking nothing. DuckDB and PostgreSQL."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import dlt
import pytest
from filelock import FileLock

from dlt_contract_ops import GateRejected, gated_run
from dlt_contract_ops.core.ingest import GatePolicy
from dlt_contract_ops.errors import ContractOpsError, GateBusyError
from dlt_contract_ops.ingest.staging import gate_root
from tests.gate.conftest import Target, _target, baseline_orders, landed, marks, trusted
from tests.gate.crash_child import forked
from tests.gate.seed import D19, SHAPES, orders
from tests.gate.test_alerts import hook  # noqa: F401  # the webhook receiver fixture
from tests.servers import Receiver

REPO = Path(__file__).resolve().parents[2]
#: the batch a crash child sends: its `extract` point stops it half way, before dlt's writer
#: flushes its first buffer (5,000 items) as it would half way through 5,000 rows
ROWS = 500
GOOD = ({"order_id": "o-4", "order_date": D19, "channel": "web", "amount_cents": 1000},)
#: a process stopped by a signal reports minus its number; SIGINT is Python's
#: KeyboardInterrupt, which unwinds the stack (every `finally` runs) and exits 1
EXIT = {"KILL": -signal.SIGKILL, "TERM": -signal.SIGTERM, "INT": 1}


def _crash(target: Target, point: str, sig: str) -> tuple[int, str]:
    code, stderr = forked(target.kind, target.dataset, target.folder, point, sig, ROWS)
    assert code == EXIT[sig], stderr[-3000:]
    if sig == "INT":
        assert stderr.rstrip().endswith("KeyboardInterrupt"), stderr[-3000:]
    return code, stderr


POINTS = [
    ("extract", "KILL"), ("extract", "TERM"), ("extract", "INT"),
    ("observe", "KILL"),
    ("compare", "KILL"), ("compare", "TERM"),
    ("quarantine", "KILL"), ("quarantine", "INT"),
]
#: PostgreSQL: one stop per step (the destination is not touched before a hand-over anyway)
PG_POINTS = [("extract", "KILL"), ("observe", "TERM"), ("compare", "INT"),
             ("quarantine", "KILL")]


@pytest.mark.parametrize(
    ("kind", "point", "sig"),
    [("duckdb", p, s) for p, s in POINTS]
    + [pytest.param("postgres", p, s, marks=pytest.mark.postgres) for p, s in PG_POINTS],
)
def test_a_rejected_batch_stopped_anywhere_never_reaches_the_trusted_table(
    kind: str, point: str, sig: str, tmp_path: Path
) -> None:
    yield_target = _target(kind, tmp_path)
    target = next(yield_target)
    try:
        _stopped_then_plain_run(target, point, sig)
    finally:
        next(yield_target, None)


def _stopped_then_plain_run(target: Target, point: str, sig: str) -> None:
    pipeline = baseline_orders(target)
    loads, versions, _ = marks(pipeline)
    _crash(target, point, sig)
    # a fresh process's view of the pipeline: nothing pending, and the user's next ordinary run
    after = target.pipeline()
    assert not after.has_pending_data
    after.run(orders(GOOD))
    # what landed, read over one connection (`landed`)
    rows_cents, (after_loads, after_versions, _), columns = landed(after, [(
        "SELECT column_name FROM information_schema.columns "
        f"WHERE table_name = 'orders' AND table_schema = '{target.dataset}'")])
    assert rows_cents == (4, 18500 + 1000)
    assert after_loads == loads + 1
    assert "currency" not in [c for (c,) in columns]
    assert after_versions == versions + 1  # the good batch's schema, not the rejected one's
    # what a killed gate left is only its own staging folder, which the next gate clears
    gated_run(after, orders(({**GOOD[0], "order_id": "o-5"},)))
    rows_cents, (after_loads, _, _) = landed(after)
    assert (rows_cents, after_loads) == ((4, 18500 + 1000), loads + 2)  # same slice
    assert not [p for p in gate_root(after).iterdir() if p.is_dir()]


def test_a_cut_hand_over_is_finished_by_the_next_gate(target: Target) -> None:
    baseline_orders(target)
    _crash(target, "handover", "KILL")
    after = target.pipeline()
    report = gated_run(after, orders(GOOD))
    assert report.action == "loaded"
    # the accepted batch replaced the 2026-03-18 slice; the good batch added 2026-03-19
    assert trusted(after) == (1 + ROWS + 1, 4000 + ROWS + 1000)
    assert not (Path(after.working_dir) / "contract_ops_gate_handover.json").exists()
    assert not after.has_pending_data


def test_an_unwritable_quarantine_still_rejects_and_alerts(
    duckdb_target: Target, hook: Receiver  # noqa: F811
) -> None:
    pipeline = baseline_orders(duckdb_target)
    blocker = duckdb_target.folder / "not-a-folder"
    blocker.write_text("a file where the quarantine folder should be")
    with pytest.raises(GateRejected) as caught:
        gated_run(pipeline, orders(SHAPES["added"]),
                  policy=GatePolicy(allow_nullable_additions=False),
                  quarantine_dir=blocker / "quarantine")
    report = caught.value.report
    assert report.quarantine is None
    assert any("NOT kept" in n and str(blocker) in n for n in report.notes)
    [request] = hook.wait_for(1)
    assert "NOT kept" in request.json()["finding"]["reproduce"]
    assert trusted(pipeline) == (3, 18500)
    assert not pipeline.has_pending_data


def test_a_second_gate_on_the_pipeline_waits_then_refuses(duckdb_target: Target) -> None:
    pipeline = baseline_orders(duckdb_target)
    held = FileLock(gate_root(pipeline) / "gate.lock")
    with held, pytest.raises(GateBusyError, match="Another gate is running"):
        gated_run(pipeline, orders(GOOD), lock_timeout=0.2)
    assert trusted(pipeline) == (3, 18500)
    assert not pipeline.has_pending_data
    assert gated_run(pipeline, orders(GOOD)).action == "loaded"
    assert trusted(pipeline) == (4, 19500)


def test_two_gates_at_once_load_both_batches_one_after_the_other(target: Target) -> None:
    baseline_orders(target)
    rows = [({"order_id": f"p-{n}", "order_date": D19, "channel": "web", "amount_cents": n},)
            for n in (10, 20)]
    errors: list[BaseException] = []

    def one(batch: tuple[dict[str, Any], ...]) -> None:
        try:
            # each thread its own pipeline object on the same working folder, as two
            # processes would have; the merge key replaces the slice, so load as append
            gated_run(target.pipeline(), dlt.resource(list(batch), name="orders",
                                                      columns=orders(()).columns,
                                                      write_disposition="append"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(b,)) for b in rows]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert errors == []
    assert trusted(target.pipeline()) == (5, 18500 + 30)


def test_an_unchecked_pending_package_is_named_and_never_loaded_by_the_gate(
    duckdb_target: Target,
) -> None:
    pipeline = baseline_orders(duckdb_target)
    pipeline.extract(orders(SHAPES["added"]))  # a plain extract: nobody checked it
    [pending] = pipeline.list_extracted_load_packages()
    with pytest.raises(ContractOpsError, match=pending) as caught:
        gated_run(pipeline, orders(GOOD))
    assert "drop_pending_packages()" in str(caught.value)
    assert trusted(pipeline) == (3, 18500)
    pipeline.drop_pending_packages()
    assert gated_run(pipeline, orders(GOOD)).action == "loaded"
