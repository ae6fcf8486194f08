"""The lifecycle in the alert state: what a resolve, a reopen and an escalation write and
decide, per sink; and what a run killed between sending a resolve and recording it leaves
(docs/sinks.md, "Lifecycle": sent once more, never lost)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.dedup import AlertMark, DedupStore
from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sinks.lifecycle import RESOLVED_KEEP, Swept
from dlt_contract_ops.sinks.memory import MemorySink

DAY = 86400.0
WAIT = 120.0  # a cap on waiting for the subprocess: a hang fails, speed is not tested


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _finding(columns: tuple[str, ...] = ("x",), **details: object) -> DriftFinding:
    return DriftFinding(drift_type="removal", source="shop", resource="orders", table="orders",
                        columns=list(columns), **details)


CHECKED = frozenset({("shop", "removal", "orders")})


def _run(path: Path, sinks: list[MemorySink], findings: list[DriftFinding],
         clock: Clock | None = None, tables: frozenset[tuple[str, str, str]] = CHECKED,
         ) -> Emitter:
    store = DedupStore(path, DAY, clock=clock) if clock else DedupStore(path, DAY)
    emitter = Emitter([(s.name, s) for s in sinks], dedup=store)
    emitter.drift_all(findings)
    emitter.resolve(Swept(tables, frozenset(f.id for f in findings)))
    emitter.flush(1.0)
    return emitter


class _Refuses(MemorySink):
    """Delivers nothing: every event raises."""

    def emit_drift(self, finding: DriftFinding) -> None:
        raise RuntimeError("down")


def test_resolve_reopen_per_sink(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    pager, log = MemorySink("pager"), MemorySink("log")
    f = _finding()
    _run(path, [pager, log], [f])
    _run(path, [pager, log], [], tables=frozenset())  # not checked: nothing resolved
    assert pager.resolved == []
    _run(path, [pager, log], [])
    assert ([a.id for a in pager.resolved], [a.id for a in log.resolved]) == ([f.id], [f.id])
    record = json.loads(path.read_text())["alerts"][f.id]["sinks"]["pager"]
    assert record["resolved"]
    assert "resolve_due" not in record
    # back again: reopened at the sink that is up; the one that is down gets it next run
    down = _Refuses("log")
    back = _run(path, [pager, down], [f])
    assert back.report.undelivered_to == {f.id: ("log",)}
    assert [x.id for x in pager.drift] == [f.id, f.id]
    again = _run(path, [pager, log], [f])
    assert again.report.ledger.mark(f) == AlertMark("new", "reopened")
    assert ([x.id for x in pager.drift], [x.id for x in log.drift]) == ([f.id] * 2, [f.id] * 2)


def test_escalated_by_content_and_depth_narrower_is_a_repeat(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    pager = MemorySink("pager")
    shallow = _finding(coverage={"x": {"baseline": 0.9, "recent": 0.5}})
    _run(path, [pager], [shallow])
    same = _finding(coverage={"x": {"baseline": 0.9, "recent": 0.45}})
    assert _run(path, [pager], [same]).report.ledger.mark(same) == AlertMark(
        "repeat", "unchanged")
    deep = _finding(coverage={"x": {"baseline": 0.9, "recent": 0.0}})
    assert _run(path, [pager], [deep]).report.ledger.mark(deep) == AlertMark(
        "new", "escalated")
    assert len(pager.drift) == 2

    metric = {"column": "s", "metric": "category_share", "category": "a", "baseline": 0.0,
              "current": 0.1, "change": 0.1}
    one = DriftFinding(drift_type="distribution", source="shop", resource="orders",
                       table="orders", columns=["s"], metrics=[metric])
    two = one.model_copy(update={"details": one.details.model_copy(update={  # type: ignore[union-attr]
        "metrics": [metric, {**metric, "category": "b"}]})})
    _run(path, [pager], [one])
    assert _run(path, [pager], [two]).report.ledger.mark(two) == AlertMark("new", "escalated")
    assert _run(path, [pager], [one]).report.ledger.mark(one) == AlertMark(
        "repeat", "unchanged")  # narrower again: no page


def test_resolved_records_are_kept_a_week(tmp_path: Path) -> None:
    path, clock = tmp_path / "state.json", Clock()
    pager = MemorySink("pager")
    f, other = _finding(), _finding(("y",))
    _run(path, [pager], [f, other], clock)
    _run(path, [pager], [other], clock)
    assert f.id in json.loads(path.read_text())["alerts"]
    clock.now += RESOLVED_KEEP
    # a week after it resolved, its return is a first alert again, and the file forgets it
    assert _run(path, [pager], [f, other], clock).report.ledger.mark(f) == AlertMark(
        "new", "first")
    assert "resolved" not in json.loads(path.read_text())["alerts"][f.id]["sinks"]["pager"]


_KILLED = """
import os, sys
from pathlib import Path
from dlt_contract_ops.sinks.dedup import DedupStore
from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sinks.lifecycle import Swept

state, pages = Path(sys.argv[1]), Path(sys.argv[2])

class Pager:
    '''Writes each resolve to a file as it is delivered, then the process dies.'''

    name = "pager"

    def emit_drift(self, finding):
        pass

    def emit_error(self, event):
        pass

    def emit_resolved(self, alert):
        with open(pages, "a", encoding="utf-8") as fh:
            fh.write(alert.id + "\\n")
            fh.flush()
            os.fsync(fh.fileno())
        os._exit(9)  # no flush, no settle, no finally: a killed process

    def flush(self, timeout):
        pass

emitter = Emitter([("pager", Pager())], dedup=DedupStore(state, 86400.0))
emitter.resolve(Swept(frozenset({("shop", "removal", "orders")}), frozenset()))
emitter.flush(1.0)
"""


def test_a_run_killed_after_sending_a_resolve_sends_it_once_more(tmp_path: Path) -> None:
    state, pages = tmp_path / "state.json", tmp_path / "pages.txt"
    f = _finding()
    _run(state, [MemorySink("pager")], [f])
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED), str(state), str(pages)],
        capture_output=True, text=True, timeout=WAIT,
        env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
    )
    assert proc.returncode == 9, proc.stderr
    assert pages.read_text().split() == [f.id]
    record = json.loads(state.read_text())["alerts"][f.id]["sinks"]["pager"]
    # resolved and claimed before it was sent: the record says so, the claim is the dead run's
    assert record["resolve_due"]
    assert record["resolve_pending"]

    pager = MemorySink("pager")
    _run(state, [pager], [])  # the dead run's claim no longer counts: sent once more
    assert [a.id for a in pager.resolved] == [f.id]
    record = json.loads(state.read_text())["alerts"][f.id]["sinks"]["pager"]
    assert "resolve_due" not in record
    assert "resolve_pending" not in record
    _run(state, [pager], [])  # and from then on, not again
    assert len(pager.resolved) == 1


def test_a_resolve_another_live_run_is_sending_is_not_sent_twice(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    f = _finding()
    _run(path, [MemorySink("pager")], [f])
    doc = json.loads(path.read_text())
    record = doc["alerts"][f.id]["sinks"]["pager"]
    record.update(resolved=1.0, resolved_at="x", resolve_due=True,
                  resolve_pending={"owner": "another-host:1", "since": 9e18})
    path.write_text(json.dumps(doc))
    pager = MemorySink("pager")
    _run(path, [pager], [])
    assert pager.resolved == []
