"""Severity end to end on the loaded DuckDB warehouse: each finding's severity from its
detector's default and the `[contract_ops.severity]` / `[sources.<X>.contract_ops.severity]`
tables, shown by every format, failing `--fail-on-drift=<severity>` at or above it; a bad
table is one line, exit 2, before anything runs or alerts."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.projects import Project
from tests.servers import Receiver


def _with(project: Project, toml: str) -> None:
    """`toml` appended to the project's config.toml."""
    config = project.root / ".dlt" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n" + toml, encoding="utf-8")


def _findings(project: Project, *args: str) -> list[dict[str, Any]]:
    proc = project.cli("reconcile", *args, "--dry-run", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return [f for r in json.loads(proc.stdout)["results"] for f in r["findings"]]


def _levels(findings: list[dict[str, Any]]) -> dict[tuple[str, str, str], str]:
    return {(f["source"], f["table"], f["drift_type"]): f["severity"] for f in findings}


def test_each_finding_has_its_detectors_default_severity(drifted: Project) -> None:
    found = _levels(_findings(drifted, "--all", "--include-removal"))
    assert found == {
        ("shop", "order_items", "additive"): "warning",
        ("shop", "plain_tbl", "additive"): "warning",
        ("shop_extra", "refunds", "additive"): "warning",
        ("events_src", "events", "additive"): "warning",
        ("events_src", "events", "removal"): "error",  # a declared column went dark
    }


def test_the_project_and_a_source_override_the_default(drifted: Project) -> None:
    _with(drifted, '[contract_ops.severity]\nadditive = "info"\nremoval = "warning"\n'
                   '[sources.shop.contract_ops.severity]\nadditive = "error"\n')
    found = _levels(_findings(drifted, "--all", "--include-removal"))
    assert found == {
        ("shop", "order_items", "additive"): "error",  # the source's table wins
        ("shop", "plain_tbl", "additive"): "error",
        ("shop_extra", "refunds", "additive"): "info",  # the project's table
        ("events_src", "events", "additive"): "info",
        ("events_src", "events", "removal"): "warning",
    }


def test_an_environment_variable_overrides_the_toml(
    drifted: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with(drifted, '[contract_ops.severity]\nadditive = "info"\n')
    monkeypatch.setenv("SOURCES__SHOP_EXTRA__CONTRACT_OPS__SEVERITY__ADDITIVE", "error")
    found = _levels(_findings(drifted, "-s", "shop", "-s", "shop_extra"))
    assert set(found.values()) == {"info", "error"}
    assert found[("shop_extra", "refunds", "additive")] == "error"


@pytest.mark.parametrize(("severity", "flag", "code"), [
    # additive drift alone is a warning by default
    (None, "--fail-on-drift", 3),
    (None, "--fail-on-drift=warning", 3),
    (None, "--fail-on-drift=error", 0),
    ("error", "--fail-on-drift=error", 3),
    ("info", "--fail-on-drift=warning", 0),
    ("info", "--fail-on-drift", 3),  # bare: any finding, as before
    ("info", "--fail-on-drift=info", 3),
])
def test_fail_on_drift_fails_at_or_above_its_severity(
    drifted: Project, severity: str | None, flag: str, code: int
) -> None:
    if severity is not None:
        _with(drifted, f'[contract_ops.severity]\nadditive = "{severity}"\n')
    proc = drifted.cli("reconcile", "-s", "shop", "--dry-run", flag)
    assert proc.returncode == code, proc.stderr


def test_fail_on_drift_error_fails_on_removal_drift(drifted: Project) -> None:
    proc = drifted.cli("reconcile", "-s", "events_src", "--include-removal", "--dry-run",
                       "--fail-on-drift", "error")  # the value as a separate word too
    assert proc.returncode == 3, proc.stderr
    assert drifted.cli("reconcile", "-s", "events_src", "--dry-run",
                       "--fail-on-drift=error").returncode == 0


def test_fail_on_drift_refuses_an_unknown_severity(drifted: Project) -> None:
    proc = drifted.cli("reconcile", "-s", "shop", "--dry-run", "--fail-on-drift=critical")
    assert proc.returncode == 2
    assert "'critical' is not one of" in proc.stderr
    assert "'warning'" in proc.stderr


def test_text_tags_each_finding_and_lists_the_worst_first(drifted: Project) -> None:
    _with(drifted, '[sources.shop.contract_ops.severity]\nadditive = "info"\n'
                   '[sources.events_src.contract_ops.severity]\nadditive = "info"\n')
    proc = drifted.cli("reconcile", "-s", "events_src", "-s", "shop", "--include-removal",
                       "--dry-run")
    assert proc.returncode == 0, proc.stderr
    bullets = [line for line in proc.stdout.splitlines() if line.startswith("  • ")]
    assert [b.split("  id ")[0].rsplit(" ", 1)[1] for b in bullets] == [
        "[info]", "[error]", "[info]", "[info]"]
    assert bullets[1].startswith("  • events: removal drift (1 column(s)) [new] [error]  id ")


def test_ci_formats_map_the_severity(drifted: Project) -> None:
    _with(drifted, '[sources.shop_extra.contract_ops.severity]\nadditive = "info"\n')
    args = ("reconcile", "-s", "events_src", "-s", "shop_extra", "--include-removal",
            "--dry-run", "--format")
    sarif = json.loads(drifted.cli(*args, "sarif").stdout)["runs"][0]
    levels = {(r["properties"]["source"], r["ruleId"]): r["level"] for r in sarif["results"]}
    assert levels == {("events_src", "additive"): "warning", ("events_src", "removal"): "error",
                      ("shop_extra", "additive"): "note"}
    assert {r["properties"]["severity"] for r in sarif["results"]} == {"error", "warning", "info"}

    github = drifted.cli(*args, "github").stdout.splitlines()
    # per source and detector, as the results come
    assert [line.split(" ", 1)[0] for line in github] == ["::warning", "::error", "::notice"]
    assert "removal drift in events_src.events" in github[1]

    # JUnit: an info finding is no failure; it is listed in the case's output
    junit = ET.fromstring(drifted.cli(*args, "junit").stdout)
    cases = {c.get("name"): c for c in junit.iter("testcase")}
    assert cases["shop_extra.additive"].find("failure") is None
    out = cases["shop_extra.additive"].findtext("system-out") or ""
    assert out.startswith("info: additive drift in table `refunds`")
    assert cases["events_src.removal"].find("failure") is not None
    assert cases["events_src.additive"].find("failure") is not None


def test_html_tags_and_ranks_by_severity(drifted: Project) -> None:
    _with(drifted, '[sources.shop.contract_ops.severity]\nadditive = "info"\n')
    page = drifted.root / "report.html"
    proc = drifted.cli("report", "-s", "shop", "-s", "shop_extra", "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    html = page.read_text(encoding="utf-8")
    # each finding's head, in the order the page shows them
    tags = [part.split("</span>")[0]
            for part in html.split('<div class="head"><span class="sev sev-')[1:]]
    assert [t.split('">')[1] for t in tags] == ["warning", "info", "info"]


# -- bad input: one line, exit 2, before anything runs or alerts ---------------------------
BAD_TABLES = [
    pytest.param('[contract_ops.severity]\naddtive = "error"\n',
                 "Unknown detector `addtive` in `[contract_ops.severity]` "
                 "(.dlt/config.toml). Did you mean `additive`?", id="unknown-detector"),
    pytest.param('[contract_ops.severity]\nadditive = "warn"\n',
                 "`additive` in `[contract_ops.severity]` (.dlt/config.toml)", id="bad-severity"),
    pytest.param('[sources.shop_extra.contract_ops.severity]\nremovel = "info"\n',
                 "Unknown detector `removel` in `[sources.shop_extra.contract_ops.severity]` "
                 "(.dlt/config.toml). Did you mean `removal`?", id="unknown-in-a-source"),
    pytest.param('[sources.shop_extra.contract_ops.severity]\nadditive = "Error"\n',
                 "Did you mean `error`?", id="bad-severity-in-a-source"),
    pytest.param('[contract_ops]\nseverity = "error"\n',
                 "`[contract_ops.severity]` must be a table", id="not-a-table"),
]


def _send_to(project: Project, url: str) -> None:
    _with(project, '[contract_ops.alert_sink.webhook]\ntimeout = 2\nretries = 0\n')
    (project.root / ".dlt" / "secrets.toml").write_text(
        f'[contract_ops.alert_sink.webhook]\nurl = "{url}"\n', encoding="utf-8")


@pytest.mark.parametrize(("table", "says"), BAD_TABLES)
def test_a_bad_severity_table_is_one_line_exit_2_and_no_alert(
    drifted: Project, table: str, says: str
) -> None:
    config = drifted.root / ".dlt" / "config.toml"
    # every source reconciled and alerted to a webhook, but for the bad table
    text = config.read_text(encoding="utf-8").replace(
        "[contract_ops]\n", '[contract_ops]\nalert_sinks = ["webhook"]\n', 1)
    if table.startswith("[contract_ops]\n"):  # a key of `[contract_ops]` itself
        text = text.replace('[contract_ops]\n', "[contract_ops]\n" + table.split("\n", 1)[1], 1)
        table = ""
    config.write_text(text + "\n" + table, encoding="utf-8")
    with Receiver() as hook:
        _send_to(drifted, hook.url)
        # the bad table is shop_extra's or the project's: shop, reconciled first, alerts nothing
        proc = drifted.cli("reconcile", "-s", "shop", "-s", "shop_extra")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        [line] = proc.stderr.splitlines()
        assert line.startswith("Error: ")
        assert says in line
        assert proc.stdout == ""
        assert hook.requests == []

        check = drifted.cli("validate", "--format", "json")
        assert check.returncode == 2, check.stdout
        problems = json.loads(check.stdout)["problems"]
        assert [p["rule"] for p in problems if says in p["message"]] in (
            ["config_keys"], ["config_section"])


def test_a_bad_severity_in_the_environment_is_exit_2(
    drifted: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTRACT_OPS__SEVERITY__ADDITIVE", "critical")
    proc = drifted.cli("reconcile", "-s", "shop", "--dry-run")
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert "environment variable `CONTRACT_OPS__SEVERITY__ADDITIVE`" in line
    assert "is 'critical': a severity is one of error, warning, info." in line
