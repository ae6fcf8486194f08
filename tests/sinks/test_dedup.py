"""Dedup across runs: the rule, the state file, concurrent runs, and the emitter's use."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.settings import project_context
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.findings import DriftFinding
from dlt_contract_ops.sinks.dedup import (
    AlertMark,
    DedupStore,
    decide,
    default_state_file,
    finding_key,
    load_dedup_settings,
    parse_duration,
    recording_alerts,
)
from dlt_contract_ops.sinks.emitter import Emitter
from tests.projects import Project
from tests.sinks.conftest import make_finding
from tests.sinks.test_emitter import Recording

DAY = 86400.0


@pytest.mark.parametrize(
    ("entry", "digest", "now", "expected"),
    [
        (None, "d", 0.0, AlertMark("new", "first")),
        ({"digest": "d", "last_alerted": 0.0}, "d", 10.0, AlertMark("repeat", "unchanged")),
        ({"digest": "d", "last_alerted": 0.0}, "d", DAY - 1, AlertMark("repeat", "unchanged")),
        ({"digest": "d", "last_alerted": 0.0}, "d", DAY, AlertMark("new", "realert")),
        ({"digest": "old", "last_alerted": 0.0}, "d", 10.0, AlertMark("new", "changed")),
        ({"digest": "d"}, "d", 10.0, AlertMark("new", "realert")),  # a damaged entry
        ({"digest": "d", "last_alerted": "yesterday"}, "d", 10.0, AlertMark("new", "realert")),
    ],
)
def test_decide(entry: dict[str, Any] | None, digest: str, now: float, expected: AlertMark) -> None:
    assert decide(entry, digest, now, DAY) == expected


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(86400, 86400.0), (90.5, 90.5), ("24h", 86400.0), ("90m", 5400.0), ("1d", 86400.0),
     ("1h30m", 5400.0), ("45s", 45.0), ("3600", 3600.0), (" 2 h ", 7200.0), ("0", 0.0)],
)
def test_parse_duration(value: object, seconds: float) -> None:
    assert parse_duration(value, "contract_ops.dedup.realert_after") == seconds


@pytest.mark.parametrize("value", ["soon", "24x", "h", "-1", -5, True, "1h junk", None])
def test_parse_duration_rejects(value: object) -> None:
    message = r"`contract_ops\.dedup\.realert_after` must be a duration"
    with pytest.raises(ConfigError, match=message):
        parse_duration(value, "contract_ops.dedup.realert_after")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_new_repeat_changed_realert(tmp_path: Path) -> None:
    clock = Clock()
    store = DedupStore(tmp_path / "state.json", DAY, clock=clock)
    finding = make_finding()
    assert store.claim(finding) == AlertMark("new", "first")
    clock.now += 3600
    assert store.claim(finding) == AlertMark("repeat", "unchanged")
    # samples and first_seen move every run: still the same alert
    moved = make_finding(samples={}, first_seen=None)
    assert store.claim(moved) == AlertMark("repeat", "unchanged")
    # another live type for the same columns: changed
    changed = make_finding(column_types={"payload_size": "DOUBLE", "Straße-Nr": "VARCHAR"})
    assert store.claim(changed) == AlertMark("new", "changed")
    assert store.claim(changed) == AlertMark("repeat", "unchanged")
    # another column set is another key: new
    assert store.claim(make_finding(columns=["payload_size"])) == AlertMark("new", "first")
    # another drift type on the same columns: new
    assert store.claim(make_finding(drift_type="removal")) == AlertMark("new", "first")
    clock.now += DAY
    assert store.claim(changed) == AlertMark("new", "realert")
    assert store.check(changed) == AlertMark("repeat", "unchanged")


def test_state_file_shape_and_pruning(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "state.json"
    store = DedupStore(path, DAY, clock=clock)
    old, fresh = make_finding(resource="old"), make_finding(resource="fresh")
    store.claim(old)
    clock.now += DAY + 1
    store.claim(fresh)
    doc = json.loads(path.read_text())
    assert doc["format_version"] == 1
    # the old entry would alert again anyway: it is dropped, the file stays small
    assert list(doc["alerts"]) == [finding_key(fresh)]
    entry = doc["alerts"][finding_key(fresh)]
    assert entry["columns"] == ["payload_size", "Straße-Nr"]
    assert json.loads(finding_key(fresh)) == ["shop", "fresh", "additive",
                                              ["payload_size", "Straße-Nr"]]
    assert not list(tmp_path.glob(".state.json.*.tmp"))


def test_check_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    store = DedupStore(path, DAY)
    assert store.check(make_finding()) == AlertMark("new", "first")
    assert not path.exists()


def test_corrupt_state_is_set_aside_and_alerting_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("{not json")
    store = DedupStore(path, DAY)
    assert store.claim(make_finding()) == AlertMark("new", "first")
    assert (tmp_path / "state.json.corrupt").read_text() == "{not json"
    assert store.claim(make_finding()) == AlertMark("repeat", "unchanged")


def _claim_many(path: str, resources: list[str], start: Any, out: Any) -> None:
    store = DedupStore(Path(path), DAY)
    start.wait()
    for r in resources:
        out.put((os.getpid(), r, store.claim(make_finding(resource=r)).status))


def _race(path: Path, per_process: list[list[str]]) -> list[tuple[int, str, str]]:
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_claim_many, args=(str(path), rs, start, out))
             for rs in per_process]
    for p in procs:
        p.start()
    start.set()
    results = [out.get(timeout=60) for _ in range(sum(len(rs) for rs in per_process))]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    return results


def test_concurrent_runs_alert_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    results = _race(path, [["same"]] * 8)
    assert sorted(status for _, _, status in results) == ["new"] + ["repeat"] * 7


def test_concurrent_runs_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    per_process = [[f"p{p}-r{i}" for i in range(10)] for p in range(6)]
    results = _race(path, per_process)
    assert {status for _, _, status in results} == {"new"}
    alerts = json.loads(path.read_text())["alerts"]
    assert sorted(json.loads(k)[1] for k in alerts) == sorted(r for rs in per_process for r in rs)


# -- settings ------------------------------------------------------------------------------


def test_default_location_is_per_project_in_the_dlt_data_dir(
    project: Project, tmp_path: Path
) -> None:
    project.config("[runtime]\n")
    with project_context(project.root):
        settings = load_dedup_settings()
    expected = default_state_file(project.root, str(tmp_path / "_dlt_data"))
    assert settings.state_file == expected
    assert expected.parent == tmp_path / "_dlt_data" / "contract_ops" / "alert_state"
    assert expected.name.startswith("project-")
    assert expected.suffix == ".json"
    assert default_state_file(tmp_path / "other" / "project", "/d") != default_state_file(
        project.root, "/d"
    )
    assert (settings.enabled, settings.realert_after) == (True, DAY)


def test_settings_from_config(project: Project) -> None:
    project.config('[contract_ops.dedup]\nrealert_after = "2h"\nstate_file = "state/alerts.json"\n'
                   "enabled = false\n")
    with project_context(project.root):
        settings = load_dedup_settings()
    assert settings.realert_after == 7200.0
    assert settings.state_file == project.root / "state" / "alerts.json"
    assert settings.enabled is False


def test_bad_settings_name_the_key(project: Project) -> None:
    project.config('[contract_ops.dedup]\nrealert_after = "tomorrow"\n')
    with project_context(project.root), pytest.raises(ConfigError, match="realert_after"):
        load_dedup_settings()


# -- the emitter with dedup ----------------------------------------------------------------


def _emit(
    findings: list[DriftFinding], store: DedupStore, *, dry_run: bool = False,
    no_sinks: bool = False,
) -> Recording:
    sink = Recording()
    emitter = Emitter([] if no_sinks else [("r", sink)], dedup=store, dry_run=dry_run)
    for f in findings:
        emitter.drift(f)
    emitter.flush(1)
    return sink


def test_emitter_sends_new_and_suppresses_repeats(tmp_path: Path) -> None:
    store = DedupStore(tmp_path / "s.json", DAY)
    a, b = make_finding(resource="a"), make_finding(resource="b")
    with recording_alerts() as first:
        assert [f.resource for f in _emit_with_active([a], store).drift] == ["a"]
    assert dict(first) == {a.key: "new"}
    with recording_alerts() as second:
        assert [f.resource for f in _emit_with_active([a, b], store).drift] == ["b"]
    assert dict(second) == {a.key: "repeat", b.key: "new"}
    assert second.mark(a) == AlertMark("repeat", "unchanged")


def _emit_with_active(findings: list[DriftFinding], store: DedupStore) -> Recording:
    from dlt_contract_ops.sinks.dedup import active_ledger

    sink = Recording()
    emitter = Emitter([("r", sink)], dedup=store, ledger=active_ledger())
    for f in findings:
        emitter.drift(f)
    return sink


def test_dry_run_and_no_sinks_mark_but_never_record(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    store = DedupStore(path, DAY)
    dry = _emit([make_finding()], store, dry_run=True)
    assert dry.drift == []
    assert not path.exists()
    _emit([make_finding()], store, no_sinks=True)
    assert not path.exists()
    assert [f.resource for f in _emit([make_finding()], store).drift] == ["Order Items"]
    assert path.exists()


def test_no_dedup_sends_everything_and_marks_nothing(project: Project) -> None:
    project.config("[runtime]\n")
    with project_context(project.root), recording_alerts() as alerts:
        for _ in range(2):
            emitter = Emitter.from_names(["logging"], dedup=False)
            assert emitter.dedup is None
            emitter.drift(make_finding())
            emitter.flush(1)
    assert dict(alerts) == {}


def test_unwritable_state_alerts_anyway(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    store = DedupStore(blocker / "sub" / "state.json", DAY)  # a file where a folder must be
    with recording_alerts() as alerts:
        sink = _emit_with_active([make_finding(), make_finding()], store)
    assert len(sink.drift) == 2
    assert {m.reason for m in (alerts.mark(make_finding()),) if m} == {"unchecked"}
    assert caplog.text.count("alerting without dedup for this run") == 1


def test_dry_run_does_not_claim_a_repeat_was_held_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = DedupStore(tmp_path / "s.json", DAY)
    _emit([make_finding()], store)  # alerted once: the next one is a repeat
    caplog.set_level(logging.INFO, logger="dlt_contract_ops")
    _emit([make_finding()], store, dry_run=True)
    assert not [r for r in caplog.records if "not sent again" in r.getMessage()]
    _emit([make_finding()], store)
    assert [r for r in caplog.records if "not sent again" in r.getMessage()]
