"""`python -m bench.html_report`: how big the HTML report gets and how long Chromium takes.

Builds a synthetic report (no warehouse: the page's inputs are values) of `--tables` tables x
`--columns` declared columns x `--loads` stored loads per table, with the demo's mix of
findings (every fifth table drifted: removal, additive, distribution, rename; one in ten of
those acknowledged) and 30 days of sweep history, renders it, and times headless Chromium
rendering it to a screenshot, minus the same Chromium rendering an empty page (its start-up).

    python -m bench.html_report                      # 200 x 30 x 30, 3 repeats
    python -m bench.html_report --tables 20 --repeats 1
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dlt_contract_ops.core.history import Sweep, summarize
from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile
from dlt_contract_ops.engine.report import Frame, Handoff, Report, TableLoads
from dlt_contract_ops.model.findings import Coverage, DriftFinding, ReconcileResult
from dlt_contract_ops.output.html import to_html

NOW = datetime(2026, 6, 1, 8, 0, tzinfo=timezone.utc)


def _loads(columns: list[str], loads: int, dark: str | None) -> tuple[LoadProfile, ...]:
    start = NOW.timestamp() - loads * 3600.0
    out = []
    for i in range(loads):
        rows = 1000 + (i * 37) % 200
        cols = {}
        for n, c in enumerate(columns):
            non_null = 0 if (c == dark and i >= loads - 3) else rows - (i * n) % 50
            cats = {"open": rows // 3, "solved": rows // 2, "other": 40 if i == loads - 1 else 0} \
                if c == "status" else None
            cols[c] = ColumnProfile(c, non_null, distinct=100 + n, categories=cats)
        out.append(LoadProfile(f"{start + i * 3600.0:.4f}", rows, cols))
    return tuple(out)


def synthetic_report(tables: int = 200, columns: int = 30, loads: int = 30
                     ) -> tuple[list[ReconcileResult], Report]:
    """The results and gathered data of a report over `tables` x `columns` x `loads`."""
    names = ["status", *(f"column_{n:02d}" for n in range(1, columns))]
    findings: list[DriftFinding] = []
    stored: dict[tuple[str, str], TableLoads] = {}
    handoffs: dict[tuple[str, str], list[Handoff]] = {}
    for t in range(tables):
        table = f"table_{t:03d}"
        drifted = t % 5 == 0
        dark = "column_01" if drifted else None
        stored[("warehouse", table)] = TableLoads(tuple(names), _loads(names, loads, dark))
        if not drifted:
            continue
        ack = {"by": "bench", "reason": "known", "until": "2099-01-01T00:00:00+00:00"} \
            if t % 50 == 0 else None
        common = {"source": "warehouse", "resource": table, "table": table}
        findings += [
            DriftFinding(drift_type="removal", columns=["column_01"], **common,
                         coverage={"column_01": Coverage(baseline=0.98, recent=0.0)}),
            DriftFinding(drift_type="additive", columns=["extra"], ack=ack, **common,
                         column_types={"extra": "VARCHAR"}, samples={"extra": ["a", "b"]}),
            DriftFinding(drift_type="distribution", columns=["status"], **common, metrics=[
                {"column": "status", "metric": "category_share", "category": "other",
                 "baseline": 0.0, "current": 0.04, "change": 0.04}]),
            DriftFinding(drift_type="rename", columns=["column_02", "column_2b"], **common,
                         renamed_from="column_02", renamed_to="column_2b", confidence=0.8,
                         reasons=["same type", "one load boundary"]),
        ]
        handoffs[("warehouse", table)] = [Handoff("column_02", "column_2b", tuple(
            (f"{NOW.timestamp() - (loads - i) * 3600.0:.4f}", 1000,
             1000 if i < loads // 2 else 0, 0 if i < loads // 2 else 1000)
            for i in range(loads)))]
    ids = [f.id for f in findings]
    history = summarize([Sweep(NOW - timedelta(hours=h), tuple(ids[: (720 - h) % len(ids) + 1]))
                         for h in range(0, 720, 6)], NOW) if ids else summarize([], NOW)
    results = [ReconcileResult(source="warehouse", destination="duckdb", dataset="bench",
                               findings=findings)]
    frame = Frame((NOW - timedelta(hours=6)).timestamp(), (NOW - timedelta(days=7)).timestamp(),
                  0.2, 0.01)
    return results, Report(results, ("additive", "removal", "rename", "distribution"),
                           {"warehouse": frame}, stored, handoffs, history, NOW)


#: appended to a copy of the page (its CSP removed): the time from navigation to the end of
#: parsing, then after a forced style and layout of the whole page, into the title
_PROBE = ("<script>var p=performance.now();document.body.getBoundingClientRect();"
          "var h=document.documentElement.scrollHeight;"
          "document.title='probe '+p.toFixed(0)+' '+performance.now().toFixed(0)+' '+h"
          "</script></body>")


def _in_page_ms(chromium: str, html: str, work: Path, *, open_all: bool) -> tuple[int, int]:
    """(ms to parse, ms to parse and lay out) as the page itself measures them."""
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    if open_all:
        page = page.replace('<details class="table"', '<details open class="table"')
    probe = work / "probe.html"
    probe.write_text(page.replace("</body>", _PROBE), encoding="utf-8")
    out = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         f"--user-data-dir={work / 'profile'}", "--window-size=1200,900", "--dump-dom",
         probe.resolve().as_uri()],
        check=True, capture_output=True, text=True,
    ).stdout
    found = re.search(r"<title>probe (\d+) (\d+) \d+</title>", out)
    if found is None:
        raise RuntimeError("the probe did not run: no timing in the page's title")
    return int(found[1]), int(found[2])


def _render_seconds(chromium: str, page: Path, work: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         f"--user-data-dir={work / 'profile'}", f"--screenshot={work / 'shot.png'}",
         "--window-size=1200,900", page.resolve().as_uri()],
        check=True, capture_output=True,
    )
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.html_report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=200)
    p.add_argument("--columns", type=int, default=30)
    p.add_argument("--loads", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    started = time.perf_counter()
    results, report = synthetic_report(args.tables, args.columns, args.loads)
    html = to_html(results, generated=NOW.isoformat(), report=report)
    render = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        page, blank = work / "report.html", work / "blank.html"
        page.write_text(html, encoding="utf-8")
        blank.write_text("<!DOCTYPE html><title>x</title>", encoding="utf-8")
        size = page.stat().st_size
        print(f"{args.tables} tables x {args.columns} columns x {args.loads} loads: "
              f"{size / 1024:.0f} KiB ({size / 1024 / max(args.tables, 1):.1f} KiB per table), "
              f"{html.count('<svg')} charts, built and rendered by Python in {render:.2f} s")
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium is None:
            print("chromium not found: no browser figure")
            return 0
        base = [_render_seconds(chromium, blank, work) for _ in range(args.repeats)]
        full = [_render_seconds(chromium, page, work) for _ in range(args.repeats)]
        print(f"chromium --headless --screenshot: report median {statistics.median(full):.2f} s,"
              f" empty page median {statistics.median(base):.2f} s, difference "
              f"{statistics.median(full) - statistics.median(base):.2f} s "
              f"({args.repeats} run(s) each)")
        for open_all in (False, True):
            timings = [_in_page_ms(chromium, html, work, open_all=open_all)
                       for _ in range(args.repeats)]
            print(f"in the page ({'every table open' if open_all else 'as shipped'}): "
                  f"parsed in {statistics.median(t[0] for t in timings):.0f} ms, parsed and "
                  f"laid out in {statistics.median(t[1] for t in timings):.0f} ms (median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
