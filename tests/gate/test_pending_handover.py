"""A gate killed mid hand-over (its accepted package renamed into the pipeline, the load not
run): what docs/gate.md says happens next, checked on a real process killed with SIGKILL.
A plain `pipeline.run(good)` loads the pending accepted package and drops `good` (dlt warns);
`validate` names the pending hand-over and the command that finishes it, and that command
(`dlt-contract-ops gate finish`) installs the gate's state and loads the package."""

from __future__ import annotations

import json
import logging
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from dlt_contract_ops.commands import main
from tests.gate.conftest import Target, baseline_orders, trusted
from tests.gate.crash_child import forked
from tests.gate.seed import D19, orders
from tests.projects import Project

ROWS = 50
GOOD = ({"order_id": "o-4", "order_date": D19, "channel": "web", "amount_cents": 1000},)


def _killed_mid_hand_over(target: Target) -> None:
    """The seed's baseline gated in (3 rows, 18500 cents; 2 of them on 2026-03-18), then a
    gate of ROWS rows of 1 cent on 2026-03-18, accepted, killed once its package was handed
    over (before its state was installed and its load ran)."""
    assert trusted(baseline_orders(target)) == (3, 18500)
    code, stderr = forked(target.kind, target.dataset, target.folder, "handover", "KILL", ROWS)
    assert code == -signal.SIGKILL, stderr[-3000:]


def test_a_plain_run_after_a_killed_hand_over_loads_the_package_and_drops_its_batch(
    duckdb_target: Target,
) -> None:
    _killed_mid_hand_over(duckdb_target)
    after = duckdb_target.pipeline()
    assert after.has_pending_data
    warned: list[str] = []
    heard = logging.Handler(logging.WARNING)
    heard.emit = lambda record: warned.append(record.getMessage())  # type: ignore[method-assign]
    dlt_log = logging.getLogger("dlt")  # dlt's own logger, whatever handlers it has
    dlt_log.addHandler(heard)
    try:
        after.run(orders(GOOD))
    finally:
        dlt_log.removeHandler(heard)
    # the accepted batch (ROWS rows of 1 cent) replaced its slice: 1 row of the baseline left
    assert trusted(after) == (1 + ROWS, 4000 + ROWS)
    # dlt's own WARNING says so
    assert any("The data you passed to the run function will not be extracted" in w
               for w in warned), warned
    after.run(orders(GOOD))  # run again: now the good batch loads
    assert trusted(after) == (1 + ROWS + 1, 4000 + ROWS + 1000)


SOURCE = '''
import dlt
from tests.gate.seed import Order


@dlt.source(name="orders")
def orders_source():
    return dlt.resource([], name="orders", columns=Order)
'''


def test_validate_names_a_pending_hand_over_and_gate_finish_finishes_it(
    duckdb_target: Target, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _killed_mid_hand_over(duckdb_target)
    project.module("orders_mod", SOURCE)
    project.source("orders", "orders_mod:orders_source", pipeline_name="orders_gate",
                   destination=None)
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS",
                       str(duckdb_target.folder / "warehouse.duckdb"))
    checked = CliRunner().invoke(main, ["validate", "--format", "json",
                                        "--project-dir", str(project.root)])
    [note] = json.loads(checked.stdout)["notes"]
    assert "`orders_gate`" in note
    assert "source `orders`" in note
    assert "`dlt-contract-ops gate finish -s orders`" in note
    text = CliRunner().invoke(main, ["validate", "--project-dir", str(project.root)])
    assert f"! {note}" in text.stdout.splitlines()

    # the killed gate's state install is pending: its journal is there
    journal = Path(duckdb_target.pipeline().working_dir) / "contract_ops_gate_handover.json"
    assert journal.is_file()
    finished = CliRunner().invoke(main, ["gate", "finish", "-s", "orders",
                                         "--project-dir", str(project.root)])
    assert finished.exit_code == 0, finished.output
    assert finished.stdout.startswith("Loaded 1 package(s) a gate accepted")
    after = duckdb_target.pipeline()
    assert not after.has_pending_data
    assert trusted(after) == (1 + ROWS, 4000 + ROWS)
    assert not journal.exists()  # the gate's state install was finished under its lock
    again = CliRunner().invoke(main, ["validate", "--format", "json",
                                      "--project-dir", str(project.root)])
    assert json.loads(again.stdout)["notes"] == []
