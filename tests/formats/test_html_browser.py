"""The report in a real headless Chromium: hostile names loaded through a real dlt pipeline
into DuckDB run no script, the drifted columns' charts exist, the filter box works, and a
200-table page renders. Screenshots are kept (`$CI_ARTIFACTS_DIR` under CI)."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pytest

from bench.html_report import synthetic_report
from dlt_contract_ops.output.html import TITLE, to_html
from tests.formats.browser import chromium, dump_dom, keep_artifact, screenshot
from tests.formats.png import distinct_colours
from tests.projects import Project

#: a table name (no `/ < > " . % { }`: dlt writes it into file names) that breaks out of a
#: single-quoted attribute, and column names that are a script and an image with a handler;
#: dlt's `direct` naming keeps them (a `"` becomes `_`)
TABLE = "t' autofocus onfocus='alert(1)' x='&lt;"
SCRIPT = "<script>document.title=7</script>"
DARK = "'><img src=x onerror=document.title=8>"

MODULE = f'''
from typing import Optional

import dlt
from pydantic import create_model

Row = create_model("Row", **{{"id": (int, ...), {DARK!r}: (Optional[str], None),
                              {SCRIPT!r}: (Optional[str], None)}})


@dlt.resource(name={TABLE!r}, columns=Row, write_disposition="append")
def rows(start=0, dark=False):
    yield [{{"id": i, {DARK!r}: None if dark else f"v{{i}}", {SCRIPT!r}: "<b>x</b>"}}
           for i in range(start, start + 20)]


@dlt.source(name="hostile")
def hostile(start=0, dark=False):
    return rows(start, dark)
'''


class Dom(HTMLParser):
    """Elements of a dumped DOM: (tag, attributes, enclosing figure's class)."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.figure: str | None = None
        self.in_figure: list[tuple[str | None, str | None]] = []  # (figure class, svg label)
        self.title = ""
        self._in_title = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag == "figure":
            self.figure = a.get("class")
        elif tag == "svg" and self.figure is not None:
            self.in_figure.append((self.figure, a.get("aria-label")))
        self._in_title = tag == "title" and len(self.elements) < 10  # the document's own

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self.figure = None
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def _load(project: Project, **kwargs: object) -> None:
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    project.python(f"""
        import dlt
        from hostile_mod import hostile
        p = dlt.pipeline("hostile_pipe", destination="duckdb", dataset_name="hostile_data")
        p.run(hostile({args}))
        """)


@pytest.fixture
def hostile(tmp_path: Path) -> Project:
    """A project whose only table and columns are named to break out of HTML, with one
    declared column gone dark in the newest load (removal drift)."""
    project = Project(tmp_path / "hostile")
    project.module("hostile_mod", MODULE)
    project.config('[schema]\nnaming = "direct"\n')
    project.source("hostile", "hostile_mod:hostile", pipeline_name="hostile_pipe",
                   dataset_name="hostile_data")
    _load(project)
    with duckdb.connect(str(project.root / "hostile_pipe.duckdb")) as con:
        [(table,)] = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "'hostile_data' AND table_name NOT LIKE '_dlt%'").fetchall()
        # the healthy load moves into the baseline window (3 days ago)
        con.execute(f'UPDATE hostile_data."{table}" SET _dlt_load_id = ?',
                    [f"{time.time() - 3 * 86400:.7f}"])
    _load(project, start=20, dark=True)
    return project


def test_hostile_names_run_no_script_and_their_charts_exist(hostile: Project,
                                                           tmp_path: Path) -> None:
    chromium()  # skip (or fail under CI) before any work when there is no browser
    out = tmp_path / "hostile-report.html"
    proc = hostile.cli("report", "--html", str(out))
    assert proc.returncode == 0, proc.stderr
    dom = Dom(dump_dom(out, tmp_path / "profile"))
    assert dom.title == TITLE  # no payload set it
    tags = [tag for tag, _ in dom.elements]
    assert "img" not in tags
    assert tags.count("script") == 1  # the filter box's own, nothing injected
    assert not [a for _, a in dom.elements if any(k.startswith("on") for k in a)]
    assert not [a for _, a in dom.elements if "autofocus" in a]
    labels = {label for _, label in dom.in_figure}
    # both hostile columns are drawn, the dark one flagged as drifted
    assert any(label and label.startswith(f"{SCRIPT}: coverage") for label in labels)
    [(css, _)] = [(c, label) for c, label in dom.in_figure
                  if label and label.startswith(DARK.replace("'", "_") + ": coverage")]
    assert css == "drifted"
    png = tmp_path / "hostile-report.png"
    assert screenshot(out, png) == []  # no console message: nothing ran, nothing was blocked
    keep_artifact(png)


def test_the_filter_box_hides_tables_that_do_not_match(tmp_path: Path) -> None:
    chromium()
    results, report = synthetic_report(tables=6, columns=3, loads=4)
    page = tmp_path / "small.html"
    page.write_text(to_html(results, report=report), encoding="utf-8")
    # the script reads `#filter=` on load, as typing into the box would
    for query, shown in (("", 6), ("table_003", 1), ("removal", 2), ("nothing-matches", 0)):
        dom = dump_dom(page, tmp_path / "profile", f"filter={query}" if query else "")
        assert f"{shown} of 6 table(s) shown" in dom, query
        hidden = len(re.findall(r"<details class=\"table\"[^>]* hidden", dom))
        assert hidden == 6 - shown, query


def test_two_hundred_tables_render(tmp_path: Path) -> None:
    chromium()
    results, report = synthetic_report(tables=200, columns=30, loads=30)
    page = tmp_path / "report-200.html"
    page.write_text(to_html(results, report=report), encoding="utf-8")
    dom = dump_dom(page, tmp_path / "profile")
    assert dom.count('<svg class="chart cov"') == 200 * 30
    assert "200 of 200 table(s) shown" in dom  # the script ran over every table
    png = tmp_path / "report-200.png"
    assert screenshot(page, png) == []
    assert distinct_colours(png) > 50
    keep_artifact(png)


#: appended to a copy of the page (its CSP removed, every table open): where Chromium laid
#: out each chart's legend against its picture, into the title
_LAYOUT = """<script>
var out = [];
function box(el) { return el.getBoundingClientRect(); }
document.querySelectorAll(".plot").forEach(function (p) {
  var s = box(p.querySelector("svg.chart")), l = box(p.querySelector("ul.legend"));
  out.push(p.querySelector("svg.chart").getAttribute("class") + ":" +
           (l.left >= s.right && l.top < s.bottom && l.bottom > s.top ? "beside" : "not"));
});
document.querySelectorAll(".multiples").forEach(function (m) {
  var l = box(m.querySelector("ul.legend")), f = box(m.querySelector("figure"));
  out.push("multiples:" + (l.right <= f.left && l.top < f.bottom ? "beside" : "not"));
});
// each small multiple draws the table's axes, drawn once, through `use`
document.querySelectorAll("svg.cov").forEach(function (s) {
  var u = s.querySelector("use");
  out.push("axes:" + (u && u.getBBox().width > 100 ? "beside" : "not"));
});
document.title = "layout " + out.join("|");
</script></body>"""


def test_every_chart_shows_its_axis_values_and_its_legend_beside_it(tmp_path: Path) -> None:
    chromium()
    results, report = synthetic_report(tables=6, columns=4, loads=8)
    html = to_html(results, report=report)
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    page = page.replace('<details class="table"', '<details open class="table"')
    probe = tmp_path / "layout.html"
    probe.write_text(page.replace("</body>", _LAYOUT), encoding="utf-8")
    dom = dump_dom(probe, tmp_path / "profile")
    [title] = re.findall(r"<title>layout (.*?)</title>", dom)
    placed = title.split("|")
    kinds = {p.split(":")[0] for p in placed}
    assert {"chart timeline", "chart metric", "chart handoff", "multiples", "axes"} <= kinds
    assert [p for p in placed if not p.endswith(":beside")] == []
    # the axis values are in the picture as text a browser draws
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', dom)
    assert {"0%", "100%", "00:00", "07:00"} <= set(ticks)


def test_chromium_renders_the_morning_report(drifted: Project, tmp_path: Path) -> None:
    """The CLI's page after a recorded sweep: what is new on top, each linking to its
    finding's block, no console message."""
    chromium()
    from dlt_contract_ops.history.index import record_sweep

    record_sweep(drifted.root, [], datetime.now(timezone.utc) - timedelta(hours=3))
    out = tmp_path / "report.html"
    proc = drifted.cli("report", "--html", str(out))
    assert out.exists(), proc.stderr
    html = out.read_text(encoding="utf-8")
    links = re.findall(r'<a href="#(f-\w+)">details</a>', html)
    assert len(links) >= 5  # every finding of the warehouse is new since a clean sweep
    png = tmp_path / "morning-report.png"
    assert screenshot(out, png) == []
    assert distinct_colours(png) > 50
    keep_artifact(png)
    dom = dump_dom(out, tmp_path / "profile")
    assert "New since the last sweep" in dom
    assert "(3 h ago)" in dom
    assert all(f'id="{target}"' in dom for target in links)
