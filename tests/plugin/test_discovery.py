"""Finding a source's pipeline when `pipeline_name` is not configured, and the `ref` hint."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from dlt_contract_ops.errors import SourceImportError
from dlt_contract_ops.sources.onboarding import LocalPipeline, matching_pipelines
from tests.plugin import project as shop
from tests.plugin.conftest import Loaded
from tests.projects import Project


def _config(loaded: Loaded, toml: str) -> None:
    (loaded.root / ".dlt" / "config.toml").write_text("[runtime]\ndlthub_telemetry = false\n"
                                                       + toml)


def _results(
    loaded: Loaded, *args: str, **env: str
) -> tuple[int, list[dict[str, Any]], str]:
    proc = loaded.ops("reconcile", "--dry-run", "--format", "json", *args, **env)
    return proc.returncode, json.loads(proc.stdout)["results"], proc.stderr


def test_a_missing_pipeline_is_found_by_the_sources_schema(loaded: Loaded) -> None:
    # no pipeline is named `shop`: the one holding schema `shop` is `shop_pipeline`
    _config(loaded, '[sources.shop.contract_ops]\nref = "pipelines.shop:shop"\n'
                    '[sources.events.contract_ops]\nref = "pipelines.shop:events"\n')
    code, results, err = _results(loaded, "--all")
    assert code == 0, err
    assert {(r["source"], r["pipeline"], r["dataset"]) for r in results} == {
        ("shop", shop.SHOP_PIPELINE, shop.SHOP_DATASET),
        ("events", shop.EVENTS_PIPELINE, shop.EVENTS_DATASET),
    }
    assert [f["columns"] for r in results for f in r["findings"]] == [[shop.DRIFTED]]


def test_a_pipeline_named_as_the_source_wins(loaded: Loaded) -> None:
    # as before discovery: a local pipeline of the source's name is the source's pipeline,
    # though schema `shop` is in another one
    _config(loaded, f'[sources.{shop.EVENTS_PIPELINE}.contract_ops]\n'
                    'ref = "pipelines.shop:shop"\n')
    code, results, err = _results(loaded, "--all")
    assert code == 0, err
    assert {(r["pipeline"], r["dataset"]) for r in results} == {
        (shop.EVENTS_PIPELINE, shop.EVENTS_DATASET)
    }


def test_a_configured_target_keeps_the_sources_name(loaded: Loaded) -> None:
    # `destination` and `dataset_name` say where the data is: no lookup, as before
    _config(loaded, '[sources.shop.contract_ops]\nref = "pipelines.shop:shop"\n'
                    f'destination = "duckdb"\ndataset_name = "{shop.SHOP_DATASET}"\n')
    code, results, err = _results(
        loaded, "-s", "shop", DESTINATION__DUCKDB__CREDENTIALS=f"{shop.SHOP_PIPELINE}.duckdb"
    )
    assert code == 0, err
    assert {(r["pipeline"], r["dataset"]) for r in results} == {("shop", shop.SHOP_DATASET)}


def test_no_pipeline_holds_the_schema(loaded: Loaded) -> None:
    _config(loaded, '[sources.ghost.contract_ops]\nref = "pipelines.shop:ghost"\n')
    code, results, _ = _results(loaded, "-s", "ghost")
    assert code == 2  # nothing could run
    # a source with no pipeline on this machine is "not loaded yet": a note, never an alert
    assert results[0]["error"] is None
    error = " ".join(results[0]["notes"])
    assert "`pipeline_name` is not set, no local pipeline is named `ghost` and none holds " \
           "its schema `ghost`" in error
    # the candidates it saw, with their schemas
    assert f"`{shop.EVENTS_PIPELINE}` (schemas `events`); `{shop.SHOP_PIPELINE}` (schemas " \
           "`shop`)" in error
    assert "Set `pipeline_name` in `[sources.ghost.contract_ops]`" in error


def test_two_pipelines_hold_the_schema(loaded: Loaded) -> None:
    pipelines = loaded.data_dir / "pipelines"
    shutil.copytree(pipelines / shop.SHOP_PIPELINE, pipelines / "shop_copy")
    _config(loaded, '[sources.shop.contract_ops]\nref = "pipelines.shop:shop"\n')
    code, results, _ = _results(loaded, "-s", "shop")
    assert code == 2
    assert ("2 local pipelines hold its schema `shop`: `shop_copy` (schemas `shop`), "
            f"`{shop.SHOP_PIPELINE}` (schemas `shop`)") in results[0]["error"]


def _p(name: str, **schemas: set[str]) -> LocalPipeline:
    return LocalPipeline(name, tuple((s, frozenset(t)) for s, t in schemas.items()))


PIPELINES = (
    _p("a", shop={"orders", "customers"}),
    _p("b", shop={"orders"}, other={"x"}),
    _p("c", c={"events", "clicks"}),
    _p("d", shop=set()),
)


@pytest.mark.parametrize(
    ("schema", "tables", "any_schema", "expected"),
    [
        ("shop", {"orders", "customers"}, False, ["a"]),  # most tables wins
        ("shop", {"orders"}, False, ["a", "b"]),  # a tie: both returned
        ("shop", {"nothing_loaded"}, False, []),  # the schema, but none of the tables
        ("shop", set(), False, ["a", "b", "d"]),  # only the schema name known
        ("other", {"x"}, False, ["b"]),
        ("missing", {"orders"}, False, []),
        ("events", {"events"}, True, ["c"]),  # a resource: any schema with all its tables
        ("events", {"events", "nope"}, True, []),
        ("events", set(), True, []),
    ],
)
def test_matching_pipelines(
    schema: str, tables: set[str], any_schema: bool, expected: list[str]
) -> None:
    found = matching_pipelines(schema, tables, PIPELINES, any_schema=any_schema)
    assert [p.name for p in found] == expected


MODULE = """
import dlt
from pydantic import BaseModel


class Issue(BaseModel):
    id: int


@dlt.resource(columns=Issue)
def issues():
    yield {"id": 1}


@dlt.source
def github_source():
    return issues


helper = 42
"""


@pytest.mark.parametrize(
    ("ref", "hint"),
    [
        ("gh.src:github_sorce", "Did you mean `gh.src:github_source`?"),
        ("gh.src:isues", "Did you mean `gh.src:issues`?"),
        # nothing close: the module's dlt sources and resources
        ("gh.src:zzz", "Its dlt sources and resources: `gh.src:github_source`, `gh.src:issues`."),
        # the closest attribute overall would be `helper`: not a source, so not suggested
        ("gh.src:helpers", "Its dlt sources and resources:"),
    ],
)
def test_ref_hint(project: Project, ref: str, hint: str) -> None:
    from dlt_contract_ops.sources.discovery import build_source

    project.module("gh.src", MODULE)
    with pytest.raises(SourceImportError) as info:
        build_source("gh", ref, str(project.root))
    assert f"`gh.src` has no attribute `{ref.partition(':')[2]}`" in str(info.value)
    assert hint in str(info.value)


def test_each_local_pipeline_is_read_once_a_run(loaded: Loaded) -> None:
    """Two sources without `pipeline_name`: each is matched to its pipeline among the local
    ones, its destination and dataset read from that pipeline's state, yet each pipeline's
    state file is opened once for the whole run (the kernel's count, inotify), not once per
    source and step (3 and 3 before)."""
    from tests.file_events import watch

    _config(loaded, '[sources.shop.contract_ops]\nref = "pipelines.shop:shop"\n'
                    '[sources.events.contract_ops]\nref = "pipelines.shop:events"\n')
    pipelines = loaded.data_dir / "pipelines"
    with watch(pipelines / shop.SHOP_PIPELINE) as shop_seen, \
            watch(pipelines / shop.EVENTS_PIPELINE) as events_seen:
        code, results, err = _results(loaded, "--all")
        assert code == 0, err
        assert {r["pipeline"] for r in results} == {shop.SHOP_PIPELINE, shop.EVENTS_PIPELINE}
        assert (shop_seen.opened("state.json"), events_seen.opened("state.json")) == (1, 1)
