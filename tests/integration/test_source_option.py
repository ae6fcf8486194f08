"""`-s NAME` selects in every command what it selects in `reconcile`: the table NAME and the
tables whose `source_name` is NAME (one dlt source loaded by several pipelines), through
`sources.onboarding.selected_sources`. A command on several tables (`contract export`,
`models infer`) takes them all; one on one table (`gate check`, `profile`, `profiles
rebuild`, `contract snapshot`/`check`/`lint`, `gate finish`) takes the only one, and a name
of several is one line, exit 2. Before, all of these refused a `source_name` as an unknown
source. Real loads into DuckDB by two dlt pipelines."""

from __future__ import annotations

import json

import pytest

from tests.projects import Project

APP = """
import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    kind: str


@dlt.resource(name="events", columns=Event)
def events():
    yield [{"id": i, "kind": "click"} for i in range(5)]


@dlt.resource(name="visits")
def visits():
    yield [{"id": i, "page": "/"} for i in range(3)]


@dlt.source(name="app")
def app():
    return events, visits
"""

#: the declared tables of source `app`, one per pipeline: no table is named `app`
PIPELINES = ("app_one", "app_two")


def _project(project: Project, pipelines: tuple[str, ...]) -> Project:
    project.module("pipelines.app", APP)
    project.config("[runtime]\ndlthub_telemetry = false\n[contract_ops]\nalert_sinks = []\n")
    for name in pipelines:
        project.source(name, "pipelines.app:app", pipeline_name=name, dataset_name="app_raw",
                       source_name="app")
    project.python(
        "import dlt\nfrom pipelines.app import app\n"
        + "".join(f'dlt.pipeline("{p}", destination="duckdb", dataset_name="app_raw")'
                  ".run(app())\n" for p in pipelines)
    )
    return project


@pytest.fixture
def two(project: Project) -> Project:
    return _project(project, PIPELINES)


@pytest.fixture
def one(project: Project) -> Project:
    return _project(project, PIPELINES[:1])


def test_export_and_infer_take_every_table_of_the_source(two: Project) -> None:
    swept = two.cli("reconcile", "-s", "app", "--dry-run", "--format", "json")
    assert swept.returncode == 0, swept.stderr
    results = json.loads(swept.stdout)["results"]
    assert list(dict.fromkeys(r["source"] for r in results)) == list(PIPELINES)

    exported = two.cli("contract", "export", "-s", "app", "--out", "odcs")
    assert exported.returncode == 0, exported.stderr
    assert sorted(p.name for p in (two.root / "odcs").iterdir()) == [
        "app_one.odcs.yaml", "app_two.odcs.yaml"]

    inferred = two.cli("models", "infer", "-s", "app", "--dry-run", "--format", "json")
    assert inferred.returncode == 0, inferred.stderr
    doc = json.loads(inferred.stdout)
    # `visits` has no model: one module per table of each pipeline's source
    assert sorted((m["source"], m["resource"]) for m in doc["models"]) == [
        ("app_one", "visits"), ("app_two", "visits")]


@pytest.mark.parametrize("args", [
    ("gate", "check"), ("gate", "finish"), ("profile",), ("profiles", "rebuild"),
    ("contract", "lint"), ("contract", "snapshot", "--version", "1.0.0"),
    ("contract", "check"),
])
def test_a_command_on_one_table_refuses_a_source_of_two_in_one_line(
    two: Project, args: tuple[str, ...]
) -> None:
    proc = two.cli(*args, "-s", "app")
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr.splitlines() == [
        "Error: `-s app` selects the 2 declared tables of source `app` (one per pipeline: "
        "app_one, app_two), and this command takes one: name one (`-s app_one`), or run the "
        "command once for each."]


def test_a_command_on_one_table_takes_the_only_table_of_the_source(one: Project) -> None:
    checked = one.cli("gate", "check", "-s", "app", "--format", "json")
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["pipeline"] == "app_one"

    profiled = one.cli("profile", "-s", "app", "--table", "events", "--format", "json")
    assert profiled.returncode == 0, profiled.stderr
    doc = json.loads(profiled.stdout)
    assert doc["source"] == "app_one"
    assert {r["rows"] for r in doc["tables"]["events"]} == {5}

    rebuilt = one.cli("profiles", "rebuild", "-s", "app")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stdout.startswith("Dropped ")
    assert rebuilt.stdout.rstrip().endswith("of source `app_one`.")

    snapped = one.cli("contract", "snapshot", "-s", "app", "--version", "1.0.0")
    assert snapped.returncode == 0, snapped.stderr
    assert (one.root / "contracts" / "app_one" / "1.0.0").is_dir()
    assert one.cli("contract", "check", "-s", "app").returncode == 0
    assert one.cli("contract", "lint", "-s", "app").returncode in (0, 1)  # judged, not refused


@pytest.mark.parametrize("args", [
    ("reconcile",), ("report", "--html", "r.html"), ("contract", "export", "--out", "odcs"),
    ("models", "infer", "--dry-run"), ("gate", "check"), ("profile",), ("contract", "lint"),
])
def test_a_name_close_to_a_source_name_is_suggested(two: Project, args: tuple[str, ...]) -> None:
    """`-s appp` is a typo of `app`, the `source_name` of both tables, which `-s` takes too.
    Before, the did-you-mean looked at the declared tables alone (`app_one`, `app_two`: not
    close enough), and suggested nothing."""
    proc = two.cli(*args, "-s", "appp")
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr.splitlines() == [
        "Error: Unknown source `appp`: add a `[sources.appp.contract_ops]` table with "
        '`ref = "module:attribute"` to .dlt/config.toml. Declared sources: app_one, app_two. '
        "Did you mean `app` (the `source_name` of app_one, app_two)?"]


def test_a_declared_name_is_still_suggested_before_a_source_name(two: Project) -> None:
    proc = two.cli("gate", "check", "-s", "app_on")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.rstrip().endswith("Did you mean `app_one`?"), proc.stderr
