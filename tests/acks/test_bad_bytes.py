"""One byte that is not UTF-8 in a local file a sweep reads (the finding index by id, the
alert dedup state, the acknowledgements) costs that file's use, never a traceback or another
file's: a real dlt load in DuckDB, real sweeps, the files flipped on disk."""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from dlt_contract_ops.acks.service import ack_problems, record_ack
from dlt_contract_ops.acks.store import ACKS_FILE
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.memory import MemorySink
from tests.projects import Project

NOW = dt.datetime(2026, 12, 1, 9, tzinfo=dt.timezone.utc)


def _data(pattern: str) -> Path:
    [path] = sorted(Path(os.environ["DLT_DATA_DIR"]).glob(pattern))
    return path


def _flip(path: Path) -> tuple[bytes, int]:
    """A byte that is never UTF-8 in place of the file's fourth: the new content, and the
    line that byte is on."""
    data = path.read_bytes()
    flipped = data[:3] + b"\xff" + data[4:]
    path.write_bytes(flipped)
    return flipped, data.count(b"\n", 0, 3) + 1


def _sweep(project: Project, sink: MemorySink, now: dt.datetime = NOW) -> list[DriftFinding]:
    results = run(["app"], project_dir=project.root, removal={"now": now}, alert_sinks=[sink])
    assert all(r.error is None for r in results), [r.error for r in results]
    return [f for r in results for f in r.findings]


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-5])


@pytest.mark.parametrize("damage", [_flip, _cut], ids=["bad byte", "cut short"])
def test_a_broken_id_index_is_rebuilt_and_the_sweep_still_recorded(
    app_project: Project, damage: Callable[[Path], object],
) -> None:
    """What each id stands for (`ack` reads it) is derived from the sweeps: the next sweep
    writes a line it lost afresh. Before, its error also skipped recording the sweep."""
    sink = MemorySink()
    [finding] = _sweep(app_project, sink)
    index = _data("contract_ops/findings/*.found.jsonl")
    damage(index)
    _sweep(app_project, sink, NOW + dt.timedelta(hours=1))
    sweeps = _data("contract_ops/findings/*.sweeps.jsonl")
    assert len(sweeps.read_text(encoding="utf-8").splitlines()) == 2
    entry, _ = record_ack(finding.id, "7d", "known", "alice", project_dir=app_project.root,
                          now=NOW)
    assert (entry.table, entry.columns) == (finding.table, tuple(finding.columns))


def test_the_dedup_state_with_a_bad_byte_is_set_aside_and_alerting_goes_on(
    app_project: Project, caplog: pytest.LogCaptureFixture
) -> None:
    """A dedup state that cannot be read alerts (once more) rather than stays quiet: the file
    is moved aside with a warning naming both paths, as for a file cut short."""
    sink = MemorySink()
    _sweep(app_project, sink)
    state = _data("contract_ops/alert_state/*.json")
    flipped, line = _flip(state)
    sink.drift.clear()
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        [again] = _sweep(app_project, sink, NOW + dt.timedelta(hours=1))
    assert [f.id for f in sink.drift] == [again.id]  # repeated once, never lost
    aside = state.with_name(state.name + ".corrupt")
    assert aside.read_bytes() == flipped
    [warning] = [r.getMessage() for r in caplog.records if "unreadable" in r.getMessage()]
    assert f"`{state}` line {line} is not UTF-8 text" in warning
    assert f"moved to `{aside}`" in warning
    sink.drift.clear()
    _sweep(app_project, sink, NOW + dt.timedelta(hours=2))
    assert sink.drift == []  # the fresh state holds it back again


def test_an_acks_file_with_a_bad_byte_alerts_as_if_nothing_were_acknowledged(
    app_project: Project,
) -> None:
    """The acknowledgements are a reviewed file: its error names the file and line, the run
    alerts (nothing is silenced), and `validate` says the same in one line."""
    [finding] = [f for r in run(["app"], project_dir=app_project.root, dry_run=True,
                                alert_sinks=()) for f in r.findings]
    record_ack(finding.id, "7d", "known", "alice", project_dir=app_project.root,
               now=dt.datetime.now(dt.timezone.utc))
    path = app_project.root / ACKS_FILE
    _flip(path)
    sink = MemorySink()
    results = run(["app"], project_dir=app_project.root, alert_sinks=[sink])
    [error] = [r.error for r in results if r.error]
    assert f"`{path}` line 1 is not UTF-8 text" in error
    assert "as if nothing were acknowledged" in error
    assert [f.id for f in sink.drift] == [finding.id]
    proc = app_project.cli("validate")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr + proc.stdout
    assert f"`{path}` line 1 is not UTF-8 text" in proc.stdout + proc.stderr
    with pytest.raises(Exception, match="line 1 is not UTF-8 text"):
        ack_problems(str(app_project.root), NOW)
