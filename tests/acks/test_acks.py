"""Acknowledgements: an accepted drift is reported but neither alerted nor failing until its
expiry; a changed drift is not covered; the file survives concurrent `ack` commands."""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import os
from pathlib import Path

import pytest

from dlt_contract_ops.acks.service import ack_problems, record_ack
from dlt_contract_ops.acks.store import (
    ACKS_FILE,
    Ack,
    add_ack,
    load_book,
    parse_until,
    read_acks,
)
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.history.index import found_file, index_file, known_findings, record_run
from dlt_contract_ops.model.findings import DriftFinding, finding_id
from dlt_contract_ops.settings import project_context
from dlt_contract_ops.sinks.memory import MemorySink
from tests.projects import Project
from tests.sinks.app_project import add_column

#: the real clock (whole seconds): the CLI runs in this test judge acknowledgements by it too
NOW = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


@pytest.fixture
def sink() -> MemorySink:
    """The sink every `_sweep` of the test sends to (the emitter's own fan-out and dedup)."""
    return MemorySink()


def _sweep(project: Project, sink: MemorySink, now: dt.datetime = NOW) -> list[DriftFinding]:
    results = run(["app"], project_dir=project.root, removal={"now": now}, alert_sinks=[sink])
    assert all(r.error is None for r in results), [r.error for r in results]
    return [f for r in results for f in r.findings]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-31", dt.datetime(2026, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc)),
        ("14d", NOW + dt.timedelta(days=14)),
        ("PT12H", NOW + dt.timedelta(hours=12)),
        ("2026-12-02T08:00:00Z", dt.datetime(2026, 12, 2, 8, tzinfo=dt.timezone.utc)),
    ],
)
def test_until(text: str, expected: dt.datetime) -> None:
    assert parse_until(text, NOW) == expected


def test_until_rejects_nonsense() -> None:
    with pytest.raises(ConfigError, match="neither a date"):
        parse_until("next sprint", NOW)


def test_finding_id_is_stable_and_column_order_free() -> None:
    a = finding_id("app", "events", "additive", ["b", "a"])
    assert a == finding_id("app", "events", "additive", ["a", "b"])
    assert a != finding_id("app", "events", "additive", ["a", "b", "c"])
    assert a != finding_id("app", "events", "removal", ["a", "b"])
    assert len(a) == 12


#: an acknowledgements file exactly as 0.1.0 wrote it: its id is the one identity a finding
#: still has (`DriftFinding.id`: source, table, detector, sorted columns), spelled out here
_ACKS_0_1_0 = """\
# Acknowledged drift (dlt-contract-ops ack/unack). Commit this file: its history is the audit trail.
[[acks]]
id = "98d0d03472bc"
source = "shop"
table = "orders"
detector = "additive"
columns = ["a", "b"]
until = 2099-12-31T23:59:59Z
reason = "known"
by = "alice"
created = 2026-01-01T00:00:00Z
"""


def test_an_ack_file_written_by_0_1_0_still_covers_its_finding(tmp_path: Path) -> None:
    (tmp_path / ACKS_FILE).parent.mkdir(parents=True)
    (tmp_path / ACKS_FILE).write_text(_ACKS_0_1_0)
    finding = DriftFinding(drift_type="additive", source="shop", resource="Orders",
                           table="orders", columns=["b", "a"])
    book = load_book(tmp_path, NOW)
    assert finding.id == "98d0d03472bc"
    assert book.covers(finding.id)
    assert not book.covers(finding.model_copy(update={"columns": ["a"]}).id)


def test_ack_suppresses_alerts_and_fail_on_drift_until_expiry_then_alerts_once(
    app_project: Project, sink: MemorySink
) -> None:
    [finding] = _sweep(app_project, sink)
    assert [f.id for f in sink.drift] == [finding.id]
    assert not finding.acknowledged
    record_ack(finding.id, "7d", "known: payload size ships next sprint", "alice",
               project_dir=app_project.root, now=NOW)
    sink.drift.clear()
    [acked] = _sweep(app_project, sink, NOW + dt.timedelta(days=1))
    assert sink.drift == []  # reported, not alerted
    assert acked.acknowledged
    assert acked.ack is not None
    assert acked.ack["by"] == "alice"
    assert acked.ack["reason"] == "known: payload size ships next sprint"
    proc = app_project.cli("reconcile", "-s", "app", "--fail-on-drift", "--format", "json")
    assert proc.returncode == 0, proc.stderr  # the only finding is acknowledged
    doc = json.loads(proc.stdout)
    ack_doc = doc["results"][0]["findings"][0]["ack"]
    assert set(ack_doc) >= {"id", "until", "reason", "by", "created"}
    text = app_project.cli("reconcile", "-s", "app", "--dry-run").stdout
    assert "[acked until " in text
    assert "by alice" in text
    # after the expiry the drift alerts again, once, saying the acknowledgement expired
    [expired] = _sweep(app_project, sink, NOW + dt.timedelta(days=8))
    assert [f.id for f in sink.drift] == [finding.id]
    assert sink.drift[0].ack is not None
    assert sink.drift[0].ack["expired"] is True
    assert expired.ack is not None
    assert expired.ack["expired"] is True
    assert not expired.acknowledged
    # once: the next sweep holds the same expired drift back as a repeat
    sink.drift.clear()
    _sweep(app_project, sink, NOW + dt.timedelta(days=8, hours=1))
    assert sink.drift == []


def test_an_ack_for_two_columns_does_not_cover_a_third(
    app_project: Project, sink: MemorySink
) -> None:
    [finding] = _sweep(app_project, sink)
    record_ack(finding.id, "7d", "accepted", "bob", project_dir=app_project.root, now=NOW)
    add_column(app_project.root, "utm source")
    sink.drift.clear()
    [grown] = _sweep(app_project, sink, NOW + dt.timedelta(hours=1))
    assert grown.id != finding.id
    assert grown.ack is None
    assert [f.id for f in sink.drift] == [grown.id]  # the changed drift alerts


def test_unknown_id_needs_force(app_project: Project) -> None:
    with pytest.raises(ConfigError, match="No recent run found finding"):
        record_ack("0123456789ab", "7d", "why", "me", project_dir=app_project.root, now=NOW)
    entry, path = record_ack("0123456789ab", "7d", "expected", "me", force=True,
                             project_dir=app_project.root, now=NOW)
    assert path == app_project.root / ACKS_FILE
    assert [a.id for a in read_acks(path)[0]] == [entry.id]
    with pytest.raises(ConfigError, match="not a finding id"):
        record_ack("nope", "7d", "why", "me", project_dir=app_project.root, force=True)


def test_validate_rules(app_project: Project, sink: MemorySink) -> None:
    [finding] = _sweep(app_project, sink)
    path = app_project.root / ACKS_FILE
    record_ack(finding.id, "1d", "live", "a", project_dir=app_project.root, now=NOW)
    record_ack("0123456789ab", "1d", "gone", "b", force=True, project_dir=app_project.root,
               now=NOW)
    with path.open("a", encoding="utf-8") as fh:
        fh.write('\n[[acks]]\nid = "zz"\nreason = "x"\nby = "c"\n')
    with project_context(app_project.root) as pdir:
        rules = sorted(rule for rule, _ in ack_problems(pdir, NOW + dt.timedelta(hours=1)))
        later = sorted(rule for rule, _ in ack_problems(pdir, NOW + dt.timedelta(days=2)))
    assert rules == ["ack_malformed", "ack_orphaned"]
    assert later == ["ack_expired", "ack_expired", "ack_malformed"]


def _add_many(path: str, data_dir: str, worker: int) -> None:
    os.environ["DLT_DATA_DIR"] = data_dir
    for i in range(10):
        fid = f"{worker:02d}{i:02d}" + "0" * 8
        add_ack(Path(path), Ack(fid, NOW, "r", "w", NOW))


def test_concurrent_acks_lose_no_entry(tmp_path: Path) -> None:
    path = tmp_path / ".dlt" / "contract_ops_acks.toml"
    # forked writers start at once with everything imported (spawned ones spent seconds each
    # importing dlt first and so rarely overlapped); four real processes race on the lock
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(target=_add_many, args=(str(path), str(tmp_path / "data"), w))
        for w in range(4)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    acks, problems = read_acks(path)
    assert problems == []
    assert len({a.id for a in acks}) == 40


def test_validate_lists_ack_problems_with_the_file(app_project: Project, sink: MemorySink) -> None:
    [finding] = _sweep(app_project, sink)
    # `validate` judges expiry by the wall clock: acknowledge from now on
    record_ack("0123456789ab", "1d", "gone", "b", force=True, project_dir=app_project.root)
    proc = app_project.cli("validate", "--format", "json")
    doc = json.loads(proc.stdout)
    acks = [p for p in doc["problems"] if p["rule"].startswith("ack_")]
    assert [(p["rule"], p["file"]) for p in acks] == [("ack_orphaned", str(ACKS_FILE))]
    assert "0123456789ab" in acks[0]["message"]
    assert proc.returncode == 1
    assert finding.id not in acks[0]["message"]


def _found(source: str, table: str, columns: list[str]) -> DriftFinding:
    return DriftFinding(source=source, pipeline=source, resource=table, table=table,
                        drift_type="additive", columns=columns)


def _entry(f: DriftFinding) -> dict[str, object]:
    return {"source": f.source, "table": f.table, "detector": "additive",
            "columns": list(f.columns)}


def _where(known: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    """What each id stands for (its content left out)."""
    return {i: {k: e[k] for k in ("source", "table", "detector", "columns")}
            for i, e in known.items()}


def test_the_finding_index_is_written_only_when_it_learns_something(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / "data"))
    first = _found("app", "orders", ["x"])
    record_run(tmp_path, [first], sweep=False)  # a dry run: ids only, no sweep
    path = found_file(tmp_path)
    size = path.stat().st_size
    record_run(tmp_path, [first], sweep=False)  # the same finding again
    assert path.stat().st_size == size
    assert not index_file(tmp_path).exists()
    other = _found("app", "orders", ["x", "y"])
    record_run(tmp_path, [first, other], sweep=True)
    assert len(path.read_text().splitlines()) == 2  # appended: only what it learnt
    assert _where(known_findings(tmp_path)) == {first.id: _entry(first),
                                                other.id: _entry(other)}
    # and what each said: its content, the content's digest, a line for people
    assert known_findings(tmp_path)[other.id]["content"] == ["column `x`", "column `y`"]
    assert known_findings(tmp_path)[other.id]["summary"] == (
        "additive drift of `orders`: column `x`; column `y`")
    assert len(index_file(tmp_path).read_text().splitlines()) == 1  # the sweep's line


def test_an_id_index_of_an_older_version_keeps_its_acks(
    app_project: Project, sink: MemorySink
) -> None:
    """The id index before the found file (`<project>-<hash>.json`) is read, and the next
    sweep moves its ids into the finding index: an acknowledged id it alone knew is neither
    unknown to `ack` nor orphaned for `validate`."""
    [finding] = _sweep(app_project, sink)
    with project_context(app_project.root):
        folder = found_file(app_project.root).parent
        found_file(app_project.root).unlink()  # as an older version left it: no found file
        old = folder / found_file(app_project.root).name.replace(".found.jsonl", ".json")
    gone = "0123456789ab"
    entries = {finding.id: _entry(finding),
               gone: {"source": "app", "table": "legacy", "detector": "missing",
                      "columns": ["z"]}}
    old.write_text(json.dumps({"format_version": 1, "findings": entries}))
    entry, _ = record_ack(gone, "1d", "known", "bob", project_dir=app_project.root)
    assert (entry.table, entry.detector, entry.columns) == ("legacy", "missing", ("z",))
    _sweep(app_project, sink, NOW + dt.timedelta(hours=1))
    assert not old.exists()  # moved into the finding index
    with project_context(app_project.root):
        assert _where(known_findings(app_project.root)) == entries
    assert [r for r, _ in ack_problems(str(app_project.root))] == []  # not orphaned
