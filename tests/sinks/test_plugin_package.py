"""A third-party sink package, built and pip-installed into a temporary folder, found through
the real `dlt_contract_ops.alert_sinks` entry-point path (docs/writing-a-sink.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.projects import Project
from tests.sinks.app_project import CONFIG

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sink_plugin"


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install --target` of the fixture package (built from a copy, so the source tree
    stays clean); nothing is installed into the venv."""
    base = tmp_path_factory.mktemp("sink_plugin")
    source = base / "src"
    shutil.copytree(FIXTURE, source)
    site = base / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-input", "--disable-pip-version-check", "--target", str(site), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(site.glob("contract_ops_jsonl_sink-0.3.0.dist-info/entry_points.txt"))
    return site


def _cli(project: Project, site: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "dlt_contract_ops.cli", *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _use_jsonl(project: Project, options: str = 'path = "alerts.jsonl"\n') -> None:
    """(Re)write the project's config.toml with the plugin enabled."""
    (project.root / ".dlt" / "config.toml").write_text(
        CONFIG + '\n[contract_ops]\nalert_sinks = ["jsonl"]\n'
        "[contract_ops.alert_sink.jsonl]\n" + options
    )


def test_sinks_lists_the_plugin_and_its_distribution(
    app_project: Project, plugin_site: Path
) -> None:
    _use_jsonl(app_project)
    proc = _cli(app_project, plugin_site, "sinks", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = {s["name"]: s for s in json.loads(proc.stdout)["sinks"]}
    assert rows["jsonl"] == {
        "name": "jsonl",
        "object": "contract_ops_jsonl_sink:JsonlSink",
        "distribution": "contract-ops-jsonl-sink",
        "version": "0.3.0",
        "enabled": True,
    }
    assert rows["logging"]["distribution"] == "dlt-contract-ops"


def test_reconcile_emits_through_the_plugin(app_project: Project, plugin_site: Path) -> None:
    _use_jsonl(app_project)
    proc = _cli(app_project, plugin_site, "reconcile", "--all")
    assert proc.returncode == 0, proc.stderr
    [line] = (app_project.root / "alerts.jsonl").read_text().splitlines()
    event = json.loads(line)
    assert (event["event"], event["source"], event["resource"]) == ("drift", "app", "events")
    assert event["columns"] == ["payload size"]
    assert "dlt_contract_ops.alerts" not in proc.stderr  # no fallback to logging


def test_validate_constructs_the_plugin(app_project: Project, plugin_site: Path) -> None:
    _use_jsonl(app_project, 'paht = "alerts.jsonl"\n')
    proc = _cli(app_project, plugin_site, "validate", "--format", "json")
    assert proc.returncode == 2  # `reconcile` refuses a sink that cannot be built
    problems = json.loads(proc.stdout)["problems"]
    assert [(p["key"], p["file"]) for p in problems] == [
        ("contract_ops.alert_sink.jsonl.paht", ".dlt/config.toml"),
        ("contract_ops.alert_sink.jsonl.path", "(not set)"),
    ]
    assert "Did you mean `path`?" in problems[0]["message"]
    _use_jsonl(app_project)
    assert _cli(app_project, plugin_site, "validate").returncode == 0


def test_without_the_package_the_name_is_unknown(app_project: Project) -> None:
    _use_jsonl(app_project)
    proc = _cli(app_project, None, "reconcile", "--all")
    assert proc.returncode == 2, proc.stderr  # refused before the sweep, nothing sent
    [line] = proc.stderr.splitlines()
    assert line.startswith("Error: Unknown alert sink 'jsonl'.")
    assert not (app_project.root / "alerts.jsonl").exists()
