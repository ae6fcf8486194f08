"""The source cache: a hit never calls the source function, and changes no finding.

A real project: `shop_models` (the ref) imports `shop_types`, another project module, for one
of its models; a loader without models plants additive, removal, missing, type and contract
drift. Each run is compared with a run that builds the source (`source_cache = false`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.detectors.registry import selected
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import ReconcileResult, results_document
from dlt_contract_ops.settings.files import project_context
from dlt_contract_ops.sources.cache import cache_path, cached_source
from dlt_contract_ops.sources.discovery import build_source, declared_code_sets
from dlt_contract_ops.sources.fingerprints import FORMAT, static_key
from dlt_contract_ops.sources.project_imports import begin_run
from tests.duckdb_baselines import load_once
from tests.projects import Project

#: every detector a sweep can run: the ones needing the models (contract, the code sets of
#: distribution) build the source on first access of a model
DEFAULT_DETECTORS = selected()
DETECTORS = ("additive", "removal", "missing", "type", "rename", "contract", "distribution")
NOW = datetime.now(timezone.utc)

TYPES = """
from datetime import datetime
from typing import Optional

from pydantic import BaseModel


class Customer(BaseModel):
    id: int
    email: Optional[str] = None
    score: Optional[int] = None
    loaded_at: datetime
"""

MODELS = """
from datetime import datetime
from pathlib import Path
from typing import Literal, Optional

import dlt
from pydantic import BaseModel

from shop_types import Customer

CALLS = Path(__file__).with_name("calls.txt")


class Order(BaseModel):
    id: int
    amount: Optional[float] = None
    status: Literal["new", "paid"] = "new"
    legacy_code: Optional[str] = None
    loaded_at: datetime


class Refund(BaseModel):
    id: int


@dlt.source(name="shop")
def shop():
    with CALLS.open("a") as fh:  # every call of the source function leaves a line
        fh.write("called\\n")

    @dlt.resource(columns=Order)
    def orders():
        yield from ()

    @dlt.resource(columns=Customer)
    def customers():
        yield from ()

    @dlt.resource(columns=Refund)
    def refunds():
        yield from ()

    @dlt.resource
    def raw_log():
        yield from ()

    return orders, customers, refunds, raw_log
"""

LOAD = """
from datetime import datetime, timedelta, timezone

import dlt

now = datetime.now(timezone.utc)
pipe = dlt.pipeline("shop_pipe", destination="duckdb", dataset_name="shop_data")
for recent, at in ((False, now - timedelta(days=2)), (True, now - timedelta(minutes=30))):
    orders = []
    customers = []
    for i in range(20):
        order = {"id": i, "amount": i * 1.5, "status": "paid" if i % 2 else "new",
                 "loaded_at": at}
        customer = {"id": i, "email": None if recent else f"u{i}@x.io", "score": f"s{i}",
                    "loaded_at": at}
        if recent:
            order["coupon_code"] = f"C{i}"  # additive drift
            order["status"] = "refunded" if i % 5 == 0 else order["status"]  # contract
        orders.append(order)
        customers.append(customer)
    pipe.run(orders, table_name="orders")
    pipe.run(customers, table_name="customers")
"""


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The loaded warehouse, built once; each test copies the project around it."""
    base = load_once(tmp_path_factory, "cache", lambda project: project.python(LOAD))
    return base / "project" / "shop_pipe.duckdb"


def _written_before_the_run(*paths: Path) -> None:
    """Date files a minute back, as a project's code is older than the run reading it: a
    file whose time is within the clock slack of a build's start is never cached (it may
    have been edited during the build), and a warm build takes less than that slack."""
    then = time.time_ns() - 60 * 10**9
    for path in paths:
        os.utime(path, ns=(then, then))


@pytest.fixture(autouse=True)
def _no_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's modules leave no `.pyc`: these tests edit a module keeping its size and
    its time to the second (or dating it as it was), which Python's bytecode check (size and
    whole-second time) cannot tell from the source it compiled, so a later import would run
    the old code whatever the cache decided. A real edit changes the time."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)


@pytest.fixture
def shop(project: Project, loaded: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    # as in a fresh process: no module of an earlier test's project stands in for these
    for name in ("shop_types", "shop_models"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    (project.root / "shop_pipe.duckdb").write_bytes(loaded.read_bytes())
    _written_before_the_run(project.module("shop_types", TYPES),
                            project.module("shop_models", MODELS))
    project.config('[contract_ops]\nalert_sinks = []\nload_timestamp_column = "loaded_at"\n')
    project.source("shop", "shop_models:shop", pipeline_name="shop_pipe",
                   dataset_name="shop_data")
    return project


def _calls(project: Project) -> int:
    path = project.root / "calls.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _reconcile(
    project: Project, detectors: tuple[str, ...] = DEFAULT_DETECTORS, *, fresh: bool = True,
    **env: str,
) -> list[ReconcileResult]:
    """One reconcile; `fresh`: as a new process (cron) runs it, with none of the project's
    modules imported (else as a long-lived process's next run)."""
    if fresh:
        for name in ("shop_types", "shop_models"):
            sys.modules.pop(name, None)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        results = run(["shop"], detectors=detectors, dry_run=True, project_dir=project.root,
                      removal={"now": NOW})
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert [r.error for r in results if r.error] == []
    return results


def _doc(results: list[ReconcileResult]) -> list[dict[str, Any]]:
    """The results as `--format json` prints them, without the timings."""
    out = []
    for r in results_document(results)["results"]:
        out.append({k: v for k, v in r.items() if k != "duration_s"})
    return out


def _uncached(
    project: Project, detectors: tuple[str, ...] = DEFAULT_DETECTORS
) -> list[dict[str, Any]]:
    return _doc(_reconcile(project, detectors, CONTRACT_OPS__SOURCE_CACHE="false"))


def _entry(project: Project) -> Path:
    data_dir = os.environ["DLT_DATA_DIR"]
    return cache_path(str(project.root), "shop", data_dir)


def _found(results: list[dict[str, Any]]) -> set[tuple[str, str, tuple[str, ...]]]:
    return {(r["detector"], f["table"], tuple(f["columns"]))
            for r in results for f in r["findings"]}


def test_a_hit_finds_what_a_build_finds_with_every_detector(shop: Project) -> None:
    built = _uncached(shop, DETECTORS)
    assert _calls(shop) == 1
    assert not _entry(shop).exists()  # `source_cache = false` neither reads nor writes

    first = _doc(_reconcile(shop, DETECTORS))  # a miss: built, then cached
    assert _calls(shop) == 2
    assert _entry(shop).is_file()
    # a hit; contract and distribution read the models: the source is built on first access
    hit = _doc(_reconcile(shop, DETECTORS))
    assert _calls(shop) == 3
    assert first == built
    assert hit == built
    # every kind of drift the workload plants was found, so the equality means something
    assert {d for d, _, _ in _found(built)} >= {"additive", "removal", "missing", "type",
                                                 "contract"}
    assert ("additive", "orders", ("coupon_code",)) in _found(built)


def test_a_hit_of_the_default_detectors_calls_no_source_function(shop: Project) -> None:
    built = _doc(_reconcile(shop, DEFAULT_DETECTORS, CONTRACT_OPS__SOURCE_CACHE="false"))
    assert _calls(shop) == 1
    assert _doc(_reconcile(shop, DEFAULT_DETECTORS)) == built  # the miss
    assert _calls(shop) == 2
    for _ in range(2):  # hits: only the expected columns are needed
        assert _doc(_reconcile(shop, DEFAULT_DETECTORS)) == built
    assert _calls(shop) == 2
    assert {d for d, _, _ in _found(built)} == {"additive", "missing", "type"}


def test_the_cached_source_equals_the_built_one(shop: Project) -> None:
    begin_run()
    with project_context(shop.root) as pdir:
        built = build_source("shop", "shop_models:shop", pdir)
        miss = cached_source("shop", "shop_models:shop", pdir)
        hit = cached_source("shop", "shop_models:shop", pdir)
    assert miss.real is None
    assert hit.real is not None
    assert not hit.real.done
    for field in ("name", "schema_name", "tables", "notes", "resources", "standalone"):
        assert getattr(hit, field) == getattr(built, field), field
    assert type(hit.naming) is type(built.naming)
    assert hit.naming.max_length == built.naming.max_length
    assert sorted(hit.models) == sorted(built.models) == ["customers", "orders", "refunds"]
    assert "orders" in hit.models
    assert "raw_log" not in hit.models
    assert not hit.real.done  # membership is known without a build
    assert hit.models["orders"].model_fields.keys() == built.models["orders"].model_fields.keys()
    assert hit.real.done
    assert hit.obj is hit.real.get().obj
    assert hit.obj is not None


def test_a_hit_serves_the_declared_code_sets_without_building(shop: Project) -> None:
    """What the load profiles count value by value (`status: Literal["new", "paid"]`)."""
    begin_run()
    with project_context(shop.root) as pdir:
        built = build_source("shop", "shop_models:shop", pdir)
        cached_source("shop", "shop_models:shop", pdir)
        hit = cached_source("shop", "shop_models:shop", pdir)
    assert hit.real is not None
    for table in built.tables:
        assert hit.code_sets(table) == built.code_sets(table) == declared_code_sets(built, table)
    orders = next(t for t in built.tables if t.table == "orders")
    assert hit.code_sets(orders) == {"status": ("new", "paid")}
    assert not hit.real.done
    # names shortened for a destination: read from the models again
    short = replace(hit, codes=None)
    assert short.code_sets(orders) == {"status": ("new", "paid")}
    assert hit.real.done


def test_editing_the_model_invalidates_the_entry(shop: Project) -> None:
    before = _found(_doc(_reconcile(shop)))
    assert ("additive", "orders", ("coupon_code",)) in before
    _reconcile(shop)
    calls = _calls(shop)

    # the model learns the column: the next run expects it
    _written_before_the_run(shop.module("shop_models", MODELS.replace(
        "    legacy_code: Optional[str] = None\n",
        "    legacy_code: Optional[str] = None\n    coupon_code: Optional[str] = None\n")))
    after = _found(_doc(_reconcile(shop)))
    assert _calls(shop) == calls + 1
    assert not any(d == "additive" and t == "orders" for d, t, _ in after)
    assert _doc(_reconcile(shop)) == _uncached(shop)


def test_an_edit_of_an_imported_project_module_invalidates_the_entry(shop: Project) -> None:
    _reconcile(shop)
    path = shop.root / "shop_types.py"
    stat = path.stat()
    # same size, same modification time: only the content tells (`score` -> `grade`)
    path.write_text(TYPES.replace("score:", "grade:"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    calls = _calls(shop)
    results = _doc(_reconcile(shop))
    assert _calls(shop) == calls + 1
    assert ("missing", "customers", ("grade",)) in _found(results)
    assert results == _uncached(shop)


def test_a_module_imported_before_the_run_is_never_cached(shop: Project) -> None:
    """A long-lived process: the ref's package is imported afresh each run, another project
    module is not. What the build read may be older than the file: nothing is cached."""
    _reconcile(shop)  # cached
    assert _reconcile(shop, fresh=False)  # a hit in the same process
    calls = _calls(shop)
    (shop.root / "shop_types.py").write_text(TYPES.replace("score:", "grade:"))
    _written_before_the_run(shop.root / "shop_types.py")
    _reconcile(shop, fresh=False)  # a miss, built with the `shop_types` imported before
    assert _calls(shop) == calls + 1
    assert "grade" not in _entry(shop).read_text()
    _reconcile(shop, fresh=False)
    assert _calls(shop) == calls + 2  # still a miss: nothing stale was cached
    results = _doc(_reconcile(shop))  # a fresh process
    assert ("missing", "customers", ("grade",)) in _found(results)
    assert _calls(shop) == calls + 3
    assert "grade" in _entry(shop).read_text()


@pytest.mark.parametrize("damage", ["garbage", "not an object", "wrong layout", "directory"])
def test_a_corrupt_or_unreadable_entry_is_ignored_and_rebuilt(
    shop: Project, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    expected = _doc(_reconcile(shop))
    entry = _entry(shop)
    assert entry.is_file()
    if damage == "garbage":
        entry.write_text("{not json")
    elif damage == "not an object":
        entry.write_text("[1, 2]")
    elif damage == "wrong layout":
        doc = json.loads(entry.read_text())
        doc["source"]["tables"] = [{"resource": "orders"}]
        entry.write_text(json.dumps(doc))
    else:
        entry.unlink()
        entry.mkdir()
    calls = _calls(shop)
    with caplog.at_level(logging.DEBUG, logger="dlt_contract_ops"):
        assert _doc(_reconcile(shop)) == expected
    assert _calls(shop) == calls + 1  # rebuilt
    assert any("unreadable" in r.getMessage() for r in caplog.records)
    if damage == "directory":  # cannot be replaced: every run builds, and says so
        assert any("not written" in r.getMessage() for r in caplog.records)
        return
    assert json.loads(entry.read_text())["format"] == FORMAT  # rewritten
    assert _doc(_reconcile(shop)) == expected
    assert _calls(shop) == calls + 1  # and served again


def test_configuration_and_versions_are_part_of_the_key(
    shop: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    with project_context(shop.root) as pdir:
        key = static_key("shop", "shop_models:shop", pdir)
        assert static_key("shop", "shop_models:shop", pdir) == key
        assert static_key("shop", "shop_models:other", pdir) != key
        monkeypatch.setenv("SOURCES__SHOP__LIMIT", "5")  # dlt could pass it to the source
        assert static_key("shop", "shop_models:shop", pdir) != key
        monkeypatch.delenv("SOURCES__SHOP__LIMIT")
        monkeypatch.setattr("dlt_contract_ops.version.__version__", "99.0")
        assert static_key("shop", "shop_models:shop", pdir) != key
    shop.secrets("[sources.shop]\ntoken = \"x\"\n")  # a config file dlt reads
    with project_context(shop.root) as pdir:
        assert static_key("shop", "shop_models:shop", pdir) != key


#: a project's own naming convention (dlt's `schema.naming`): snake_case by another name
NAMING = """
from dlt.common.normalizers.naming.snake_case import NamingConvention as SnakeCase


class NamingConvention(SnakeCase):
    pass
"""


def test_a_naming_the_cache_cannot_remake_is_not_cached(
    shop: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A naming convention of the project's own (not dlt's) is not one the cache remakes: the
    source is built on every run, and no entry is written; the findings are a build's."""
    _written_before_the_run(shop.module("shop_naming", NAMING))
    monkeypatch.delitem(sys.modules, "shop_naming", raising=False)
    monkeypatch.setenv("SCHEMA__NAMING", "shop_naming")
    first = _doc(_reconcile(shop))
    assert _doc(_reconcile(shop)) == first
    assert _calls(shop) == 2
    assert not _entry(shop).exists()
    assert ("additive", "orders", ("coupon_code",)) in _found(first)


def test_a_module_written_as_the_build_starts_is_cached_only_once_it_is_older(
    shop: Project,
) -> None:
    """A file whose time is within the clock slack of the build's start may have been edited
    while the build read it: that run is not cached; a later run, the file unchanged, is."""
    path = shop.root / "shop_models.py"
    # dated a little after now, so the build starts within the slack of it however slowly
    # the run gets there (a time of exactly now went stale on a busy machine)
    soon = time.time_ns() + 10_000_000_000
    os.utime(path, ns=(soon, soon))
    _reconcile(shop)
    assert not _entry(shop).exists()
    _written_before_the_run(path)
    _reconcile(shop)
    assert _entry(shop).is_file()
    calls = _calls(shop)
    _reconcile(shop)
    assert _calls(shop) == calls  # a hit


def test_an_edit_of_a_model_module_outside_the_project_invalidates_the_entry(
    shop: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`shop_types` lives in a folder on `PYTHONPATH` outside the project (a shared models
    package): every module the build imported is fingerprinted, wherever it lives."""
    outside = tmp_path / "shared_models"
    outside.mkdir()
    (shop.root / "shop_types.py").rename(outside / "shop_types.py")
    monkeypatch.syspath_prepend(str(outside))
    monkeypatch.delitem(sys.modules, "shop_types", raising=False)  # popped after the test
    before = _found(_doc(_reconcile(shop)))
    assert not any(t == "customers" and d == "missing" for d, t, _ in before)
    _reconcile(shop)
    calls = _calls(shop)

    # a required field the warehouse does not have
    (outside / "shop_types.py").write_text(TYPES + "    tier: str\n")
    _written_before_the_run(outside / "shop_types.py")
    results = _doc(_reconcile(shop))
    assert _calls(shop) == calls + 1  # rebuilt
    assert ("missing", "customers", ("tier",)) in _found(results)
    assert results == _uncached(shop)


def test_a_cron_whose_environment_changes_every_run_hits_the_cache(shop: Project) -> None:
    """A run id or a timestamp in the environment, `__` in its name or not, is no part of
    the source: every run after the first is served from the cache."""
    expected = _doc(_reconcile(shop, RUN_ID="1", JOB__STARTED_AT="2026-12-03T07:00"))
    assert _calls(shop) == 1
    for run_id in ("2", "3"):
        again = _reconcile(shop, RUN_ID=run_id, JOB__STARTED_AT=f"2026-12-03T0{run_id}:00",
                           SOME__TIMESTAMP=run_id)
        assert _doc(again) == expected
    assert _calls(shop) == 1


@pytest.mark.parametrize(
    "variable",
    ["SOURCES__SHOP__API_KEY", "SOURCES__SHOP_MODELS__SHOP__LIMIT", "SHOP_PIPE__SOURCES__LIMIT",
     "SCHEMA__FLAVOUR", "NORMALIZE__FLAVOUR", "DESTINATION__DUCKDB__FLAVOUR", "DLT_FLAVOUR"],
)
def test_a_variable_that_may_shape_the_source_misses_the_cache(
    shop: Project, variable: str
) -> None:
    """A source's config section (under its module's name or the declared one), the
    pipeline's, the schema's, the destination's, dlt's own paths: a change is a build."""
    _reconcile(shop, **{variable: "a"})
    _reconcile(shop, **{variable: "a"})
    assert _calls(shop) == 1  # the same value: a hit
    _reconcile(shop, **{variable: "b"})
    assert _calls(shop) == 2
