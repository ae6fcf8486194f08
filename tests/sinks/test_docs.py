"""docs/sinks.md and docs/writing-a-sink.md stay true to the code."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.sinks.logging_sink import drift_line
from dlt_contract_ops.sinks.pagerduty import PagerDutySink
from dlt_contract_ops.sinks.sentry_sink import SentrySink
from dlt_contract_ops.sinks.webhook import WebhookSink
from tests.projects import Project
from tests.sinks.app_project import CONFIG

ROOT = Path(__file__).resolve().parents[2]
SINKS = (ROOT / "docs" / "sinks.md").read_text(encoding="utf-8")
WRITING = (ROOT / "docs" / "writing-a-sink.md").read_text(encoding="utf-8")
FIXTURE = ROOT / "tests" / "fixtures" / "sink_plugin"
ROW = re.compile(r"^\| `(\w+)` \| ([^|]+) \|")


def _section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize(("heading", "cls"), [
    ("`sentry`", SentrySink), ("`webhook`", WebhookSink), ("`pagerduty`", PagerDutySink),
])
def test_option_tables_match_the_constructors(heading: str, cls: type) -> None:
    documented = {}
    for line in _section(SINKS, heading).splitlines():
        m = ROW.match(line)
        if m:
            documented[m.group(1)] = m.group(2).strip()
    params = dict(inspect.signature(cls).parameters.items())
    assert set(documented) == set(params)
    for name, p in params.items():
        if p.default is inspect.Parameter.empty:
            assert documented[name].startswith("required"), name
        elif p.default is None:
            assert documented[name] in ("none", '`"production"`'), name
        else:
            shown = f'"{p.default}"' if isinstance(p.default, str) else str(p.default).lower()
            assert documented[name] == f"`{shown}`", name
        secret: frozenset[str] = getattr(cls, "secret_options", frozenset())
        assert ("**secret**" in documented[name]) == (name in secret), name


def test_logging_example_is_what_the_sink_writes() -> None:
    [example] = _blocks(_section(SINKS, "`logging`"), "text")[:1]
    line = example.strip()
    finding = DriftFinding(
        drift_type="additive",
        pipeline="app_pipeline",
        source="app",
        resource="events",
        table="events",
        columns=["payload size"],
        reproduce='SELECT "payload size" FROM "app_raw"."events" LIMIT 5',
    )
    assert line == drift_line(finding)


def test_plugin_guide_shows_the_tested_package() -> None:
    [code] = _blocks(_section(WRITING, "The example"), "python")
    [toml] = _blocks(_section(WRITING, "Register it"), "toml")[:1]
    assert code == (FIXTURE / "contract_ops_jsonl_sink" / "__init__.py").read_text()
    assert toml == (FIXTURE / "pyproject.toml").read_text()


def _write(project: Project, extra: str, secrets: str = "") -> None:
    (project.root / ".dlt" / "config.toml").write_text(CONFIG + extra)
    if secrets:
        (project.root / ".dlt" / "secrets.toml").write_text(secrets)


def test_validate_example_is_real_output(app_project: Project) -> None:
    _write(
        app_project,
        '\n[contract_ops]\nalert_sinks = ["logging", "sentri", "webhook"]\n'
        '[contract_ops.alert_sink.webhook]\nurl = "http://127.0.0.1:9/hook"\n',
    )
    proc = app_project.cli("validate")
    assert proc.returncode == 2
    [example] = _blocks(_section(SINKS, "`validate` and `sinks`"), "text")[:1]
    assert proc.stdout == example


def test_sinks_example_is_real_output(app_project: Project) -> None:
    _write(app_project, '\n[contract_ops]\nalert_sinks = ["logging", "webhook"]\n')
    proc = app_project.cli("sinks")
    assert proc.returncode == 0
    example = _blocks(_section(SINKS, "`validate` and `sinks`"), "text")[1]
    assert proc.stdout == example
