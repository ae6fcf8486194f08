"""The finding index across sweeps: `reconcile` (not a dry run) appends each sweep, a dry run
and `report` only read it, and the report shows each finding's first/last sighting and the
findings per day."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dlt_contract_ops.core.history import FOLD_SLACK_DAYS, RAW_DAYS, Seen
from dlt_contract_ops.history.index import index_file, read_history, read_sweeps, record_sweep
from tests.projects import Project


def _index() -> list[Path]:
    return sorted(Path(os.environ["DLT_DATA_DIR"]).glob("contract_ops/findings/*.sweeps.jsonl"))


def test_sweeps_are_recorded_by_reconcile_and_shown_by_the_report(drifted: Project) -> None:
    dry = drifted.cli("reconcile", "--all", "--dry-run", "--include-removal")
    assert dry.returncode == 0, dry.stderr
    assert _index() == []  # a dry run records nothing
    for _ in range(2):
        drifted.cli("reconcile", "--all", "--include-removal")
    [index] = _index()
    lines = [json.loads(line) for line in index.read_text().splitlines()]
    assert len(lines) == 2
    doc = json.loads(drifted.cli("reconcile", "--all", "--dry-run", "--include-removal",
                                 "--format", "json").stdout)
    ids = [f["id"] for r in doc["results"] for f in r["findings"]]
    assert ids
    assert all(sorted(line["ids"]) == sorted(ids) for line in lines)

    out = drifted.root / "report.html"
    proc = drifted.cli("report", "--html", str(out))
    assert out.exists(), proc.stderr
    assert len(index.read_text().splitlines()) == 2  # the report only read the index
    page = out.read_text(encoding="utf-8")
    for finding_id in ids:
        block = page[page.index(f"id {finding_id}"):]
        assert re.match(r"id \w+</span></div>\n(<div class=\"ack.*\n)?"
                        r"<div class=\"muted\">Seen in 2 sweep\(s\): first ", block), block[:300]
    assert 'class="chart timeline"' in page
    assert "(2 sweep(s) recorded in the finding index)" in page


def test_a_line_cut_short_is_skipped_and_does_not_swallow_the_next(tmp_path: Path) -> None:
    project = str(tmp_path)
    at = datetime(2026, 5, 1, tzinfo=timezone.utc)
    record_sweep(project, ["a"], at)
    path = index_file(project)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"at": "2026-05-01T01:00:00+00:00", "ids": ["b"')  # a crash mid-write
    record_sweep(project, ["c", "c"], at.replace(hour=2))
    history = read_history(project, at.replace(hour=3))
    assert history.sweeps == 2
    assert sorted(history.seen) == ["a", "c"]
    assert history.seen["c"].sweeps == 1


def test_a_line_that_is_not_utf8_loses_only_itself(drifted: Project) -> None:
    """One flipped byte in the index: `report` warns naming the file and line and shows every
    other sweep (it showed "No sweep recorded yet"), and later sweeps are still recorded."""
    for _ in range(2):
        drifted.cli("reconcile", "--all")
    [index] = _index()
    data = index.read_bytes()
    index.write_bytes(data[:3] + b"\xff" + data[4:])  # line 1, inside its `"at"`
    assert drifted.cli("reconcile", "--all").returncode == 0  # a third sweep, recorded
    out = drifted.root / "report.html"
    proc = drifted.cli("report", "--html", str(out))
    assert out.exists(), proc.stderr
    page = out.read_text(encoding="utf-8")
    assert "(2 sweep(s) recorded in the finding index)" in page
    assert "No sweep recorded yet" not in page
    [warning] = [x for x in proc.stderr.splitlines() if "not UTF-8" in x]
    assert f"`{index}` line 1 is not UTF-8 text: skipped" in warning


def _daily(start: datetime, days: int) -> list[tuple[datetime, list[str]]]:
    """One sweep a day: `steady` always, `old` in the first 30 days only, `new` in the last 5."""
    out = []
    for d in range(days):
        at = start + timedelta(days=d)
        out.append((at, ["steady", *(["old"] if d < 30 else []),
                         *(["new"] if d >= days - 5 else [])]))
    return out


def test_two_years_of_sweeps_fold_into_three_months_of_lines(tmp_path: Path) -> None:
    """The index keeps its recent sweeps as lines and folds older ones into one summary: the
    history read back is what the sweeps say, a finding unseen for `FORGET_DAYS` is gone."""
    project = str(tmp_path)
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    sweeps = _daily(start, 730)
    for at, ids in sweeps:
        record_sweep(project, ids, at)
    now = sweeps[-1][0]
    lines = index_file(project).read_text().splitlines()
    assert json.loads(lines[0]).keys() == {"folded"}
    # the folded line, then at most one sweep a day for RAW_DAYS + FOLD_SLACK_DAYS, both ends
    assert len(lines) - 1 <= RAW_DAYS + FOLD_SLACK_DAYS + 1
    history = read_history(project, now)
    assert history.sweeps == 730
    assert history.seen["steady"] == Seen(start, now, 730)
    assert history.seen["new"] == Seen(now - timedelta(days=4), now, 5)
    assert "old" not in history.seen  # last seen 700 days before: forgotten
    assert [n for _, n in history.per_day][-5:] == [2, 2, 2, 2, 2]


FOLD_CRASH = """
import os, sys
from datetime import datetime, timezone
from dlt_contract_ops.history import index
os.replace = lambda *a: os._exit(9)  # die between the folded copy and the swap
index.record_sweep(sys.argv[1], ["late"], datetime.fromisoformat(sys.argv[2]))
"""


def test_a_crash_while_folding_loses_no_sweep(tmp_path: Path) -> None:
    project = str(tmp_path)
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    for at, ids in _daily(start, RAW_DAYS + FOLD_SLACK_DAYS):
        record_sweep(project, ids, at)
    due = start + timedelta(days=RAW_DAYS + FOLD_SLACK_DAYS + 1)
    proc = subprocess.run([sys.executable, "-c", FOLD_CRASH, project, due.isoformat()],
                          env=os.environ, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    history = read_history(project, due)
    assert history.sweeps == RAW_DAYS + FOLD_SLACK_DAYS + 1  # the appended sweep is there
    assert history.seen["late"].sweeps == 1
    assert "folded" not in json.loads(index_file(project).read_text().splitlines()[0])
    record_sweep(project, ["late"], due + timedelta(hours=1))  # the next append folds
    lines = index_file(project).read_text().splitlines()
    assert json.loads(lines[0]).keys() == {"folded"}
    assert read_history(project, due).sweeps == RAW_DAYS + FOLD_SLACK_DAYS + 2


def test_a_fold_keeps_the_detectors_each_kept_line_ran(tmp_path: Path) -> None:
    """Each line names the detectors its sweep ran (`core.history.Sweep.detectors`); a line
    of an older version names none, and stays so: what the report compares a finding with
    is read the same after a fold."""
    project = str(tmp_path)
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    days = RAW_DAYS + FOLD_SLACK_DAYS + 2
    for d in range(days):  # an older version's line every other day
        record_sweep(project, ["x"], start + timedelta(days=d), ["shop"],
                     ("additive", "removal") if d % 2 else None)
    lines = index_file(project).read_text().splitlines()
    assert json.loads(lines[0]).keys() == {"folded"}  # it did fold
    _, kept = read_sweeps(project, start + timedelta(days=days))
    assert len(kept) == len(lines) - 1
    assert {(s.at - start).days % 2: s.detectors for s in kept} == {
        0: None, 1: ("additive", "removal")}
