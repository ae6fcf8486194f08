"""Alert loss: a finding counts as alerted at a sink only once that sink delivered it.

A sink that raises (`DeliveryError`) or, being asynchronous, lists the finding in
`undelivered()` after flush did not deliver it. The dedup state records the finding for the
sinks that delivered it only (the next run sends it again to the others, "new" not
"repeat"). When a paging sink, or every sink, did not deliver it, the whole finding goes to
the log and the sweep reports a delivery error (the CLI exits 1).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.errors import DeliveryError
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.base import AlertSink, ConfirmsDelivery, ErrorEvent
from dlt_contract_ops.sinks.dedup import AlertMark, DedupStore, finding_key
from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sinks.logging_sink import drift_detail
from dlt_contract_ops.sinks.webhook import WebhookSink
from tests.projects import Project
from tests.servers import Receiver, Reply, SlowServer
from tests.sinks.app_project import CONFIG
from tests.sinks.conftest import make_finding
from tests.sinks.test_emitter import Recording

DAY = 86400.0
WAIT = 120.0  # a generous cap on waiting for a subprocess: a hang fails, speed is not tested


class Failing:
    """A synchronous sink whose receiver is down: every event raises DeliveryError."""

    def __init__(self) -> None:
        self.attempts: list[DriftFinding] = []

    def emit_drift(self, finding: DriftFinding) -> None:
        self.attempts.append(finding)
        raise DeliveryError("alert receiver answered HTTP 500")

    def emit_error(self, event: ErrorEvent) -> None:
        raise DeliveryError("alert receiver answered HTTP 500")

    def flush(self, timeout: float) -> None:
        pass


class Unconfirmed(Recording):
    """An asynchronous sink (the Sentry shape): accepts every event, and after flush reports
    the findings of `lost` resources as not confirmed by the receiving end."""

    def __init__(self, lost: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.lost = set(lost)
        self.calls: list[str] = []

    def emit_drift(self, finding: DriftFinding) -> None:
        self.calls.append("emit")
        super().emit_drift(finding)

    def flush(self, timeout: float) -> None:
        self.calls.append("flush")
        super().flush(timeout)

    def undelivered(self) -> list[DriftFinding]:
        self.calls.append("undelivered")
        return [f for f in self.drift if f.resource in self.lost]


class FailingRecord(Failing):
    """A local record (the logging sink's kind) that fails."""

    pages = False


class CannotTell(Unconfirmed):
    """An asynchronous sink that cannot say what it delivered."""

    def undelivered(self) -> list[DriftFinding]:
        raise RuntimeError("transport state lost")


def test_the_sinks_of_this_file_are_what_the_emitter_expects() -> None:
    assert isinstance(Failing(), AlertSink)
    assert not isinstance(Failing(), ConfirmsDelivery)
    assert isinstance(Unconfirmed(), AlertSink)
    assert isinstance(Unconfirmed(), ConfirmsDelivery)


def _sweep(
    store: DedupStore, sinks: list[tuple[str, Any]], findings: list[DriftFinding]
) -> Emitter:
    emitter = Emitter(sinks, dedup=store)
    for f in findings:
        emitter.drift(f)
    emitter.flush(1.0)
    return emitter


def _recorded(path: Path) -> dict[str, set[str]]:
    """Finding key -> the sinks the state file holds it as alerted to (when any)."""
    if not path.exists():
        return {}
    alerts = json.loads(path.read_text())["alerts"]
    settled = {k: {s for s, r in v["sinks"].items() if "last_alerted" in r}
               for k, v in alerts.items()}
    return {k: v for k, v in settled.items() if v}


def _fallback(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "dlt_contract_ops.alerts"]


# -- in process: which sinks deliver ---------------------------------------------------------

SINKS: dict[str, Callable[[], list[tuple[str, Any]]]] = {
    "failing": lambda: [("down", Failing())],
    "failing, then delivering": lambda: [("down", Failing()), ("up", Recording())],
    "delivering, then failing": lambda: [("up", Recording()), ("down", Failing())],
    "async, lost": lambda: [("async", Unconfirmed(lost=("Order Items",)))],
    "async, confirmed": lambda: [("async", Unconfirmed())],
    "async lost, sync delivering": lambda: [
        ("async", Unconfirmed(lost=("Order Items",))), ("up", Recording())
    ],
    "failing and async lost": lambda: [
        ("down", Failing()), ("async", Unconfirmed(lost=("Order Items",)))
    ],
    "async that cannot tell": lambda: [("async", CannotTell())],
    "failing record, delivering": lambda: [("log", FailingRecord()), ("up", Recording())],
    "failing record": lambda: [("log", FailingRecord())],
}


@pytest.mark.parametrize(
    ("sinks", "settled"),
    [
        ("failing", set()),
        ("failing, then delivering", {"up"}),
        ("delivering, then failing", {"up"}),
        ("async, lost", set()),
        ("async, confirmed", {"async"}),
        ("async lost, sync delivering", {"up"}),
        ("failing and async lost", set()),
        ("async that cannot tell", set()),
        ("failing record, delivering", {"up"}),
        ("failing record", set()),
    ],
)
def test_delivered_when_every_paging_sink_delivered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, sinks: str, settled: set[str]
) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    configured = SINKS[sinks]()
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        emitter = _sweep(DedupStore(path, DAY), configured, [finding])
    # a local record's failure is not an error while a paging sink has the finding
    paging = {n for n, s in configured if getattr(s, "pages", True)}
    delivered = bool(settled) and settled >= paging
    status = "new" if delivered else "undelivered"
    assert dict(emitter.report.ledger) == {finding.id: status}
    assert emitter.report.undelivered == ([] if delivered else [finding])
    # each sink settles what it delivered, and nothing else
    assert _recorded(path) == ({finding_key(finding): settled} if settled else {})
    # the full finding is written to the log exactly when it is undelivered
    assert _fallback(caplog) == ([] if delivered else [drift_detail(finding)])

    # the next run, with a healthy sink: sent again unless that sink delivered it
    healthy = Recording()
    again = _sweep(DedupStore(path, DAY), [("up", healthy)], [finding])
    assert dict(again.report.ledger) == {finding.id: "repeat" if "up" in settled else "new"}
    assert healthy.drift == ([] if "up" in settled else [finding])
    assert _recorded(path) == {finding_key(finding): settled | {"up"}}


def test_a_failed_sink_is_retried_next_run_not_skipped(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    down = Failing()
    first = _sweep(DedupStore(path, DAY), [("down", down)], [finding])
    assert first.report.failures == {"down": "DeliveryError: alert receiver answered HTTP 500"}
    second = _sweep(DedupStore(path, DAY), [("down", down)], [finding])
    # still failing: tried again (not a "repeat"), still not recorded
    assert down.attempts == [finding, finding]
    assert second.report.ledger.mark(finding) == AlertMark("undelivered", "no_sink_confirmed")
    assert _recorded(path) == {}


def test_fallback_writes_the_whole_finding(caplog: pytest.LogCaptureFixture) -> None:
    finding = make_finding()
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        _sweep(DedupStore(Path("state.json"), DAY), [("down", Failing())], [finding])
    [record] = [r for r in caplog.records if r.name == "dlt_contract_ops.alerts"]
    assert record.levelno == logging.WARNING
    head, _, body = record.getMessage().partition("\n")
    assert head.startswith('schema drift kind=additive at=shop_pipeline.shop."Order Items"')
    doc = json.loads(body)
    assert doc["reproduce"] == finding.reproduce
    assert doc["samples"] == {"payload_size": [519, 526], "Straße-Nr": ["12a"]}
    assert doc["column_types"] == {"payload_size": "BIGINT", "Straße-Nr": "VARCHAR"}
    own = [r.getMessage() for r in caplog.records if r.name == "dlt_contract_ops"]
    assert (
        'no alert sink delivered the drift at shop_pipeline.shop."Order Items" (additive): '
        "writing it to the log instead; it will be sent again on the next run"
    ) in own


def test_async_sink_undelivered_falls_back_after_flush(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.json"
    lost = make_finding(resource="lost", table="lost")
    kept = make_finding(resource="kept", table="kept")
    sink = Unconfirmed(lost=("lost",))
    emitter = Emitter([("async", sink)], dedup=DedupStore(path, DAY))
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        emitter.drift(lost)
        emitter.drift(kept)
        # accepted for sending: nothing known yet, nothing written to the log
        assert _fallback(caplog) == []
        assert dict(emitter.report.ledger) == {lost.id: "new", kept.id: "new"}
        emitter.flush(1.0)
    assert sink.calls == ["emit", "emit", "flush", "undelivered"]
    assert dict(emitter.report.ledger) == {lost.id: "undelivered", kept.id: "new"}
    assert emitter.report.undelivered == [lost]
    assert emitter.report.failures == {"async": "the receiving end did not confirm"}
    assert _fallback(caplog) == [drift_detail(lost)]
    assert list(_recorded(path)) == [finding_key(kept)]
    # the lost one's claim is released too: nothing pending is left behind
    assert list(json.loads(path.read_text())["alerts"]) == [finding_key(kept)]


class Interrupting(Failing):
    """A send cut short by Ctrl-C (the CLI's SIGINT arrives in the main thread mid-send)."""

    def emit_drift(self, finding: DriftFinding) -> None:
        self.attempts.append(finding)
        raise KeyboardInterrupt


def test_an_interrupted_send_is_undelivered_and_its_claim_released(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    emitter = Emitter([("hook", Interrupting())], dedup=DedupStore(path, DAY))
    with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
        with pytest.raises(KeyboardInterrupt):
            emitter.drift(finding)
        [entry] = json.loads(path.read_text())["alerts"].values()
        assert "pending" in entry["sinks"]["hook"]
        emitter.flush(1.0)  # what the sweep does on its way out of an interrupt
    assert dict(emitter.report.ledger) == {finding.id: "undelivered"}
    assert emitter.report.undelivered == [finding]
    assert json.loads(path.read_text())["alerts"] == {}
    assert _fallback(caplog) == [drift_detail(finding)]


# -- the real webhook sink against a loopback receiver --------------------------------------


def test_webhook_500_is_not_recorded_and_is_sent_by_the_next_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.json"
    finding = make_finding()
    with Receiver(default=Reply(500)) as hook:

        def sweep() -> Emitter:
            sink = WebhookSink(hook.url + "/hook", retries=1, backoff=0)
            return _sweep(DedupStore(path, DAY), [("webhook", sink)], [finding])

        with caplog.at_level(logging.WARNING, logger="dlt_contract_ops"):
            failed = sweep()
        assert len(hook.requests) == 2  # one attempt and one retry, both answered 500
        assert dict(failed.report.ledger) == {finding.id: "undelivered"}
        assert failed.report.failures["webhook"].startswith(
            f"DeliveryError: Webhook POST to {hook.url} failed after 2 attempt(s): HTTP 500"
        )
        assert _recorded(path) == {}
        assert _fallback(caplog) == [drift_detail(finding)]

        hook.default = Reply(200)
        sent = sweep()
        assert dict(sent.report.ledger) == {finding.id: "new"}
        assert len(hook.requests) == 3
        assert hook.requests[-1].json()["finding"]["columns"] == ["payload_size", "Straße-Nr"]
        assert list(_recorded(path)) == [finding_key(finding)]

        held = sweep()
        assert dict(held.report.ledger) == {finding.id: "repeat"}
        assert len(hook.requests) == 3


# -- concurrent sweeps (real processes) -----------------------------------------------------


def _webhook_sweep(path: str, url: str, start: Any, out: Any) -> None:
    finding = make_finding()
    emitter = Emitter(
        [("webhook", WebhookSink(url, retries=0, backoff=0))], dedup=DedupStore(Path(path), DAY)
    )
    start.wait()
    emitter.drift(finding)
    emitter.flush(5.0)
    out.put(emitter.report.ledger[finding.id])


def _race(path: Path, url: str, runs: int) -> list[str]:
    # forked from this warm process: each sweep starts at once with everything imported (a
    # spawned one spent seconds importing dlt first); real processes racing on the real lock
    ctx = multiprocessing.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_webhook_sweep, args=(str(path), url, start, out))
             for _ in range(runs)]
    for p in procs:
        p.start()
    start.set()
    statuses = [out.get(timeout=WAIT) for _ in range(runs)]
    for p in procs:
        p.join(WAIT)
        assert p.exitcode == 0
    return statuses


def test_concurrent_sweeps_do_not_double_alert(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    with Receiver() as hook:
        statuses = _race(path, hook.url, 6)
        assert sorted(statuses) == ["new"] + ["repeat"] * 5
        assert len(hook.requests) == 1
    assert list(_recorded(path)) == [finding_key(make_finding())]


def test_concurrent_failing_sweeps_record_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    with Receiver(default=Reply(500)) as hook:
        statuses = _race(path, hook.url, 6)
        # each sweep either sent it and failed, or saw another one sending it
        assert set(statuses) <= {"undelivered", "repeat"}
        assert "undelivered" in statuses
        assert len(hook.requests) == statuses.count("undelivered")
        assert json.loads(path.read_text())["alerts"] == {}  # no claim left, nothing alerted
        hook.default = Reply(200)
        [after] = _race(path, hook.url, 1)
    assert after == "new"


# -- end to end: the CLI on a real DuckDB project --------------------------------------------


def _configure(
    project: Project, url: str, *, timeout: float = 2, max_time: float = 15, retries: int = 1
) -> None:
    project.config(
        CONFIG
        + '\n[contract_ops]\nalert_sinks = ["webhook"]\n'
        + '\n[contract_ops.dedup]\nstate_file = "alert_state.json"\n'
        + f"\n[contract_ops.alert_sink.webhook]\ntimeout = {timeout}\nmax_time = {max_time}\n"
        + f"retries = {retries}\nbackoff = 0.05\n"
    )
    _point_webhook_at(project, url)


def _point_webhook_at(project: Project, url: str) -> None:
    # the URL is a secret; rewritten whole, so the same project can be pointed elsewhere
    (project.root / ".dlt" / "secrets.toml").write_text(
        f'[contract_ops.alert_sink.webhook]\nurl = "{url}"\n'
    )


def _alerts_of(proc: subprocess.CompletedProcess[str]) -> list[str | None]:
    doc = json.loads(proc.stdout)
    return [f.get("alert") for r in doc["results"] for f in r["findings"]]


def _logged_finding(stderr: str) -> dict[str, Any]:
    """The finding the fallback wrote to stderr: the JSON lines after its one-line head."""
    lines = stderr.splitlines()
    [start] = [i for i, ln in enumerate(lines) if "|dlt_contract_ops.alerts|schema drift" in ln]
    end = lines.index("}", start)
    doc: dict[str, Any] = json.loads("\n".join(lines[start + 1 : end + 1]))
    return doc


def test_cli_undelivered_then_delivered_then_repeat(app_project: Project) -> None:
    state = app_project.root / "alert_state.json"
    with Receiver(default=Reply(500)) as hook:
        _configure(app_project, hook.url + "/hook")
        failed = app_project.cli("reconcile", "--all", "--format", "json")
        assert failed.returncode == 1, failed.stderr
        assert _alerts_of(failed) == ["undelivered"]
        [additive] = [r for r in json.loads(failed.stdout)["results"] if r["findings"]]
        assert additive["error"].startswith(
            "alert not delivered for 1 finding(s) (`events` additive): no alert sink confirmed "
            f"delivery ('webhook': DeliveryError: Webhook POST to {hook.url} failed after 2 "
            "attempt(s): HTTP 500"
        )
        assert len(hook.requests) == 2
        assert (
            "no alert sink delivered the drift at app_pipeline.app.events (additive)"
            in failed.stderr
        )
        logged = _logged_finding(failed.stderr)
        assert logged["columns"] == ["payload size"]
        assert sorted(logged["samples"]["payload size"]) == [500, 501, 502, 503, 504]
        assert logged["reproduce"].startswith("SELECT ")
        assert '"payload size"' in logged["reproduce"]
        assert _recorded(state) == {}

        hook.default = Reply(200)
        sent = app_project.cli("reconcile", "--all", "--format", "json")
        assert sent.returncode == 0, sent.stderr
        assert _alerts_of(sent) == ["new"]
        assert len(hook.requests) == 3
        assert hook.requests[-1].json()["finding"]["columns"] == ["payload size"]
        assert "no alert sink delivered" not in sent.stderr

        held = app_project.cli("reconcile", "--all")
        assert held.returncode == 0, held.stderr
        assert "  • events: additive drift (1 column(s)) [repeat]" in held.stdout
        assert len(hook.requests) == 3


def _wait_for_request(server: SlowServer, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT
    while not server.requests:
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the CLI exited ({proc.returncode}) before it sent:\n{out}\n{err}")
        if time.monotonic() > deadline:
            pytest.fail("the CLI never sent the alert")
        time.sleep(0.05)


def test_sigint_during_a_blocked_send_exits_and_the_next_run_sends_it(
    app_project: Project,
) -> None:
    state = app_project.root / "alert_state.json"
    with SlowServer() as hold:  # takes the POST and never answers
        # bounds far beyond the test: only the signal can end the send
        _configure(app_project, hold.url + "/hook", timeout=600, max_time=600, retries=0)
        proc = subprocess.Popen(
            [sys.executable, "-m", "dlt_contract_ops.cli", "reconcile", "--all",
             "--format", "json"],
            cwd=app_project.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            _wait_for_request(hold, proc)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=WAIT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert len(hold.requests) == 1
    assert proc.returncode == 130, err
    assert json.loads(out)["results"] == []  # the one source did not finish
    assert "Interrupted: 0 source(s) finished before the signal" in err
    # the interrupted send is neither recorded nor left claimed, and its finding is in the log
    assert json.loads(state.read_text())["alerts"] == {}
    assert "no alert sink delivered the drift at app_pipeline.app.events (additive)" in err
    assert _logged_finding(err)["columns"] == ["payload size"]

    with Receiver() as hook:
        _point_webhook_at(app_project, hook.url + "/hook")
        again = app_project.cli("reconcile", "--all")
        assert again.returncode == 0, again.stderr
        assert "  • events: additive drift (1 column(s)) [new]" in again.stdout
        [sent] = hook.requests
        assert sent.json()["finding"]["columns"] == ["payload size"]
    assert list(_recorded(state)) == [finding_key(make_finding(
        source="app", resource="events", table="events", columns=["payload size"]
    ))]
