"""Dedup decides a sweep's findings in one batch: the state file is read and written once per
batch and once at the end, however many findings there are, and a run killed in the middle
of sending loses nothing and repeats only what the docs say it may (docs/sinks.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

from dlt_contract_ops.errors import StateFileError
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.settings import load_project_settings, project_context
from dlt_contract_ops.sinks.base import ErrorEvent
from dlt_contract_ops.sinks.dedup import DedupStore, finding_key
from dlt_contract_ops.sinks.emitter import Emitter
from tests.file_events import FileEvents, watch
from tests.projects import Project
from tests.sinks.conftest import make_finding
from tests.sinks.test_emitter import Recording

DAY = 86400.0
WAIT = 120.0  # a cap on waiting for the subprocess: a hang fails, speed is not tested


def _findings(n: int) -> list[DriftFinding]:
    return [make_finding(resource=f"r{i}", table=f"t{i}") for i in range(n)]


@pytest.fixture
def state_io(tmp_path: Path) -> Iterator[FileEvents]:
    """The opens and replacements of `tmp_path / "state.json"`, as the kernel sees them."""
    with watch(tmp_path) as seen:
        yield seen


def _io(seen: FileEvents) -> dict[str, int]:
    """Reads (opens: a read of a file not there yet is none) and writes (atomic replaces)."""
    return {"read": seen.opened("state.json"), "write": seen.written("state.json")}


def _run(path: Path, findings: list[DriftFinding], *, dry_run: bool = False) -> Emitter:
    sink = Recording()
    emitter = Emitter([("r", sink)], dedup=DedupStore(path, DAY), dry_run=dry_run)
    emitter.drift_all(findings)
    emitter.flush(1.0)
    return emitter


@pytest.mark.parametrize("count", [1, 40])
def test_a_sweep_reads_and_writes_the_state_twice_whatever_its_findings(
    tmp_path: Path, state_io: FileEvents, count: int
) -> None:
    path = tmp_path / "state.json"
    first = _run(path, _findings(count))

    assert set(dict(first.report.ledger).values()) == {"new"}
    assert len(first.report.delivered_to) == count
    # the claims before sending (read before the file exists: no open), then the settled
    # alerts after the flush
    assert _io(state_io) == {"read": 1, "write": 2}

    state_io.clear()
    again = _run(path, _findings(count))

    assert set(dict(again.report.ledger).values()) == {"repeat"}
    assert _io(state_io) == {"read": 1, "write": 0}  # nothing new: nothing to write


def test_a_dry_run_reads_the_state_once(tmp_path: Path, state_io: FileEvents) -> None:
    path = tmp_path / "state.json"
    _run(path, _findings(3))
    state_io.clear()

    dry = _run(path, [*_findings(3), make_finding(resource="new", table="new")], dry_run=True)

    assert dict(dry.report.ledger) == {
        **{f.id: "repeat" for f in _findings(3)},
        make_finding(resource="new", table="new").id: "new",
    }
    assert _io(state_io) == {"read": 1, "write": 0}


class _StopsAtSecond(Recording):
    """Delivers the first finding, then SIGINT arrives while the second is being sent."""

    def emit_drift(self, finding: DriftFinding) -> None:
        if self.drift:
            raise KeyboardInterrupt
        super().emit_drift(finding)


def test_claims_of_findings_never_sent_are_released_at_flush(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    findings = _findings(3)
    emitter = Emitter([("r", _StopsAtSecond())], dedup=DedupStore(path, DAY))
    with pytest.raises(KeyboardInterrupt):
        emitter.drift_all(findings)
    emitter.flush(1.0)  # what the sweep does on its way out of an interrupt

    alerts = json.loads(path.read_text())["alerts"]
    # the delivered one is settled; the interrupted one and the one never reached are free
    assert list(alerts) == [finding_key(findings[0])]
    assert "pending" not in alerts[finding_key(findings[0])]["sinks"]["r"]
    again = _run(path, findings)
    assert dict(again.report.ledger) == {findings[0].id: "repeat", findings[1].id: "new",
                                         findings[2].id: "new"}


_KILLED_RUN = """
import os, sys
from pathlib import Path
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.dedup import DedupStore
from dlt_contract_ops.sinks.emitter import Emitter

state, pages = Path(sys.argv[1]), Path(sys.argv[2])

class Pager:
    '''Writes each page to a file as it is delivered; the process dies after the third.'''

    def emit_drift(self, finding):
        with open(pages, "a", encoding="utf-8") as fh:
            fh.write(finding.id + "\\n")
            fh.flush()
            os.fsync(fh.fileno())
        if len(pages.read_text().split()) == 3:
            os._exit(9)  # no flush, no settle, no finally: a killed process

    def emit_error(self, event):
        pass

    def flush(self, timeout):
        pass

findings = [DriftFinding(drift_type="additive", source="shop", resource=f"r{i}", table=f"t{i}",
                         columns=["x"]) for i in range(5)]
emitter = Emitter([("pager", Pager())], dedup=DedupStore(state, 86400.0))
emitter.drift_all(findings)
emitter.flush(1.0)
"""


class _Pager:
    """The killed run's sink, in this process: appends each delivered finding's id."""

    def __init__(self, pages: Path) -> None:
        self.pages = pages

    def emit_drift(self, finding: DriftFinding) -> None:
        with open(self.pages, "a", encoding="utf-8") as fh:
            fh.write(finding.id + "\n")

    def emit_error(self, event: ErrorEvent) -> None:
        pass

    def flush(self, timeout: float) -> None:
        pass


def test_a_run_killed_mid_send_loses_no_alert_and_repeats_only_what_it_sent(
    tmp_path: Path,
) -> None:
    state, pages = tmp_path / "state.json", tmp_path / "pages.txt"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED_RUN), str(state), str(pages)],
        capture_output=True, text=True, timeout=WAIT,
        env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
    )
    assert proc.returncode == 9, proc.stderr
    findings = [DriftFinding(drift_type="additive", source="shop", resource=f"r{i}",
                             table=f"t{i}", columns=["x"]) for i in range(5)]
    ids = [f.id for f in findings]
    assert pages.read_text().split() == ids[:3]
    # every finding was claimed before the first was sent: a concurrent run held back all five
    alerts = json.loads(state.read_text())["alerts"]
    assert sorted(alerts) == sorted(ids)
    assert all("pending" in alerts[i]["sinks"]["pager"] for i in ids)

    def run() -> Emitter:
        emitter = Emitter([("pager", _Pager(pages))], dedup=DedupStore(state, DAY))
        emitter.drift_all(findings)
        emitter.flush(1.0)
        return emitter

    after = run()  # the dead run's claims no longer count: nothing is lost
    sent = pages.read_text().split()
    assert set(dict(after.report.ledger).values()) == {"new"}
    # what the killed run delivered but never recorded is sent once more (docs/sinks.md)
    assert {i: sent.count(i) for i in ids} == {**dict.fromkeys(ids[:3], 2),
                                              **dict.fromkeys(ids[3:], 1)}
    settled = json.loads(state.read_text())["alerts"]
    assert not any("pending" in settled[i]["sinks"]["pager"] for i in ids)

    last = run()  # and from then on, no duplicate
    assert set(dict(last.report.ledger).values()) == {"repeat"}
    assert pages.read_text().split() == sent


def test_the_state_lock_waits_the_configured_lock_timeout(project: Project) -> None:
    project.config("""
        [contract_ops]
        lock_timeout = "1s"
    """)
    with project_context(project.root):
        store = DedupStore.from_settings(load_project_settings().dedup)
    held = FileLock(store.path.with_name(store.path.name + ".lock"))
    store.path.parent.mkdir(parents=True, exist_ok=True)
    with held, pytest.raises(StateFileError, match=r"held by another process for more than 1s"):
        store.reserve_all(_findings(1), ("r",))
