"""A cron's two cadences: a nightly `reconcile --all --include-removal` and an hourly
`reconcile --all` that runs no removal. Each finding is compared with the last sweep that ran
its detector over its table (the index line names the detectors it ran), so the hourly sweep
says nothing of the removal finding the nightly one saw: the report calls it neither resolved
nor new, the alert lifecycle neither resolves nor re-pages it, and only a sweep that runs
removal and no longer finds it resolves it, in the report and in the lifecycle alike. Real dlt
loads into DuckDB (`tests/formats/warehouse.py`: `events.actor_login` went dark), through the
command line as a cron runs it."""

from __future__ import annotations

import json
from typing import Any

from dlt_contract_ops.history.index import index_file
from tests.formats.test_since import _items
from tests.formats.warehouse import load_healthy_events
from tests.projects import Project

#: the removal finding: `actor_login` of `events_src`'s `events` went dark
WHERE = ("events_src", "events", "removal")


def _reconcile(project: Project, *extra: str) -> list[dict[str, Any]]:
    """One scheduled sweep (not a dry run, the default logging sink alerting): its results."""
    proc = project.cli("reconcile", "--all", "--format", "json", *extra)
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout)["results"])


def _nightly(project: Project) -> list[dict[str, Any]]:
    return _reconcile(project, "--include-removal")


def _dark(results: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = [f for r in results for f in r["findings"]
             if (f["source"], f["table"], f["drift_type"]) == WHERE]
    assert len(found) <= 1
    return found[0] if found else None


def _resolved(results: list[dict[str, Any]]) -> list[str]:
    """The notes of the findings the sweep's alert lifecycle resolved."""
    return [n for r in results for n in r.get("notes") or [] if n.startswith("resolved: ")]


def _report(project: Project) -> tuple[str, list[str], list[str]]:
    """`report`'s "since the last sweep" line, and its page's new and resolved items."""
    out = project.root / "report.html"
    proc = project.cli("report", "--html", str(out))
    assert out.exists(), proc.stderr
    [line] = [x for x in proc.stdout.splitlines() if "since the last sweep" in x]
    html = out.read_text(encoding="utf-8")
    new = _items(html, "New since the last sweep") if "<h2>New since" in html else []
    return line, new, _items(html, "Resolved since the last sweep")


def _since(new: int, resolved: int) -> str:
    return f"  since the last sweep: {new} new, back or grown; {resolved} resolved"


def test_an_hourly_sweep_without_removal_says_nothing_of_the_nightly_removal_finding(
    drifted: Project,
) -> None:
    night = _nightly(drifted)
    dark = _dark(night)
    assert dark is not None  # the planted drift is found: nothing below passes vacuously
    assert dark["alert"] == "new"
    hourly = _reconcile(drifted)
    assert _dark(hourly) is None  # removal did not run
    assert not _resolved(hourly)  # and resolved nothing: its table was not checked for it
    ran = [json.loads(x).get("detectors") for x in _index_lines(drifted)]
    assert "removal" in ran[0]
    assert "removal" not in ran[1]

    line, new, resolved = _report(drifted)
    assert line == _since(0, 0)  # was "1 new, back or grown" (back again) before
    assert not [x for x in new if dark["id"] in x or "removal" in x]
    assert resolved == []

    again = _dark(_nightly(drifted))  # the next night: the same drift, still open
    assert again is not None
    assert again["id"] == dark["id"]
    assert (again["alert"], again.get("alert_reason")) == ("repeat", None)
    _reconcile(drifted)
    assert _report(drifted)[0] == _since(0, 0)


def test_only_a_sweep_that_runs_removal_resolves_the_removal_finding(drifted: Project) -> None:
    dark = _dark(_nightly(drifted))
    assert dark is not None
    load_healthy_events(drifted)  # actor_login is filled again: the drift is gone
    hourly = _reconcile(drifted)
    assert not _resolved(hourly)  # no removal this hour: the lifecycle resolves nothing

    # the report runs removal: against the last sweep that did (the nightly), it is resolved
    line, new, resolved = _report(drifted)
    [gone] = resolved
    assert gone.startswith("resolved removal events_src · events: actor_login · last seen ")
    assert gone.endswith(f" · id {dark['id']}")
    assert line == _since(len(new), 1)  # was "0 resolved": the hourly had not seen it

    # the next nightly runs removal: the lifecycle resolves it, by the same rule
    night = _nightly(drifted)
    assert _dark(night) is None
    assert (f"resolved: removal drift of `events` (`actor_login`), id {dark['id']}: no longer "
            f"found") in _resolved(night)
    # and since that sweep, nothing more is resolved (nor new)
    line, new, resolved = _report(drifted)
    assert resolved == []
    assert line == _since(len(new), 0)
    assert not [x for x in new if dark["id"] in x]



def test_a_detector_no_sweep_ran_is_neither_new_nor_back(drifted: Project) -> None:
    """Only hourly sweeps so far: the report's removal finding was never looked for."""
    _reconcile(drifted)
    out = drifted.root / "report.html"
    proc = drifted.cli("report", "--html", str(out))
    assert _since(0, 0) in proc.stdout.splitlines()  # was "1 new, back or grown"
    assert ("1 finding(s) of a detector no recorded sweep ran (removal) are neither new nor "
            "back.") in out.read_text(encoding="utf-8")


def _index_lines(project: Project) -> list[str]:
    return index_file(project.root).read_text(encoding="utf-8").splitlines()
