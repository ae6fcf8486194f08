"""The morning report's top: what is new, back again and resolved since the last sweep the
finding index recorded (each source against its own last sweep), times as a person reads
them against the report run's pinned clock, and words instead of internal states. Real
loads on DuckDB (`tests/formats/warehouse.py`); the sweeps are the index's own lines."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.engine.report import Gatherer, Report
from dlt_contract_ops.history.index import index_file, record_run, record_sweep
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.output.html import to_html
from dlt_contract_ops.settings.files import project_context
from tests.formats.test_html import Page
from tests.projects import Project

#: the report run's clock: every time on the page reads against it
NOW = datetime(2026, 12, 7, 7, 52, 30, tzinfo=timezone.utc)
SOURCES = ("events_src", "shop", "shop_extra")


def _sweep(project: Project) -> tuple[Gatherer, list[ReconcileResult]]:
    """The report's sweep, in process, as `dlt-contract-ops report` runs it; its page's data
    is then `gatherer.report(results, NOW)` (which reads the finding index afresh)."""
    gatherer = Gatherer(project.root)
    with project_context(project.root):
        return gatherer, gatherer.run(SOURCES)


def _report(project: Project) -> tuple[list[ReconcileResult], Report]:
    gatherer, results = _sweep(project)
    return results, gatherer.report(results, NOW)


def _section(html: str, heading: str) -> str:
    """The text of the "since" section's part under `heading` (up to the next heading)."""
    since = html[html.index('<section class="since"'):html.index('<section class="summary"')]
    start = since.index(heading)
    end = since.find("<h2>", start + 1)
    return "".join(Page(since[start:end if end > 0 else None]).text)


def _items(html: str, heading: str) -> list[str]:
    """Each item of the "since" section's list under `heading`, as text."""
    since = html[html.index(f"<h2>{heading}"):html.index('<section class="summary"')]
    part = since[:since.find("<h2>", 1) if since.find("<h2>", 1) > 0 else None]
    return ["".join(Page(li).text) for li in re.findall(r"<li>.*?</li>", part, flags=re.S)]


def _text(html: str) -> str:
    """What a person reads on the page: its text without the style sheet and the script."""
    return "".join(Page(re.sub(r"<(style|script)>.*?</\1>", "", html, flags=re.S)).text)


def _ids(results: list[ReconcileResult]) -> dict[tuple[str, str, str], str]:
    return {(f.source, f.table, f.drift_type): f.id for r in results for f in r.findings}


def _gone(source: str, table: str, detector: str, column: str) -> DriftFinding:
    """A finding a sweep saw that the warehouse does not have now."""
    return DriftFinding(drift_type=detector, source=source, resource=table, table=table,
                        columns=[column])


def test_a_first_report_says_so_instead_of_listing_everything_as_new(drifted: Project) -> None:
    results, report = _report(drifted)
    assert sum(len(r.findings) for r in results) >= 5
    html = to_html(results, report=report)
    text = _section(html, "Since the last sweep")
    assert "No sweep recorded yet: this is the first look, so nothing is listed as new." in text
    assert "New since the last sweep" not in html


def test_new_back_again_and_resolved_since_each_sources_last_sweep(drifted: Project) -> None:
    gatherer, results = _sweep(drifted)
    ids = _ids(results)
    removal = ids[("events_src", "events", "removal")]
    events = ids[("events_src", "events", "additive")]
    items = ids[("shop", "order_items", "additive")]
    # on a table the run checked (one it did not see, it cannot say is resolved)
    gone = _gone("shop", "clean", "additive", "coupon")
    # a finding of a detector the report does not run, and one of a source it did not
    # check: neither can be said to be resolved
    unchecked = [_gone("shop", "clean", "contract", "total"),
                 _gone("elsewhere", "t", "additive", "x")]
    record_run(drifted.root, [gone, *unchecked], sweep=False)  # what each id stands for
    sources = [*SOURCES, "elsewhere"]
    record_sweep(drifted.root, [removal, gone.id], NOW - timedelta(days=2), sources)
    # the last sweep of every source: the removal finding had gone, `gone` was there
    record_sweep(drifted.root, [events, items, gone.id, *(u.id for u in unchecked)],
                 NOW - timedelta(hours=3, minutes=0, seconds=20), sources)
    # a later sweep of another source only: the shop's and the events' last sweep stays
    record_sweep(drifted.root, [], NOW - timedelta(hours=1), ["shop_extra"])

    report = gatherer.report(results, NOW)
    html = to_html(results, report=report)
    since = _section(html, "New since the last sweep")
    assert "Compared with the last sweep recorded in the finding index, 7 Dec 2026 06:52 UTC " \
           "(1 h ago)." in since
    arrived = _items(html, "New since the last sweep")
    # most severe first: the removal (an error) that came back, then the warnings
    assert arrived[0].startswith("error back again removal events_src · events: actor_login")
    assert all(" new " in line for line in arrived[1:])
    assert report.since is not None
    listed = {(f.source, f.table, f.drift_type) for f in report.since.arrived}
    assert ("events_src", "events", "additive") not in listed  # its last sweep saw it
    assert ("shop", "order_items", "additive") not in listed
    assert ("shop", "plain_tbl", "additive") in listed
    assert ("shop_extra", "refunds", "additive") in listed  # its own last sweep was clean
    assert len(arrived) == len(listed) == 3
    [resolved] = _items(html, "Resolved since the last sweep")
    assert resolved == (f"resolved additive shop · clean: coupon · last seen 7 Dec 2026 04:52 "
                        f"UTC (3 h ago) · id {gone.id}")
    # each listed finding links to its block further down
    for f in report.since.arrived:
        assert f'href="#f-{f.id}"' in html
        assert f'id="f-{f.id}"' in html


def test_each_sweep_records_the_sources_it_checked(drifted: Project) -> None:
    run(["shop", "nope"], dry_run=False, alert_sinks=(), project_dir=drifted.root)
    [line] = index_file(drifted.root).read_text().splitlines()
    assert json.loads(line)["sources"] == ["shop"]  # `nope` failed: not checked


def test_times_read_as_a_person_reads_them(drifted: Project) -> None:
    gatherer, results = _sweep(drifted)
    ids = list(_ids(results).values())
    record_sweep(drifted.root, ids, NOW - timedelta(days=2, hours=1), SOURCES)
    record_sweep(drifted.root, ids, NOW - timedelta(minutes=30), SOURCES)
    html = to_html(results, report=gatherer.report(results, NOW))
    # the reproduce SQL is for a machine: its literals stay as they are
    text = _text(re.sub(r"<pre>.*?</pre>", "", html, flags=re.S))
    assert "generated 7 Dec 2026 07:52 UTC" in text
    assert ("Seen in 2 sweep(s): first 5 Dec 2026 06:52 UTC (2 days ago), last 7 Dec 2026 "
            "07:22 UTC (30 min ago)") in text
    began = re.findall(r"drift began ([^\n·]+)", text)
    # the loads' own times, a moment before or after the pinned clock
    assert began
    assert all(re.fullmatch(r"\d{1,2} \w{3} \d{4} \d\d:\d\d UTC \(.+\)", b.strip())
               for b in began), began
    # no machine time anywhere: no seconds, microseconds or ISO `T`
    assert not re.search(r"\d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT", text)


def test_alert_states_are_words(drifted: Project) -> None:
    # a real sweep alerts through the logging sink: the report then finds them alerted
    run(["shop"], dry_run=False, alert_sinks=["logging"], project_dir=drifted.root)
    results, report = _report(drifted)
    text = _text(to_html(results, report=report))
    assert "already alerted" in text
    assert "repeat" not in text  # the state's name, jargon to a reader
    assert "alert due" in text  # the events and shop_extra findings: not alerted yet
    assert "undelivered" not in text


def test_the_report_page_shows_the_since_section_first(drifted: Project, tmp_path: Path) -> None:
    record_sweep(drifted.root, [], NOW - timedelta(hours=3), SOURCES)
    out = tmp_path / "report.html"
    proc = drifted.cli("report", "--html", str(out))
    assert out.exists(), proc.stderr
    html = out.read_text(encoding="utf-8")
    assert html.index('<section class="since"') < html.index('<section class="summary"')
    # a clean sweep before: every finding of the warehouse is new since
    shown = re.search(r"<h2>New since the last sweep \((\d+)\)</h2>", html)
    assert shown
    assert "Nothing resolved." in html
    # and the command says so beside the file it wrote
    assert f"  since the last sweep: {shown.group(1)} new, back or grown; 0 resolved" in (
        proc.stdout.splitlines())
