"""Source discovery and per-source failures through real dlt projects on DuckDB."""

from __future__ import annotations

import logging
import re

import duckdb
import pytest

from dlt_contract_ops import reconcile_source
from dlt_contract_ops.engine.reconcile import run
from tests.integration import shop
from tests.projects import Project

EVENTS = """
from typing import Optional

import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    userId: Optional[str] = None


@dlt.resource(name="OrderItems", columns=Event)
def order_items():
    yield [{"id": i, "userId": f"u{i}"} for i in range(3)]


@dlt.source(name="evt")
def evt():
    return order_items


built_source = evt()
"""


def _load_events(project: Project, dataset: str = "evt_data", naming: str | None = None) -> None:
    project.module("pipes.evt", EVENTS)
    if naming:
        # the source schema's own naming convention, the way a dlt user configures it
        project.config(f'[sources.evt.schema]\nnaming = "{naming}"\n')
    project.python(
        f"""
        import dlt
        from pipes.evt import evt
        dlt.pipeline("evt_pipe", destination="duckdb", dataset_name="{dataset}").run(evt())
        """
    )


def _add_column(project: Project, table: str, column: str, dataset: str = "evt_data") -> None:
    with duckdb.connect(str(project.root / "evt_pipe.duckdb")) as con:
        con.execute(f'ALTER TABLE {dataset}."{table}" ADD COLUMN "{column}" VARCHAR')
        con.execute(f"UPDATE {dataset}.\"{table}\" SET \"{column}\" = 'x'")


@pytest.mark.parametrize(
    ("naming", "table", "model_column", "drifted"),
    [
        # dlt's default: the model's userId lands as user_id; a live `userId` is drift
        (None, "order_items", "user_id", "userId"),
        # case-sensitive conventions keep userId and OrderItems: a live `user_id` is drift
        ("sql_cs_v1", "OrderItems", "userId", "user_id"),
        ("direct", "OrderItems", "userId", "user_id"),
    ],
)
def test_the_source_schemas_own_naming_convention(
    project: Project, naming: str | None, table: str, model_column: str, drifted: str
) -> None:
    _load_events(project, naming=naming)
    with duckdb.connect(str(project.root / "evt_pipe.duckdb"), read_only=True) as con:
        live = {r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
        ).fetchall()}
    assert model_column in live  # dlt really landed the model's column under this name
    _add_column(project, table, drifted)
    project.source("evt", "pipes.evt:evt", pipeline_name="evt_pipe", dataset_name="evt_data")
    result = reconcile_source("evt", dry_run=True, project_dir=project.root)
    assert result.error is None, result.error
    (finding,) = result.findings
    assert (finding.resource, finding.table, finding.columns) == ("OrderItems", table, [drifted])
    assert finding.samples == {drifted: ["x", "x", "x"]}


@pytest.mark.parametrize(
    "ref",
    [
        "pipes.evt:evt",  # a @dlt.source function
        "pipes.evt:built_source",  # a DltSource
        "pipes.evt:order_items",  # a @dlt.resource
    ],
)
def test_refs_to_a_source_function_a_source_or_a_resource(project: Project, ref: str) -> None:
    _load_events(project)
    _add_column(project, "order_items", "extra")
    project.source("evt", ref, pipeline_name="evt_pipe", dataset_name="evt_data")
    result = reconcile_source("evt", dry_run=True, project_dir=project.root)
    assert result.error is None, result.error
    assert [(f.resource, f.columns) for f in result.findings] == [("OrderItems", ["extra"])]


def test_destination_and_dataset_come_from_the_attached_pipeline(project: Project) -> None:
    # the pipeline asked for `Evt_Data`; dlt normalizes the dataset name like any identifier
    _load_events(project, dataset="Evt_Data")
    _add_column(project, "order_items", "extra")
    project.source("evt", "pipes.evt:evt", pipeline_name="evt_pipe", destination=None)
    result = reconcile_source("evt", dry_run=True, project_dir=project.root)
    assert result.error is None, result.error
    assert (result.pipeline, result.destination, result.dataset) == (
        "evt_pipe",
        "duckdb",
        "evt_data",
    )
    assert [f.columns for f in result.findings] == [["extra"]]


def test_configured_dataset_name_is_normalized_as_dlt_does(project: Project) -> None:
    _load_events(project, dataset="Evt_Data")
    _add_column(project, "order_items", "extra")
    project.source("evt", "pipes.evt:evt", pipeline_name="evt_pipe", dataset_name="Evt_Data")
    result = reconcile_source("evt", dry_run=True, project_dir=project.root)
    assert result.error is None, result.error
    assert result.dataset == "evt_data"
    assert [f.columns for f in result.findings] == [["extra"]]


def test_without_destination_config_or_local_state(project: Project) -> None:
    project.module("pipes.evt", EVENTS)
    project.source("evt", "pipes.evt:evt", pipeline_name="never_ran", destination=None)
    result = reconcile_source("evt", dry_run=True, project_dir=project.root)
    # never run here and nowhere to look: "not loaded yet", a note (not an alert), not green
    assert result.error is None
    assert result.findings == []
    [note] = result.notes
    assert "not loaded yet" in note
    assert "`never_ran`" in note
    assert "`destination` and `dataset_name`" in note
    assert "[sources.evt.contract_ops]" in note


TOKEN_SOURCE = """
import dlt
from pydantic import BaseModel


class Issue(BaseModel):
    id: int


@dlt.source(name="tracker")
def tracker(api_token: str = dlt.secrets.value):
    return dlt.resource([{"id": 1}], name="issues", columns=Issue)
"""


def test_missing_source_config_names_the_key_and_how_to_set_it(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.module("pipes.tracker", TOKEN_SOURCE)
    project.source("tracker", "pipes.tracker:tracker", pipeline_name="tracker_pipe",
                   dataset_name="tracker_data")
    with monkeypatch.context() as env:  # the pipeline's own run had its token
        env.setenv("SOURCES__TRACKER__TRACKER__API_TOKEN", "run-token")
        project.python(
            """
            import dlt
            from pipes.tracker import tracker
            dlt.pipeline("tracker_pipe", destination="duckdb", dataset_name="tracker_data").run(
                tracker()
            )
            """
        )
    result = reconcile_source("tracker", dry_run=True, project_dir=project.root)
    assert result.error is not None
    assert result.findings == []
    assert "missing `api_token` in `[sources.tracker.tracker]`" in result.error
    assert ".dlt/secrets.toml" in result.error
    match = re.search(r"environment variables? \(?`([A-Z_]+)`", result.error)
    assert match is not None
    assert match.group(1) == "SOURCES__TRACKER__TRACKER__API_TOKEN"

    # following the advice is enough: the source builds and reconciles clean
    monkeypatch.setenv(match.group(1), "secret-token")
    fixed = reconcile_source("tracker", dry_run=True, project_dir=project.root)
    assert fixed.error is None, fixed.error
    assert (fixed.dataset, fixed.findings, fixed.notes) == ("tracker_data", [], [])


@pytest.mark.parametrize(
    ("module", "code", "ref", "expected"),
    [
        (None, None, "pipes.nothere:src", ["Cannot import `pipes.nothere`", "ModuleNotFoundError"]),
        ("pipes.broken", "import dlt\nraise RuntimeError('boom at import')\n", "pipes.broken:src",
         ["Cannot import `pipes.broken`", "RuntimeError: boom at import"]),
        ("pipes.empty", "X = 1\n", "pipes.empty:src", ["`pipes.empty` has no attribute `src`"]),
        ("pipes.empty", "X = 1\n", "pipes.empty:X", ["`pipes.empty:X`", "int"]),
        ("pipes.raising", "def src():\n    raise ValueError('bad call')\n", "pipes.raising:src",
         ["`pipes.raising:src`", "bad call"]),
    ],
)
def test_import_failures_name_the_module(
    project: Project, module: str | None, code: str | None, ref: str, expected: list[str]
) -> None:
    if module and code:
        project.module(module, code)
    project.source("bad", ref, dataset_name="bad_data")
    result = reconcile_source("bad", dry_run=True, project_dir=project.root)
    assert result.error is not None
    for text in expected:
        assert text in result.error
    assert "`bad`" in result.error  # the source is named too


def test_a_failing_source_does_not_stop_the_others(shop_project: Project) -> None:
    config = shop_project.root / ".dlt" / "config.toml"
    config.write_text(
        config.read_text() + '\n[sources.broken.contract_ops]\nref = "pipelines.gone:src"\n'
    )
    results = run(None, detectors=("additive",), dry_run=True, project_dir=shop_project.root)
    by_source = {r.source: r for r in results}
    assert set(by_source) == {"broken", "shop", "shop_clean", "shop_extra"}
    assert by_source["broken"].error is not None
    assert "`pipelines.gone`" in by_source["broken"].error
    assert all(by_source[s].error is None for s in ("shop", "shop_clean", "shop_extra"))
    assert len(by_source["shop"].findings) == 2


ALERTS_LOGGER = "dlt_contract_ops.alerts"


def test_dry_run_emits_no_alert(shop_project: Project, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    result = reconcile_source("shop", dry_run=True, project_dir=shop_project.root)
    assert len(result.findings) == 2
    assert [r for r in caplog.records if r.name == ALERTS_LOGGER] == []

    caplog.clear()
    result = reconcile_source("shop", project_dir=shop_project.root)
    alerts = [r for r in caplog.records if r.name == ALERTS_LOGGER]
    assert [r.levelno for r in alerts] == [logging.WARNING] * len(result.findings)
    assert "OrderItems" in alerts[0].getMessage() + alerts[1].getMessage()


def test_project_dir_defaults_to_the_current_directory(
    shop_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(shop_project.root)
    result = reconcile_source("shop", dry_run=True)
    assert result.error is None, result.error
    assert result.dataset == shop.DATASET
    assert {f.resource for f in result.findings} == {"OrderItems", "plain"}


SHARED_TABLE = """
from typing import Optional

import dlt
from pydantic import BaseModel


# nullable: each resource's rows leave the other model's columns empty
class Push(BaseModel):
    id: int
    branch: Optional[str] = None


class Star(BaseModel):
    id: int
    stargazer: Optional[str] = None


@dlt.resource(columns=Push, table_name="activity")
def pushes():
    yield [{"id": i, "branch": "main"} for i in range(3)]


@dlt.resource(columns=Star, table_name="activity")
def stars():
    yield [{"id": 10 + i, "stargazer": f"s{i}"} for i in range(3)]


@dlt.source(name="gh")
def gh():
    return pushes, stars
"""


def test_resources_sharing_a_table_are_diffed_once_against_both_models(project: Project) -> None:
    project.module("pipes.gh", SHARED_TABLE)
    project.source("gh", "pipes.gh:gh", pipeline_name="gh_pipe", dataset_name="gh_data")
    project.python(
        """
        import dlt
        from pipes.gh import gh
        dlt.pipeline("gh_pipe", destination="duckdb", dataset_name="gh_data").run(gh())
        """
    )
    clean = reconcile_source("gh", dry_run=True, project_dir=project.root)
    assert clean.error is None, clean.error
    # each model's columns are expected in the shared table: nothing is drift yet
    assert clean.findings == []
    assert any("`pushes`, `stars` share table `activity`" in n for n in clean.notes)

    with duckdb.connect(str(project.root / "gh_pipe.duckdb")) as con:
        con.execute("ALTER TABLE gh_data.activity ADD COLUMN forced BOOLEAN")
        con.execute("UPDATE gh_data.activity SET forced = false")
    drifted = reconcile_source("gh", dry_run=True, project_dir=project.root)
    # one finding for the one table, not one per resource
    assert [(f.resource, f.table, f.columns) for f in drifted.findings] == [
        ("pushes", "activity", ["forced"])
    ]


def test_a_ref_into_an_installed_package_evicts_nothing(project: Project) -> None:
    # in a fresh interpreter: evicting dlt mid-process would poison this test process
    proc = project.python(
        """
        import sys
        import dlt
        from dlt_contract_ops.sources.discovery import build_source
        from dlt_contract_ops.errors import SourceImportError

        before = sys.modules["dlt.extract"]
        try:
            build_source("rest", "dlt.sources.rest_api:rest_api_source", ".")
        except SourceImportError as exc:
            print("error:", exc)
        assert sys.modules["dlt.extract"] is before, "dlt was evicted and re-imported"
        """,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "error: Calling `dlt.sources.rest_api:rest_api_source`" in proc.stdout


CREDENTIALS_SOURCE = """
import dlt
from dlt.sources.credentials import ConnectionStringCredentials
from pydantic import BaseModel


class Row(BaseModel):
    id: int


@dlt.source(name="crm")
def crm(
    credentials: ConnectionStringCredentials = dlt.secrets.value,
    page_size: int = dlt.config.value,
):
    return dlt.resource([{"id": 1}], name="rows", columns=Row)
"""


def test_missing_credentials_and_config_value_say_which_file(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.module("pipes.crm", CREDENTIALS_SOURCE)
    project.source("crm", "pipes.crm:crm", dataset_name="crm_data")
    result = reconcile_source("crm", dry_run=True, project_dir=project.root)
    assert result.error is not None
    # every missing key is listed; the parts of a secret belong in secrets.toml
    assert "`sources.crm.crm.credentials.drivername`" in result.error
    assert "`sources.crm.crm.page_size`" in result.error
    assert "`[sources.crm.crm.credentials]` table of .dlt/secrets.toml" in result.error

    monkeypatch.setenv("SOURCES__CRM__CRM__CREDENTIALS", "postgresql://u:p@localhost/db")
    result = reconcile_source("crm", dry_run=True, project_dir=project.root)
    assert result.error is not None
    assert "credentials" not in result.error
    # a plain config value belongs in config.toml
    assert "missing `page_size` in `[sources.crm.crm]`. Set it in .dlt/config.toml" in result.error
    assert "`SOURCES__CRM__CRM__PAGE_SIZE`" in result.error


def test_a_build_never_inherits_a_dead_threads_dlt_contexts(project: Project) -> None:
    """dlt keeps injection contexts per thread id, and the OS hands a finished thread's id to
    the next thread: a pipeline left active in a thread that ended (here PostgreSQL's, whose
    identifiers are capped at 63 characters) must not shape the naming of a later build."""
    import threading

    import dlt

    from dlt_contract_ops.sources.discovery import build_source

    project.module("pipes.evt", EVENTS)
    idents: list[int] = []

    def activate() -> None:
        dlt.pipeline("pg_left_active", destination="postgres", pipelines_dir=str(project.root))
        idents.append(threading.get_ident())

    builds: list[tuple[int, object]] = []
    for _ in range(20):  # thread ids are reused by the OS; the builds must not care
        t = threading.Thread(target=activate)
        t.start()
        t.join()
        built = build_source("evt", "pipes.evt:evt", str(project.root))
        builds.append((idents[-1], built.naming.max_length))
    assert {length for _, length in builds} == {None}, builds
