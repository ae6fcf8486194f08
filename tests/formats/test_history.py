"""The finding index across sweeps: `reconcile` (not a dry run) appends each sweep, a dry run
and `report` only read it, and the report shows each finding's first/last sighting and the
findings per day."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

from dlt_contract_ops.history.index import index_file, read_history, record_sweep
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
