"""Dedup across runs: the rule, the two-phase state file, concurrent runs, settings, and the
emitter's use of it."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.settings import load_project_settings, project_context
from dlt_contract_ops.settings.project import default_state_file
from dlt_contract_ops.sinks.dedup import (
    PENDING_LEASE,
    AlertMark,
    DedupStore,
    decide,
    finding_digest,
    finding_key,
    legacy_key,
    overall,
)
from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sinks.lifecycle import OPEN_KEEP
from dlt_contract_ops.sinks.logging_sink import drift_line
from tests.projects import Project
from tests.sinks.conftest import make_finding
from tests.sinks.test_emitter import Recording

DAY = 86400.0
START = 1_000_000.0
SINK = ("r",)  # the one sink of most tests here; per-sink cases name theirs
#: the state-file key 0.1.0 wrote for `make_finding()`: (source, resource, drift type,
#: columns in their order) as a JSON array, spelled out so the old algorithm is pinned here
_KEY_0_1_0 = '["shop", "Order Items", "additive", ["payload_size", "Straße-Nr"]]'


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


class Clock:
    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _alerted(
    store: DedupStore, finding: DriftFinding, sinks: tuple[str, ...] = SINK
) -> AlertMark:
    """One run that sends `finding` and gets it delivered: reserve, then settle."""
    marks = store.reserve(finding, sinks)
    store.settle({s: [finding] for s, m in marks.items() if m.status == "new"}, {})
    return overall(marks)


def _alerts(path: Path) -> dict[str, Any]:
    alerts: dict[str, Any] = json.loads(path.read_text())["alerts"]
    return alerts


def test_new_repeat_changed_realert(tmp_path: Path) -> None:
    clock = Clock()
    store = DedupStore(tmp_path / "state.json", DAY, clock=clock)
    finding = make_finding()
    assert _alerted(store, finding) == AlertMark("new", "first")
    clock.now += 3600
    assert _alerted(store, finding) == AlertMark("repeat", "unchanged")
    # samples and first_seen move every run: still the same alert
    moved = make_finding(samples={}, first_seen=None)
    assert _alerted(store, moved) == AlertMark("repeat", "unchanged")
    # another live type for the same columns: changed
    changed = make_finding(column_types={"payload_size": "DOUBLE", "Straße-Nr": "VARCHAR"})
    assert _alerted(store, changed) == AlertMark("new", "changed")
    assert _alerted(store, changed) == AlertMark("repeat", "unchanged")
    # another column set is another key: new
    assert _alerted(store, make_finding(columns=["payload_size"])) == AlertMark("new", "first")
    # another drift type on the same columns: new
    assert _alerted(store, make_finding(drift_type="removal")) == AlertMark("new", "first")
    clock.now += DAY
    assert _alerted(store, changed) == AlertMark("new", "realert")
    assert store.check(changed, SINK) == {"r": AlertMark("repeat", "unchanged")}


def test_reserve_leaves_a_pending_claim_that_settle_turns_into_an_alert(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    clock = Clock()
    store = DedupStore(path, DAY, clock=clock)
    finding = make_finding()
    assert store.reserve(finding, SINK) == {"r": AlertMark("new", "first")}
    entry = _alerts(path)[finding_key(finding)]["sinks"]["r"]
    assert entry["pending"] == {"owner": f"{socket.gethostname()}:{os.getpid()}", "since": START}
    assert "last_alerted" not in entry
    # the same process asking again is not "in flight": its own claim does not block it
    assert store.reserve(finding, SINK) == {"r": AlertMark("new", "first")}
    clock.now += 5
    store.settle({"r": [finding]}, {})
    entry = _alerts(path)[finding_key(finding)]["sinks"]["r"]
    assert "pending" not in entry
    assert (entry["digest"], entry["first_alerted"], entry["last_alerted"]) == (
        finding_digest(finding), START + 5, START + 5
    )


@pytest.mark.parametrize(
    ("earlier", "then", "expected_next"),
    [
        # never delivered: the entry goes, as if never seen
        (None, {}, AlertMark("new", "first")),
        # a re-alert that failed is due again next run (its open record is kept: it may
        # still resolve)
        ("same", {"dt": DAY}, AlertMark("new", "realert")),
        # a changed finding that failed keeps the old digest: still "changed" next run
        ("other-type", {"dt": 3600}, AlertMark("new", "changed")),
    ],
)
def test_settle_undelivered_releases_the_claim(
    tmp_path: Path, earlier: str | None, then: dict[str, float], expected_next: AlertMark
) -> None:
    path = tmp_path / "state.json"
    clock = Clock()
    store = DedupStore(path, DAY, clock=clock)
    finding = make_finding()
    if earlier == "same":
        _alerted(store, finding)
    elif earlier == "other-type":
        _alerted(store, make_finding(column_types={"payload_size": "DOUBLE"}))
    before = _alerts(path) if path.exists() else {}
    clock.now += then.get("dt", 0.0)
    assert store.reserve(finding, SINK)["r"].status == "new"
    store.settle({}, {"r": [finding]})
    after = _alerts(path)
    key = finding_key(finding)
    if earlier is None:
        assert after == {}
    else:
        assert after == before
        assert "pending" not in after[key]["sinks"]["r"]
    assert store.reserve(finding, SINK) == {"r": expected_next}


def test_state_file_shape_and_pruning(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "state.json"
    store = DedupStore(path, DAY, clock=clock)
    old = make_finding(resource="old", table="old")
    fresh = make_finding(resource="fresh", table="fresh")
    _alerted(store, old)
    clock.now += DAY + 1
    _alerted(store, fresh)
    # an open alert past realert_after is kept: it may still resolve
    assert sorted(json.loads(path.read_text())["alerts"]) == sorted([old.id, fresh.id])
    clock.now += OPEN_KEEP - 2
    _alerted(store, fresh)
    doc = json.loads(path.read_text())
    assert doc["format_version"] == 3
    # the old entry is past what an open alert is kept for: dropped, the file stays small
    assert list(doc["alerts"]) == [finding_key(fresh)]
    entry = doc["alerts"][finding_key(fresh)]
    at = START + DAY + 1 + OPEN_KEEP - 2
    assert entry == {
        "source": "shop",
        "pipeline": "shop_pipeline",
        "resource": "fresh",
        "table": "fresh",
        "drift_type": "additive",
        "columns": ["payload_size", "Straße-Nr"],
        "sinks": {"r": {
            "digest": finding_digest(fresh),
            "first_alerted": START + DAY + 1,
            "last_alerted": at,
            "last_alerted_at": "1970-02-12T13:46:39+00:00",
            "content": ["column `Straße-Nr` VARCHAR", "column `payload_size` BIGINT"],
        }},
    }
    assert finding_key(fresh) == fresh.id
    assert not list(tmp_path.glob(".state.json.*.tmp"))


def test_a_pending_claim_is_never_pruned(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    clock = Clock()
    store = DedupStore(path, DAY, clock=clock)
    sending = make_finding(resource="sending", table="sending")
    store.reserve(sending, SINK)
    clock.now += DAY + 1
    _alerted(store, make_finding(resource="other", table="other"))  # a write that prunes
    assert "pending" in _alerts(path)[finding_key(sending)]["sinks"]["r"]


def test_check_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    store = DedupStore(path, DAY)
    assert store.check(make_finding(), SINK) == {"r": AlertMark("new", "first")}
    assert not path.exists()
    _alerted(store, make_finding())
    written = path.read_bytes()
    assert store.check(make_finding(), SINK) == {"r": AlertMark("repeat", "unchanged")}
    other = make_finding(resource="other", table="other")
    assert store.check(other, SINK) == {"r": AlertMark("new", "first")}
    # no sink named (alert_sinks = []): decided for each sink the state knows
    assert store.check(make_finding()) == {"r": AlertMark("repeat", "unchanged")}
    assert path.read_bytes() == written


def test_corrupt_state_is_set_aside_and_alerting_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.json"
    path.write_text("{not json")
    store = DedupStore(path, DAY)
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        assert _alerted(store, make_finding()) == AlertMark("new", "first")
    assert (tmp_path / "state.json.corrupt").read_text() == "{not json"
    [warning] = [r for r in caplog.records if "unreadable" in r.getMessage()]
    assert warning.levelno == logging.WARNING
    assert f"moved to `{tmp_path / 'state.json.corrupt'}`" in warning.getMessage()
    assert _alerted(store, make_finding()) == AlertMark("repeat", "unchanged")

    # a second corruption is kept beside the first, never over it
    path.write_text("[1, 2]")
    assert _alerted(store, make_finding()) == AlertMark("new", "first")
    assert (tmp_path / "state.json.corrupt").read_text() == "{not json"
    assert (tmp_path / "state.json.corrupt.1").read_text() == "[1, 2]"
    path.write_text("")
    assert store.reserve(make_finding(), SINK) == {"r": AlertMark("new", "first")}
    assert (tmp_path / "state.json.corrupt.2").read_text() == ""


def test_check_on_corrupt_state_raises_and_leaves_it(tmp_path: Path) -> None:
    """A dry run must not move the user's file: the emitter turns this into "unchecked"."""
    from dlt_contract_ops.statefile import StateFileError

    path = tmp_path / "state.json"
    path.write_text("{not json")
    with pytest.raises(StateFileError, match="not valid JSON"):
        DedupStore(path, DAY).check(make_finding(), SINK)
    assert path.read_text() == "{not json"
    assert not (tmp_path / "state.json.corrupt").exists()


# -- pending claims of other processes -----------------------------------------------------


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


@pytest.mark.parametrize(
    ("owner", "age", "expected"),
    [
        # a live process on this host is sending it right now
        ("parent", 0.0, AlertMark("repeat", "in_flight")),
        # ... unless its claim is older than the lease
        ("parent", PENDING_LEASE, AlertMark("new", "first")),
        # a killed run's claim on this host stops counting at once
        ("dead", 0.0, AlertMark("new", "first")),
        # another host cannot be asked: the claim stands for the lease
        ("elsewhere", PENDING_LEASE - 1, AlertMark("repeat", "in_flight")),
        ("elsewhere", PENDING_LEASE, AlertMark("new", "first")),
        ("garbage", 0.0, AlertMark("repeat", "in_flight")),
    ],
)
@pytest.mark.parametrize("fmt", [1, 2])
def test_pending_claim_of_another_process(
    tmp_path: Path, owner: str, age: float, expected: AlertMark, fmt: int
) -> None:
    host = socket.gethostname()
    owners = {
        "parent": f"{host}:{os.getppid()}",
        "dead": f"{host}:{_dead_pid()}",
        "elsewhere": "another-host.invalid:4242",
        "garbage": "no pid here",
    }
    finding = make_finding()
    path = tmp_path / "state.json"
    claim = {"pending": {"owner": owners[owner], "since": START}}
    path.write_text(json.dumps({
        "format_version": fmt,
        # the key 0.1.0 wrote (formats 1 and 2)
        "alerts": {_KEY_0_1_0: {
            "source": "shop", "resource": "Order Items", "drift_type": "additive",
            "columns": list(finding.columns),
            # format 1 had one claim per finding, which stands for every sink
            **(claim if fmt == 1 else {"sinks": {"r": claim}}),
        }},
    }))
    before = path.read_text()
    store = DedupStore(path, DAY, clock=Clock(START + age))
    assert store.reserve(finding, SINK) == {"r": expected}
    if expected.status == "new":  # the claim is taken over
        records = _alerts(path)[finding_key(finding)]["sinks"]
        assert records["r"]["pending"] == {"owner": f"{host}:{os.getpid()}", "since": START + age}
    else:  # left to its owner: the file is not even rewritten
        assert path.read_text() == before


def test_a_claim_holds_only_for_its_sink(tmp_path: Path) -> None:
    """Another live run sends the finding to the webhook; the log already has it."""
    path = tmp_path / "state.json"
    store = DedupStore(path, DAY, clock=Clock())
    finding = make_finding()
    _alerted(store, finding, ("logging",))
    doc = json.loads(path.read_text())
    doc["alerts"][finding_key(finding)]["sinks"]["webhook"] = {
        "pending": {"owner": f"{socket.gethostname()}:{os.getppid()}", "since": START}
    }
    path.write_text(json.dumps(doc))
    marks = store.reserve(finding, ("logging", "webhook", "sentry"))
    assert marks == {
        "logging": AlertMark("repeat", "unchanged"),
        "webhook": AlertMark("repeat", "in_flight"),
        "sentry": AlertMark("new", "first"),  # a sink added since: news to it
    }
    assert overall(marks) == AlertMark("new", "first")
    store.settle({}, {"sentry": [finding]})
    records = _alerts(path)[finding_key(finding)]["sinks"]
    assert sorted(records) == ["logging", "webhook"]  # the other run's claim is left alone
    assert overall(store.reserve(finding, ("logging", "webhook"))) == AlertMark(
        "repeat", "in_flight"
    )


# -- a state written by format 1 (one record per finding, before per-sink delivery) --------


def _format_1(path: Path, finding: DriftFinding, digest: str | None = None) -> None:
    """The state file exactly as the previous version wrote it after alerting `finding`."""
    path.write_text(json.dumps({"format_version": 1, "alerts": {legacy_key(finding): {
        "source": finding.source, "resource": finding.resource,
        "drift_type": finding.drift_type, "columns": list(finding.columns),
        "digest": digest or finding_digest(finding),
        "first_alerted": START, "last_alerted": START,
        "last_alerted_at": "1970-01-12T13:46:40+00:00",
    }}}, indent=1, sort_keys=True))


def test_a_format_1_alert_counts_as_settled_for_every_sink(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    _format_1(path, finding)
    written = path.read_bytes()
    clock = Clock(START + 3600)
    store = DedupStore(path, DAY, clock=clock)
    sinks = ("logging", "webhook")
    assert store.reserve(finding, sinks) == dict.fromkeys(sinks, AlertMark("repeat", "unchanged"))
    assert path.read_bytes() == written  # a decision alone does not rewrite the file
    # due for a re-alert: the log takes it, the webhook refuses it
    clock.now = START + DAY
    assert store.reserve(finding, sinks) == dict.fromkeys(sinks, AlertMark("new", "realert"))
    store.settle({"logging": [finding]}, {"webhook": [finding]})
    doc = json.loads(path.read_text())
    assert doc["format_version"] == 3
    # the format 1 record is kept like any open alert; the webhook's copy is still due
    assert sorted(doc["alerts"][finding_key(finding)]["sinks"]) == ["*", "logging"]
    assert store.reserve(finding, sinks) == {
        "logging": AlertMark("repeat", "unchanged"), "webhook": AlertMark("new", "realert")
    }


def test_a_changed_finding_over_a_format_1_alert(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    _format_1(path, finding, digest="older-types")
    store = DedupStore(path, DAY, clock=Clock(START + 60))
    assert _alerted(store, finding, ("logging", "webhook")) == AlertMark("new", "changed")
    records = _alerts(path)[finding_key(finding)]["sinks"]
    assert sorted(records) == ["*", "logging", "webhook"]  # `*` until it ages out
    # the alert dates from the first time the previous version sent it
    assert records["webhook"]["first_alerted"] == START
    assert records["webhook"]["last_alerted"] == START + 60
    assert _alerted(store, finding, ("logging", "webhook")) == AlertMark("repeat", "unchanged")


# -- concurrent runs (real processes) -------------------------------------------------------


def _reserve_many(path: str, resources: list[str], start: Any, out: Any) -> None:
    store = DedupStore(Path(path), DAY)
    start.wait()
    for r in resources:
        finding = make_finding(resource=r, table=r)
        out.put((os.getpid(), r, _alerted(store, finding, ("logging", "webhook")).status))


def _race(path: Path, per_process: list[list[str]]) -> list[tuple[int, str, str]]:
    # forked from this warm process: each run starts at once with everything imported (a
    # spawned one spent seconds importing dlt first); real processes racing on the real lock
    ctx = multiprocessing.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_reserve_many, args=(str(path), rs, start, out))
             for rs in per_process]
    for p in procs:
        p.start()
    start.set()
    results = [out.get(timeout=120) for _ in range(sum(len(rs) for rs in per_process))]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return results


def test_concurrent_runs_alert_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    results = _race(path, [["same"]] * 8)
    assert len({pid for pid, _, _ in results}) == 8
    assert sorted(status for _, _, status in results) == ["new"] + ["repeat"] * 7
    [entry] = _alerts(path).values()
    assert sorted(entry["sinks"]) == ["logging", "webhook"]
    assert not [r for r in entry["sinks"].values() if "pending" in r]
    assert entry["resource"] == "same"


def test_concurrent_runs_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    per_process = [[f"p{p}-r{i}" for i in range(10)] for p in range(6)]
    results = _race(path, per_process)
    assert {status for _, _, status in results} == {"new"}
    alerts = _alerts(path)
    resources = sorted(e["resource"] for e in alerts.values())
    assert resources == sorted(r for rs in per_process for r in rs)
    assert all(
        sorted(e["sinks"]) == ["logging", "webhook"]
        and all("last_alerted" in r and "pending" not in r for r in e["sinks"].values())
        for e in alerts.values()
    )


# -- settings --------------------------------------------------------------------------------


def test_default_location_is_per_project_in_the_dlt_data_dir(
    project: Project, tmp_path: Path
) -> None:
    project.config("[runtime]\n")
    with project_context(project.root):
        settings = load_project_settings().dedup
        emitter = Emitter.from_names(["logging"])
    assert (settings.enabled, settings.realert_after, settings.state_file) == (True, DAY, None)
    expected = default_state_file(project.root, str(tmp_path / "_dlt_data"))
    assert emitter.dedup is not None
    assert emitter.dedup.path == expected
    assert emitter.dedup.realert_after == DAY
    assert expected.parent == tmp_path / "_dlt_data" / "contract_ops" / "alert_state"
    assert expected.name.startswith("project-")
    assert expected.suffix == ".json"
    assert default_state_file(tmp_path / "other" / "project", "/d") != default_state_file(
        project.root, "/d"
    )


def test_settings_from_config(project: Project) -> None:
    project.config('[contract_ops.dedup]\nrealert_after = "2h"\nstate_file = "state/alerts.json"\n'
                   "enabled = false\n")
    with project_context(project.root):
        settings = load_project_settings().dedup
        emitter = Emitter.from_names(["logging"], dedup_settings=settings)
    assert settings.realert_after == 7200.0
    assert settings.state_file == project.root / "state" / "alerts.json"
    assert settings.enabled is False
    assert emitter.dedup is None


def test_enabled_settings_reach_the_store(project: Project) -> None:
    project.config('[contract_ops.dedup]\nrealert_after = "90m"\nstate_file = "alerts.json"\n')
    with project_context(project.root):
        emitter = Emitter.from_names(["logging"], dedup_settings=load_project_settings().dedup)
    assert emitter.dedup is not None
    assert (emitter.dedup.path, emitter.dedup.realert_after) == (
        project.root / "alerts.json", 5400.0
    )


@pytest.mark.parametrize("value", ['"tomorrow"', '"-1h"', "true"])
def test_bad_realert_after_names_the_key(project: Project, value: str) -> None:
    project.config(f"[contract_ops.dedup]\nrealert_after = {value}\n")
    with project_context(project.root), pytest.raises(ConfigError) as caught:
        load_project_settings()
    assert "`realert_after` in `[contract_ops.dedup]`" in str(caught.value)
    assert "CONTRACT_OPS__DEDUP__REALERT_AFTER" in str(caught.value)


# -- the emitter with dedup ------------------------------------------------------------------


def _emit(
    findings: list[DriftFinding], store: DedupStore, *, dry_run: bool = False,
    no_sinks: bool = False,
) -> tuple[Emitter, Recording]:
    sink = Recording()
    emitter = Emitter([] if no_sinks else [("r", sink)], dedup=store, dry_run=dry_run)
    for f in findings:
        emitter.drift(f)
    emitter.flush(1)
    return emitter, sink


def test_emitter_sends_new_and_suppresses_repeats(tmp_path: Path) -> None:
    store = DedupStore(tmp_path / "s.json", DAY)
    a, b = make_finding(resource="a", table="a"), make_finding(resource="b", table="b")
    first, sink = _emit([a], store)
    assert [f.resource for f in sink.drift] == ["a"]
    assert dict(first.report.ledger) == {a.id: "new"}
    second, sink = _emit([a, b], store)
    assert [f.resource for f in sink.drift] == ["b"]
    assert dict(second.report.ledger) == {a.id: "repeat", b.id: "new"}
    assert second.report.ledger.mark(a) == AlertMark("repeat", "unchanged")
    assert second.report.ledger.mark(b) == AlertMark("new", "first")
    assert second.report.undelivered == []
    assert sorted(e["resource"] for e in _alerts(tmp_path / "s.json").values()) == ["a", "b"]


def test_dry_run_and_no_sinks_mark_but_never_record(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    store = DedupStore(path, DAY)
    dry, dry_sink = _emit([make_finding()], store, dry_run=True)
    assert dry_sink.drift == []
    assert dict(dry.report.ledger) == {make_finding().id: "new"}
    assert not path.exists()
    none, _ = _emit([make_finding()], store, no_sinks=True)
    assert dict(none.report.ledger) == {make_finding().id: "new"}
    assert not path.exists()
    _, sink = _emit([make_finding()], store)
    assert [f.resource for f in sink.drift] == ["Order Items"]
    assert list(_alerts(path)) == [finding_key(make_finding())]
    # and once alerted, a dry run reports the repeat without touching the file
    written = path.read_bytes()
    dry, _ = _emit([make_finding()], store, dry_run=True)
    assert dict(dry.report.ledger) == {make_finding().id: "repeat"}
    assert path.read_bytes() == written


def test_no_dedup_sends_every_time_and_marks_nothing(
    project: Project, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project.config("[runtime]\n")
    ledgers = []
    with project_context(project.root), caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        for _ in range(2):
            emitter = Emitter.from_names(["logging"], dedup=False)
            assert emitter.dedup is None
            emitter.drift(make_finding())
            emitter.flush(1)
            ledgers.append(dict(emitter.report.ledger))
    sent = [r.getMessage() for r in caplog.records if r.name == "dlt_contract_ops.alerts"]
    assert sent == [
        drift_line(make_finding())
    ] * 2
    assert ledgers == [{}, {}]
    assert not (tmp_path / "_dlt_data" / "contract_ops").exists()


def test_unwritable_state_alerts_anyway(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    store = DedupStore(blocker / "sub" / "state.json", DAY)  # a file where a folder must be
    a, b = make_finding(resource="a", table="a"), make_finding(resource="b", table="b")
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        emitter, sink = _emit([a, b, a], store)
    assert [f.resource for f in sink.drift] == ["a", "b", "a"]
    assert [emitter.report.ledger.mark(f) for f in (a, b)] == [AlertMark("new", "unchecked")] * 2
    assert emitter.report.undelivered == []
    assert caplog.text.count("alerting without dedup for this run") == 1
    assert "not updated" not in caplog.text  # settle is not attempted on a broken store
    # with alert_sinks = [] the mark still says what a run with sinks would do
    none, _ = _emit([a], DedupStore(store.path, DAY), no_sinks=True)
    assert none.report.ledger.mark(a) == AlertMark("new", "unchecked")


def test_dry_run_does_not_claim_a_repeat_was_held_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = DedupStore(tmp_path / "s.json", DAY)
    _emit([make_finding()], store)  # alerted once: the next one is a repeat
    caplog.set_level(logging.INFO, logger="dlt_contract_ops")
    _emit([make_finding()], store, dry_run=True)
    assert not [r for r in caplog.records if "not sent again" in r.getMessage()]
    _emit([make_finding()], store)
    [held] = [r.getMessage() for r in caplog.records if "not sent again" in r.getMessage()]
    assert "already alerted within 24h" in held


# -- a state written by 0.1.0 (format 2, keyed by (source, resource, drift type, columns)) --


def test_the_0_1_0_key_is_still_computed_the_old_way() -> None:
    assert legacy_key(make_finding()) == _KEY_0_1_0
    assert finding_key(make_finding()) == make_finding().id != _KEY_0_1_0


def test_a_0_1_0_state_file_still_reads_and_moves_under_the_finding_id(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    record = {"digest": finding_digest(finding), "first_alerted": START, "last_alerted": START,
              "last_alerted_at": "1970-01-12T13:46:40+00:00"}
    path.write_text(json.dumps({"format_version": 2, "alerts": {_KEY_0_1_0: {
        "source": "shop", "resource": "Order Items", "drift_type": "additive",
        "columns": ["payload_size", "Straße-Nr"], "sinks": {"logging": record},
    }}}, ensure_ascii=False))
    clock = Clock(START + 60)
    store = DedupStore(path, DAY, clock=clock)
    # the alert 0.1.0 sent is not sent again, to that sink; a dry run reads it too
    assert store.check(finding, ("logging",)) == {"logging": AlertMark("repeat", "unchanged")}
    marks = store.reserve(finding, ("logging", "webhook"))
    assert marks == {"logging": AlertMark("repeat", "unchanged"),
                     "webhook": AlertMark("new", "first")}
    store.settle({"webhook": [finding]}, {})
    alerts = _alerts(path)
    assert list(alerts) == [finding.id]  # moved, not copied
    assert alerts[finding.id]["sinks"]["logging"] == record
    assert alerts[finding.id]["sinks"]["webhook"]["first_alerted"] == START + 60
    assert store.reserve(finding, ("logging", "webhook")) == dict.fromkeys(
        ("logging", "webhook"), AlertMark("repeat", "unchanged")
    )
