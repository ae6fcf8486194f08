"""No false greens: every way a reconcile used to say "✓ No drift" (or exit 0) while the
dataset was wrong, unreadable or misconfigured, through real dlt pipelines into DuckDB and
the real CLI.

Each test would have passed the old code's run as clean; each asserts what a user must now
see: an error on the result (exit 1), drift (exit 3 with `--fail-on-drift`), a usage error
(exit 2), or a note naming what was not checked.
"""

from __future__ import annotations

import json
import subprocess
import time
from datetime import datetime
from typing import Any

import duckdb
import pytest

from dlt_contract_ops.engine.reconcile import detect_removal, run
from tests.projects import Project

CRM = '''
from typing import Optional

import dlt
from pydantic import BaseModel


class Person(BaseModel):
    id: int
    name: str
    email: Optional[str] = None
    loaded_at: Optional[str] = None  # lands as TEXT: not a time axis


class Order(BaseModel):
    id: int
    amount: float
    note: Optional[str] = None


@dlt.resource(columns=Person, schema_contract={"columns": "evolve"})
def people(start=0, n=10, dark=False, nested=False, stamp=False):
    for i in range(start, start + n):
        row = {"id": i, "name": f"p{i}", "email": None if dark else f"p{i}@example.com"}
        if stamp:
            row["loaded_at"] = "2026-01-01 10:00:00"
        if nested:
            row["addresses"] = [{"city": f"c{i}"}]  # the nested table people__addresses
        yield row


@dlt.resource(columns=Order)
def orders(start=0, n=10, dark=False):
    for i in range(start, start + n):
        yield {"id": i, "amount": 1.5 * i, "note": None if dark else f"n{i}"}


@dlt.source(name="crm")
def crm(start=0, n=10, dark=False, nested=False, stamp=False):
    return people(start, n, dark, nested, stamp), orders(start, n, dark)
'''

PIPELINE = "crm_pipe"
DATASET = "crm_data"
DB_FILE = f"{PIPELINE}.duckdb"


def _load(project: Project, resources: tuple[str, ...] = (), **kwargs: Any) -> None:
    """One real `pipeline.run` in a subprocess (this process never holds the DuckDB file)."""
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    only = f".with_resources(*{list(resources)!r})" if resources else ""
    project.python(
        f"""
        import dlt
        from crm_mod import crm
        p = dlt.pipeline({PIPELINE!r}, destination="duckdb", dataset_name={DATASET!r})
        p.run(crm({args}){only})
        """
    )


def _sql(project: Project, *statements: str) -> None:
    """Change the warehouse out of band, as an engineer with a SQL console would."""
    with duckdb.connect(str(project.root / DB_FILE)) as con:
        for statement in statements:
            con.execute(statement)


def _backdate_and_darken(project: Project, **kwargs: Any) -> None:
    """The first load moved three days back (the baseline), then a load in which `email`
    and `note` are only NULL (the recent window)."""
    old = f"{time.time() - 3 * 86400:.7f}"
    _sql(
        project,
        *(f"UPDATE {DATASET}.{t} SET _dlt_load_id = '{old}'" for t in ("people", "orders")),
    )
    _load(project, start=100, n=5, dark=True, **kwargs)


def _results(proc: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    """The `--format json` results by detector."""
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(
            f"not JSON ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        ) from None
    return {r["detector"]: r for r in doc["results"]}


def _findings(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["table"]: f for f in result["findings"]}


def _declare(project: Project, contract_ops: str = "", dataset: str = DATASET) -> Project:
    project.module("crm_mod", CRM)
    project.config(f"[contract_ops]\nalert_sinks = []\n{contract_ops}")
    project.source("crm", "crm_mod:crm", pipeline_name=PIPELINE, dataset_name=dataset)
    return project


@pytest.fixture
def crm(project: Project) -> Project:
    return _declare(project)


# -- 1. a dataset that does not exist --------------------------------------------------------
def test_a_dataset_that_does_not_exist_is_an_error(project: Project) -> None:
    _declare(project, dataset="crm_dta")  # one letter off: the pipeline loads `crm_data`
    _load(project)

    proc = project.cli("reconcile", "--all", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [result] = _results(proc).values()
    assert result["findings"] == []
    assert "Dataset `crm_dta`" in result["error"]
    assert "has no tables" in result["error"]

    text = project.cli("reconcile", "--all", "--fail-on-drift")
    assert text.returncode == 1
    assert "✗ Error: Dataset `crm_dta`" in text.stdout
    assert "No drift" not in text.stdout
    assert "skipped" not in text.stdout

    # the Python API says the same
    [api] = run(["crm"], project_dir=project.root)
    assert api.error is not None
    assert "`crm_dta`" in api.error


# -- 2. a loaded table dropped out of band ----------------------------------------------------
def test_a_loaded_table_dropped_out_of_band_is_missing_drift(crm: Project) -> None:
    _load(crm)
    _sql(crm, f"DROP TABLE {DATASET}.orders")

    proc = crm.cli("reconcile", "--all", "--format", "json", "--fail-on-drift")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    missing = _results(proc)["missing"]
    assert missing["error"] is None
    [finding] = missing["findings"]
    assert (finding["resource"], finding["table"]) == ("orders", "orders")
    assert sorted(finding["columns"]) == ["amount", "id", "note"]  # every declared column
    assert any("`orders`" in n and "no longer exists" in n for n in missing["notes"])

    text = crm.cli("reconcile", "--all")
    assert text.returncode == 0  # drift without --fail-on-drift is still a clean exit
    assert "  • orders: missing drift (3 column(s)) [new]" in text.stdout


def test_a_modelled_table_never_loaded_is_only_a_note(crm: Project) -> None:
    """The contrast: `orders` was never loaded, so its absence is not drift."""
    _load(crm, resources=("people",))

    proc = crm.cli("reconcile", "--all", "--format", "json", "--fail-on-drift")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = _results(proc)
    assert all(r["findings"] == [] and r["error"] is None for r in results.values())
    assert any(
        "`orders` does not exist in dataset `crm_data` yet: skipped" in n
        for n in results["additive"]["notes"]
    )


# -- 3. a query that fails for one table ------------------------------------------------------
def test_a_query_failure_on_one_table_is_an_error_and_the_others_are_reported(
    crm: Project,
) -> None:
    _load(crm)
    _backdate_and_darken(crm)
    # `people` becomes a view over a table that is dropped afterwards: the metadata still
    # lists its columns, but every SELECT from it fails (a real per-table query failure)
    _sql(
        crm,
        f"CREATE TABLE {DATASET}.people_old AS SELECT * FROM {DATASET}.people",
        f"DROP TABLE {DATASET}.people",
        f"CREATE VIEW {DATASET}.people AS SELECT *, 1 AS extra FROM {DATASET}.people_old",
        f"DROP TABLE {DATASET}.people_old",
        f"ALTER TABLE {DATASET}.orders ADD COLUMN coupon TEXT DEFAULT 'C1'",
    )

    proc = crm.cli("reconcile", "--all", "--include-removal", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = _results(proc)

    additive = results["additive"]
    assert "sample query for table `people` failed" in additive["error"]
    assert "`orders`" not in additive["error"]
    found = _findings(additive)
    # the drift on the failing table still ships, without samples, saying why
    assert found["people"]["columns"] == ["extra"]
    assert found["people"]["sample_error"] is not None
    # the other table is checked and reported in full
    assert found["orders"]["columns"] == ["coupon"]
    assert found["orders"]["samples"]["coupon"][:1] == ["C1"]

    removal = results["removal"]
    assert "coverage query for table `people` failed" in removal["error"]
    assert [(f["table"], f["columns"]) for f in removal["findings"]] == [("orders", ["note"])]

    text = crm.cli("reconcile", "--all", "--include-removal")
    assert text.returncode == 1
    blocks = {b.split("|")[0].strip(): b for b in text.stdout.split("Source: ")[1:]}
    for label in ("crm", "crm (removal)"):
        assert "✗ Error: 1 table(s) could not be checked" in blocks[label], text.stdout
        assert "✓ No drift" not in blocks[label]


# -- 4. nothing declared: a typo'd section ----------------------------------------------------
@pytest.mark.parametrize(
    ("toml", "reconcile_says", "validate_says"),
    [
        pytest.param(
            '[sources.crm.contractops]\nref = "crm_mod:crm"\n',
            "No source is declared",
            "Did you mean `[sources.crm.contract_ops]`?",
            id="sources-X-contractops",
        ),
        pytest.param("", "No source is declared", "No source is declared", id="empty-config"),
        pytest.param(
            '[source.crm.contract_ops]\nref = "crm_mod:crm"\n',
            "Did you mean `[sources.crm.contract_ops]`?",
            "Did you mean `[sources.crm.contract_ops]`?",
            id="source-X-contract_ops",
        ),
        pytest.param(
            'contract_ops = 5\n[sources.crm.contract_ops]\nref = "crm_mod:crm"\n'
            'destination = "duckdb"\ndataset_name = "crm_data"\n',
            "`[contract_ops]` must be a table",
            "`[contract_ops]` must be a table",
            id="contract_ops-not-a-table",
        ),
        pytest.param(
            '[contract_op]\nalert_sinks = []\n',
            "No source is declared",
            "Did you mean `[contract_ops]`?",
            id="contract_op",
        ),
    ],
)
def test_a_misspelled_or_missing_section_is_a_usage_error(
    project: Project, toml: str, reconcile_says: str, validate_says: str
) -> None:
    project.module("crm_mod", CRM)
    project.config(toml)

    proc = project.cli("reconcile", "--all")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert reconcile_says in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "No drift" not in proc.stdout

    # validate rejects what reconcile rejects, with one problem saying why
    checked = project.cli("validate", "--format", "json")
    doc = json.loads(checked.stdout)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    rule = "source_declared" if not toml else "config_section"
    assert [p["rule"] for p in doc["problems"]] == [rule]
    assert validate_says in doc["problems"][0]["message"]
    assert doc["problems"][0]["file"] == ".dlt/config.toml"
    text = project.cli("validate")
    assert text.returncode == 2
    assert "project is valid" not in text.stdout
    assert [line for line in text.stdout.splitlines() if line.startswith("✗")] == [
        f"✗ {rule}: {doc['problems'][0]['key']} (.dlt/config.toml): "
        f"{doc['problems'][0]['message']}"
    ]


def test_reconcile_warns_about_the_section_it_does_not_read(project: Project) -> None:
    project.module("crm_mod", CRM)
    project.config('[sources.crm.contractops]\nref = "crm_mod:crm"\n')
    proc = project.cli("reconcile", "--all")
    assert proc.returncode == 2
    warnings = [line for line in proc.stderr.splitlines() if "[WARNING]" in line]
    assert any(
        "Section `[sources.crm.contractops]` in .dlt/config.toml is not read. "
        "Did you mean `[sources.crm.contract_ops]`?" in line
        for line in warnings
    ), proc.stderr
    # the usage error itself says why there is nothing to do, and names the typo
    [error] = [line for line in proc.stderr.splitlines() if line.startswith("Error: ")]
    assert "No source is declared" in error
    assert "[sources.crm.contractops]" in error


# -- 5. drift in a nested table --------------------------------------------------------------
def test_drift_in_a_nested_table_is_named_in_a_note(crm: Project) -> None:
    _load(crm, nested=True)
    _sql(crm, f"ALTER TABLE {DATASET}.people__addresses ADD COLUMN zip TEXT DEFAULT '10115'")

    proc = crm.cli("reconcile", "--all", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    additive = _results(proc)["additive"]
    assert additive["findings"] == []  # the model describes the root table only
    [note] = [n for n in additive["notes"] if "people__addresses" in n]
    assert "`people__addresses`" in note
    assert "not checked for additive drift" in note

    text = crm.cli("reconcile", "--all")
    assert "! nested table(s) `people__addresses` of resource `people`" in text.stdout


# -- 6. a load_timestamp_column that is TEXT --------------------------------------------------
def test_a_text_load_timestamp_column_falls_back_to_dlt_load_id(project: Project) -> None:
    crm = _declare(project, 'load_timestamp_column = "loaded_at"\n')
    _load(crm, stamp=True)
    _backdate_and_darken(crm, stamp=True)
    _sql(crm, f"ALTER TABLE {DATASET}.people ADD COLUMN zip TEXT DEFAULT '10115'")

    proc = crm.cli("reconcile", "--all", "--include-removal", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = _results(proc)
    fallback = (
        "table `people`: `load_timestamp_column` `loaded_at` is VARCHAR, not a timestamp: "
        "windowing on `_dlt_load_id` instead."
    )
    for detector in ("additive", "removal"):
        assert results[detector]["error"] is None
        assert any(n.startswith(fallback) for n in results[detector]["notes"]), detector

    # first sighting is a time (the oldest load id), not the text column's raw value
    [added] = results["additive"]["findings"]
    assert added["columns"] == ["zip"]
    first_seen = datetime.fromisoformat(added["first_seen"])
    assert first_seen.tzinfo is not None
    assert "2026-01-01" not in added["first_seen"]

    # removal windows on `_dlt_load_id`: the column that went dark is found, no binder error
    removal = _findings(results["removal"])
    assert removal["people"]["columns"] == ["email"]
    assert '"_dlt_load_id" >=' in removal["people"]["reproduce"]
    assert removal["orders"]["columns"] == ["note"]

    api = detect_removal("crm", project_dir=crm.root)
    assert api.error is None
    assert {f.table: f.columns for f in api.findings} == {"people": ["email"], "orders": ["note"]}
