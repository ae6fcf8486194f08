"""`dlt-contract-ops report --html FILE`: one self-contained page, everything escaped,
rendered by a real headless Chromium without a console message."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dlt_contract_ops.engine.report import Report, Resolved, SinceLastSweep
from dlt_contract_ops.model.findings import Coverage, DriftFinding, ReconcileResult
from dlt_contract_ops.output.html import filter_script, to_html
from tests.formats import warehouse
from tests.formats.browser import screenshot
from tests.formats.png import distinct_colours
from tests.projects import Project
from tests.servers import Receiver

#: every element the page may hold; anything else came from data that was not escaped
TAGS = {
    "html", "head", "meta", "link", "title", "style", "body", "header", "h1", "p", "main",
    "section", "h2", "div", "span", "code", "pre", "table", "tr", "th", "td", "ul", "b",
    "li", "svg", "rect", "path", "circle", "text", "footer", "details", "summary", "figure",
    "figcaption", "input", "script",
}


class Page(HTMLParser):
    """The tags, attributes and text of a page, as a browser's tokenizer sees them."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


HOSTILE = ['<script>alert("x")</script>', "a\"b'c", "</td></tr><img src=x>", "größe 📈",
           "bell\x07", "&amp;"]


def _hostile_results() -> list[ReconcileResult]:
    findings = [
        DriftFinding(drift_type="removal", source="s<1>", resource="R\"<", table="t</h3>",
                     columns=HOSTILE, coverage={c: Coverage(baseline=0.9, recent=0.0)
                                                for c in HOSTILE},
                     reproduce='SELECT "<b>" FROM t -- </pre><script>'),
        DriftFinding(drift_type="additive", source="s<1>", resource="r", table="t</h3>",
                     columns=["x"], samples={"x": ["<i>v</i>", {"k": "</code>"}]}),
    ]
    return [ReconcileResult(source="s<1>", findings=findings, notes=["note <u>"],
                            dataset="d&d"),
            ReconcileResult(source="s<1>", detector="missing", error="boom </div>")]


def test_every_name_and_value_is_escaped() -> None:
    page = Page(to_html(_hostile_results(), generated="<now>"))
    assert {tag for tag, _ in page.tags} <= TAGS
    text = "".join(page.text)
    for column in HOSTILE:
        shown = column.replace("\x07", "\\u0007")
        assert shown in text, column
    for value in ('SELECT "<b>" FROM t -- </pre><script>', "<i>v</i>", '{"k": "</code>"}',
                  "note <u>", "boom </div>", "s<1>", "t</h3>", "<now>"):
        assert value in text, value
    assert "coverage baseline 90.0% → recent 0.0%" in text
    assert [tag for tag, _ in page.tags].count("script") == 1  # the filter box's own


def test_what_changed_since_the_last_sweep_is_escaped_too() -> None:
    results = _hostile_results()
    gone = Resolved("0123456789ab", "s<1>", "</ul><b>", "additive", tuple(HOSTILE))
    since = SinceLastSweep(datetime(2026, 12, 7, 4, 52, tzinfo=timezone.utc),
                           new=tuple(results[0].findings), resolved=(gone,))
    html = to_html(results, report=Report(results, generated=datetime(
        2026, 12, 7, 7, 52, tzinfo=timezone.utc), since=since))
    page = Page(html)
    assert {tag for tag, _ in page.tags} <= TAGS | {"a", "defs", "g", "use"}
    text = "".join(page.text)
    assert "</ul><b>" in text
    assert "t</h3>" in text
    assert "7 Dec 2026 04:52 UTC (3 h ago)" in text
    # the only links are to the page's own findings
    links = [a["href"] for t, a in page.tags if t == "a"]
    # both made as warnings (no run set their severity): then by detector
    assert links == [f"#f-{f.id}" for f in sorted(results[0].findings,
                                                  key=lambda f: f.drift_type)]
    assert all(f'id="f-{f.id}"' in html for f in results[0].findings)


def test_the_page_fetches_nothing() -> None:
    html = to_html(_hostile_results())
    page = Page(html)
    links = [v for _, attrs in page.tags for k, v in attrs.items() if k in ("src", "href")]
    assert links == ["data:,"]  # the empty favicon, so the browser asks for none
    [csp] = [a["content"] for t, a in page.tags
             if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp is not None
    assert "default-src 'none'" in csp
    # the one script is the filter box's, allowed by its hash: no other script may run
    script, digest = filter_script()
    assert f"script-src {digest}" in csp
    assert html.count("<script") == 1
    assert f"<script>{script}</script>" in html
    assert not re.search(r"url\(|@import|@font-face|innerHTML|eval\(", html)


def test_every_finding_shows_with_its_reproduce_sql(results: list[ReconcileResult]) -> None:
    page = Page(to_html(results))
    text = "".join(page.text)
    assert sum(len(r.findings) for r in results) >= 4
    for r in results:
        assert r.source in text
        if r.error:
            assert r.error in text
        for f in r.findings:
            assert f.reproduce is None or f.reproduce in text
            assert all(c in text for c in f.columns)
    assert warehouse.NASTY in text
    assert "coverage baseline 100.0% → recent 0.0%" in text
    assert not [t for t, _ in page.tags if t == "svg"]  # pictures need the report's data


def test_report_cli_writes_the_page_with_exit_codes_like_reconcile(drifted: Project) -> None:
    out = drifted.root / "report.html"
    proc = drifted.cli("report", "--html", str(out))
    same = drifted.cli("reconcile", "--all", "--dry-run", "--include-removal", "--format", "json")
    assert proc.returncode == same.returncode, proc.stderr
    results = json.loads(same.stdout)["results"]
    findings = sum(len(r["findings"]) for r in results)
    assert proc.stdout.startswith(f"Wrote {out}: 4 source(s), {findings} finding(s)")
    page = Page(out.read_text(encoding="utf-8"))
    text = "".join(page.text)
    reproducible = sum(1 for r in results for f in r["findings"] if f["reproduce"])
    assert [t for t, _ in page.tags].count("pre") == reproducible
    for r in results:
        assert r["source"] in text
        for f in r["findings"]:
            assert all(c in text for c in f["columns"])
    assert warehouse.NASTY in text
    charts = [a["aria-label"] for t, a in page.tags if t == "svg" and a.get("role") == "img"]
    assert "actor_login: coverage, 2 load(s), newest 0%" in charts
    drifted = [a["class"] for t, a in page.tags if t == "figure"]
    assert drifted.count("drifted") >= 1


@pytest.mark.parametrize(("args", "code"), [(("-s", "shop", "--all"), 2), (("-s", "nope"), 2)])
def test_report_usage_and_source_errors(drifted: Project, args: tuple[str, ...],
                                        code: int) -> None:
    proc = drifted.cli("report", "--html", str(drifted.root / "r.html"), *args)
    assert proc.returncode == code, proc.stderr


def test_report_never_alerts(drifted: Project) -> None:
    config = drifted.root / ".dlt" / "config.toml"
    with Receiver() as hook:
        text = config.read_text().replace(
            "[contract_ops]\n", '[contract_ops]\nalert_sinks = ["webhook"]\n', 1
        )
        config.write_text(text)
        drifted.secrets(f'[contract_ops.alert_sink.webhook]\nurl = "{hook.url}"\n')
        report = drifted.cli("report", "--html", str(drifted.root / "r.html"), "-s", "shop")
        assert report.returncode == 0, report.stderr
        assert hook.requests == []
        # the same project alerts when reconciled for real: the sink is live
        alerting = drifted.cli("reconcile", "-s", "shop", "--no-dedup")
        assert alerting.returncode == 0, alerting.stderr
        assert hook.wait_for(1)


def test_chromium_renders_the_report(drifted: Project, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    proc = drifted.cli("report", "--html", str(out))
    assert out.exists(), proc.stderr
    png = tmp_path / "report.png"
    assert screenshot(out, png) == []
    assert distinct_colours(png) > 50  # text, badges, the sparkline: not a blank page


def test_the_browser_checks_can_fail(tmp_path: Path) -> None:
    # what the two assertions above would catch: a blank page, and a page whose console
    # reports an exception or a blocked fetch
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    assert screenshot(blank, tmp_path / "blank.png") == []
    assert distinct_colours(tmp_path / "blank.png") <= 2
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'\"></head><body><p>x</p>"
        '<img src="https://example.invalid/x.png"><script>throw new Error("boom")</script>'
        "</body></html>"
    )
    console = screenshot(bad, tmp_path / "bad.png")
    assert any("example.invalid" in line for line in console), console


def test_report_runs_distribution_once_a_profile_store_exists(drifted: Project) -> None:
    out = drifted.root / "report.html"
    pages = []
    for _ in range(2):
        proc = drifted.cli("report", "--html", str(out))
        assert out.exists(), proc.stderr
        pages.append(out.read_text(encoding="utf-8"))
    # the first report's removal sweep creates the store; the next one compares profiles
    assert "Detectors run: additive, removal, missing, type, rename." in pages[0]
    assert "Detectors run: additive, removal, missing, type, rename, distribution." in pages[1]
