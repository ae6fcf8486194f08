"""Removal, missing and type drift through real dlt pipelines into DuckDB.

The recipe: load a healthy batch, backdate it into the baseline window out of band, then
load fresh batches in which a column is only NULL, and reconcile.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import duckdb
import pytest

from dlt_contract_ops import detect_removal, reconcile_all
from dlt_contract_ops.detectors.registry import selected
from dlt_contract_ops.engine.reconcile import run
from tests.duckdb_baselines import shared_loads
from tests.projects import Project

#: what `--include-removal` runs
WITH_REMOVAL = selected({"removal"})

SOURCE = """
from datetime import datetime, timezone
from typing import List, Optional

import dlt
from pydantic import BaseModel



class Event(BaseModel):
    id: int
    kind: str
    actor_login: Optional[str] = None
    score: Optional[int] = None


@dlt.resource(columns=Event, write_disposition="append", schema_contract={"columns": "evolve"})
def events(start=0, n=20, dark=False, stamp=False, nested=False):
    for i in range(start, start + n):
        row = {
            "id": i,
            "kind": "push",
            "actor_login": None if dark or i % 5 == 0 else f"user{i}",
            "score": i,
        }
        if stamp:
            row["loaded_at"] = datetime.now(timezone.utc)
        if nested:
            row["items"] = [{"sku": f"s{i}"}]
        yield row


class Snapshot(BaseModel):
    id: int
    label: Optional[str] = None


@dlt.resource(columns=Snapshot, write_disposition="replace")
def snapshot(dark=False):
    for i in range(5):
        yield {"id": i, "label": None if dark else f"l{i}"}


@dlt.source(name="events_src")
def events_src(start=0, n=20, dark=False, stamp=False, nested=False, with_snapshot=True):
    res = [events(start, n, dark, stamp, nested)]
    if with_snapshot:
        res.append(snapshot(dark))
    return res
"""

DB = "events_pipe.duckdb"
DATASET = "events_data"


def _load(project: Project, **kwargs: Any) -> None:
    """One real load; the first into a fresh project is built once per test run and copied
    (`tests/duckdb_baselines.py`: most tests start from the same `n=20` load)."""
    def run(steps: Sequence[dict[str, Any]]) -> None:
        [kw] = steps
        args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
        project.python(
            f"""
            import dlt
            from src_mod import events_src
            p = dlt.pipeline("events_pipe", destination="duckdb", dataset_name={DATASET!r})
            p.run(events_src({args}))
            """
        )

    shared_loads(project, [kwargs], pipeline="events_pipe", module="src_mod.py",
                 dataset=DATASET, run=run)


@contextmanager
def _sql(project: Project) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(str(project.root / DB))
    try:
        yield con
    finally:
        con.close()


def _backdate(project: Project, days: float = 3, column: str = "_dlt_load_id") -> None:
    with _sql(project) as con:
        if column == "_dlt_load_id":
            old = f"{time.time() - days * 86400:.7f}"
            con.execute(f'UPDATE {DATASET}.events SET "_dlt_load_id" = ?', [old])
        else:
            con.execute(
                f'UPDATE {DATASET}.events SET "{column}" = "{column}" - INTERVAL {int(days)} DAY'
            )


@pytest.fixture
def events_project(project: Project) -> Project:
    project.module("src_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.source(
        "events_src", "src_mod:events_src", pipeline_name="events_pipe", dataset_name=DATASET
    )
    return project


def test_removal_on_dlt_load_id_without_any_stamped_column(events_project: Project) -> None:
    _load(events_project, n=20)
    _backdate(events_project)
    _load(events_project, start=100, n=10, dark=True)

    result = detect_removal("events_src", project_dir=events_project.root)

    assert result.error is None
    assert result.detector == "removal"
    [finding] = result.findings
    assert finding.drift_type == "removal"
    assert finding.resource == "events"
    assert finding.columns == ["actor_login"]  # id/kind/score still carry data
    assert finding.coverage is not None
    assert finding.coverage["actor_login"].baseline == pytest.approx(16 / 20)
    assert finding.coverage["actor_login"].recent == 0.0
    assert finding.samples == {}
    assert finding.first_seen is not None
    # the reproduce query runs as pasted and shows the collapse
    with _sql(events_project) as con:
        rows = {r[0]: r[2] for r in con.execute(finding.reproduce).fetchall()}
    assert rows == {"baseline": 16, "recent": 0}


def test_removal_on_configured_load_timestamp_column(
    events_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # set through dlt's provider chain: an environment variable, as dlt users expect
    monkeypatch.setenv("CONTRACT_OPS__LOAD_TIMESTAMP_COLUMN", "loaded_at")
    _load(events_project, n=20, stamp=True)
    _backdate(events_project, column="loaded_at")
    _load(events_project, start=100, n=10, dark=True, stamp=True)

    [additive, removal] = run(
        ["events_src"], detectors=("additive", "removal"), project_dir=events_project.root,
        dry_run=True,
    )
    # the stamped column is the time axis, and never additive drift
    assert additive.findings == []
    [finding] = removal.findings
    assert finding.columns == ["actor_login"]
    assert '"loaded_at"' in (finding.reproduce or "")
    assert "_dlt_load_id" not in (finding.reproduce or "")


def test_idle_recent_window_never_flags(events_project: Project) -> None:
    _load(events_project, n=20)
    _backdate(events_project)  # nothing loaded since: the recent window is empty
    result = detect_removal("events_src", project_dir=events_project.root)
    assert result.error is None
    assert result.findings == []


def test_windows_and_thresholds_from_config_and_arguments(events_project: Project) -> None:
    _load(events_project, n=20)
    _backdate(events_project, days=3)
    _load(events_project, start=100, n=10, dark=True)
    # a baseline of one day ends before the backdated rows: no baseline, no finding
    events_project.config(
        '[sources.events_src.contract_ops.removal]\nbaseline_window = "1d"\n'
    )
    assert detect_removal("events_src", project_dir=events_project.root).findings == []
    # an argument outranks the config
    found = detect_removal(
        "events_src", project_dir=events_project.root, baseline_window=timedelta(days=5)
    )
    assert [f.columns for f in found.findings] == [["actor_login"]]


def test_declared_column_not_yet_loaded_and_missing_drift(events_project: Project) -> None:
    _load(events_project, n=20)
    _backdate(events_project)
    _load(events_project, start=100, n=10, dark=True)
    # the model gains a field that never landed: removal must still run for the others
    src = (events_project.root / "src_mod.py").read_text()
    (events_project.root / "src_mod.py").write_text(
        src.replace("    score: Optional[int] = None\n",
                    "    score: Optional[int] = None\n    region: Optional[str] = None\n", 1)
    )
    results = run(["events_src"], detectors=WITH_REMOVAL, project_dir=events_project.root)
    by = {r.detector: r for r in results}
    assert [f.columns for f in by["removal"].findings] == [["actor_login"]]
    [missing] = by["missing"].findings
    assert missing.columns == ["region"]
    assert missing.expected_types == {"region": "text"}
    with _sql(events_project) as con, pytest.raises(duckdb.BinderException, match="region"):
        con.execute(missing.reproduce)


def test_type_drift_and_widening(events_project: Project) -> None:
    _load(events_project, n=20)
    with _sql(events_project) as con:
        con.execute(f'ALTER TABLE {DATASET}.events ALTER COLUMN "kind" TYPE VARCHAR')
        con.execute(f'ALTER TABLE {DATASET}.events ALTER COLUMN "score" TYPE VARCHAR')
        con.execute(f'ALTER TABLE {DATASET}.events ALTER COLUMN "id" TYPE DECIMAL(38,0)')
    [type_result] = run(["events_src"], detectors=("type",), project_dir=events_project.root)
    [finding] = type_result.findings
    assert finding.columns == ["score"]  # id widened to DECIMAL still holds every int
    assert finding.column_types == {"score": "VARCHAR"}
    assert finding.expected_types == {"score": "bigint"}


def test_table_without_time_column_is_skipped_with_a_note(events_project: Project) -> None:
    _load(events_project, n=20)
    with _sql(events_project) as con:
        con.execute(f'ALTER TABLE {DATASET}.events DROP COLUMN "_dlt_load_id"')
    result = detect_removal("events_src", project_dir=events_project.root)
    assert result.error is None
    assert result.findings == []
    assert any("`events`: no time column" in n for n in result.notes)


def test_nested_tables_and_replace_tables_get_notes(events_project: Project) -> None:
    _load(events_project, n=20, nested=True, with_snapshot=True)
    result = detect_removal("events_src", project_dir=events_project.root)
    assert result.error is None
    assert any(
        "`events__items`" in n and "not checked for removal drift" in n for n in result.notes
    )
    assert any("`snapshot` is loaded with `replace`" in n for n in result.notes)
    # one load, inside the recent window: no baseline yet, said once per table, except for
    # the `replace` table (it never has one; its own note says so)
    young = [n.split(":")[0] for n in result.notes if "no baseline yet" in n]
    assert young == ["table `events`"]


def test_cli_all_include_removal_json_and_exit_codes(events_project: Project) -> None:
    _load(events_project, n=20)
    _backdate(events_project)
    _load(events_project, start=100, n=10, dark=True)

    proc = events_project.cli("reconcile", "--all", "--include-removal", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["format_version"] == 1
    assert [r["detector"] for r in doc["results"]] == list(WITH_REMOVAL)
    removal = doc["results"][1]
    assert removal["findings"][0]["coverage"] == {
        "actor_login": {"baseline": 0.8, "recent": 0.0}
    }
    text = events_project.cli("reconcile", "--all", "--include-removal")
    assert "Source: events_src (removal)  |  Findings: 1" in text.stdout
    assert "Coverage: actor_login 80% → 0%" in text.stdout
    failing = events_project.cli("reconcile", "--all", "--include-removal", "--fail-on-drift")
    assert failing.returncode == 3
    # without the flag removal does not run
    plain = json.loads(events_project.cli("reconcile", "--all", "--format", "json").stdout)
    assert "removal" not in [r["detector"] for r in plain["results"]]
    bad = events_project.cli("reconcile", "--all", "--include-removal", "--recent-window", "six")
    assert bad.returncode == 2
    assert "--recent-window" in bad.stderr


def test_reconcile_all_include_removal_api(events_project: Project) -> None:
    _load(events_project, n=20)
    _backdate(events_project)
    _load(events_project, start=100, n=10, dark=True)
    results = reconcile_all(include_removal=True, project_dir=events_project.root)
    assert [r.detector for r in results] == list(WITH_REMOVAL)
    assert [f.columns for f in results[1].findings] == [["actor_login"]]
