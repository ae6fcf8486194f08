"""`models infer` on a dlt project with no models at all, through real loads (DuckDB,
PostgreSQL): each inferred model gives back, through dlt's own Pydantic-to-columns
conversion and the schema's naming, exactly the stored table's columns and data types; the
bindings it writes make `reconcile` clean, and a planted additive column is then found.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_server
from tests.projects import Project

PIPELINE = "raw_pipeline"
DSN = "postgresql://postgres:x@127.0.0.1:5432/test"

#: a dlt-docs style REST source: a nested list, a `table_name=`, CamelCase fields, no model
RAW = '''
from datetime import datetime, date, timezone
from decimal import Decimal

import dlt


@dlt.resource(table_name="orders_tbl", primary_key="orderId")
def orders():
    for i in range(120):
        yield {
            "orderId": i,
            "customerName": None if i % 7 == 0 else f"c{i}",
            "Status": ["paid", "pending", "void"][i % 3],
            "amount": Decimal(f"{i}.25"),
            "createdAt": datetime(2024, 1, 1 + i % 28, tzinfo=timezone.utc),
            "shipDate": date(2024, 2, 1 + i % 28),
            "isGift": i % 2 == 0,
            "weight": i * 0.5,
            "class": "standard",
            "items": [{"sku": f"s{i}-{j}", "qty": j, "tags": ["a", "b"]} for j in range(2)],
            "address": {"city": "Berlin", "zipCode": "10115"},
        }


@dlt.resource
def customers():
    yield [{"id": i, "name": f"n{i}", "meta": None} for i in range(5)]


@dlt.source
def raw_source():
    return orders, customers
'''

LOAD = '''
import dlt
from pipelines.raw import raw_source

p = dlt.pipeline("{pipeline}", destination={destination}, dataset_name="{dataset}")
info = p.run(raw_source(){run_args})
info.raise_on_failed_jobs()
'''


def _load(project: Project, destination: str, dataset: str) -> None:
    dest, run_args = {
        "duckdb": ('"duckdb"', ""),
        "postgres": (f'dlt.destinations.postgres("{DSN}")', ""),
        "filesystem": ('"filesystem"', ', loader_file_format="parquet"'),
    }[destination]
    project.python(LOAD.format(pipeline=PIPELINE, destination=dest, dataset=dataset,
                               run_args=run_args))


def _declare(project: Project, destination: str, dataset: str) -> None:
    project.source("raw_source", "pipelines.raw:raw_source", pipeline_name=PIPELINE,
                   destination=destination, dataset_name=dataset)
    if destination == "postgres":
        project.secrets(f'[destination.postgres]\ncredentials = "{DSN}"\n')
    if destination == "filesystem":
        bucket = (project.root / "bucket").as_uri()
        project.config(f'[destination.filesystem]\nbucket_url = "{bucket}"\n')


@pytest.fixture(params=["duckdb", pytest.param("postgres", marks=pytest.mark.postgres),
                        "filesystem"])
def loaded(request: pytest.FixtureRequest, project: Project) -> Iterator[tuple[Project, str]]:
    destination = str(request.param)
    dataset = f"raw_{uuid.uuid4().hex[:8]}"
    if destination == "postgres":
        require_server("127.0.0.1", 5432, "PostgreSQL")
    project.module("pipelines.raw", RAW)
    _declare(project, destination, dataset)
    _load(project, destination, dataset)
    yield project, dataset
    if destination == "postgres":
        import psycopg2

        with psycopg2.connect(DSN) as con, con.cursor() as cur:
            cur.execute(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')


def _stored_tables(project: Project) -> dict[str, Any]:
    """The pipeline's stored schema, as dlt keeps it locally."""
    proc = project.python(f'''
import json, dlt
p = dlt.attach("{PIPELINE}")
print(json.dumps(p.default_schema.to_dict()["tables"]))
''')
    tables: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return tables


def _import(project: Project, ref: str) -> Any:
    module_name, _, cls = ref.partition(":")
    sys.path.insert(0, str(project.root))
    try:
        for name in [m for m in sys.modules if m.split(".")[0] == "inferred_models"]:
            del sys.modules[name]
        return getattr(importlib.import_module(module_name), cls)
    finally:
        sys.path.remove(str(project.root))


def _round_trip(model: Any, table: str) -> dict[str, dict[str, str | None]]:
    """Table -> column -> data type, as the reconciler expects them from `model`: dlt's
    `pydantic_to_table_schema_columns` and the schema's naming (`core.naming`)."""
    from dlt.common.normalizers.naming.snake_case import NamingConvention

    from dlt_contract_ops.core.naming import expected_table, nested_tables

    naming = NamingConvention()
    root = expected_table("r", table, model, naming)
    return {t.table: {c.name: c.data_type for c in t.columns}
            for t in (root, *nested_tables(root, model, naming))}


def test_inferred_models_round_trip_to_the_stored_tables(loaded: tuple[Project, str]) -> None:
    project, _ = loaded
    proc = project.cli("models", "infer", "-s", "raw_source")
    assert proc.returncode == 0, proc.stderr
    stored = _stored_tables(project)
    config = (project.root / ".dlt" / "config.toml").read_text()
    assert "[sources.raw_source.contract_ops.models]" in config
    for resource, table in (("orders", "orders_tbl"), ("customers", "customers")):
        module = project.root / "inferred_models" / "raw_source" / f"{table}.py"
        text = module.read_text()
        assert f"Pipeline: `{PIPELINE}`\nSource: `raw_source`\nDataset: `" in text
        assert "Newest load: `1" in text
        ref = f"inferred_models.raw_source.{table}:"
        assert f'{resource} = "{ref}' in config
        cls = config.split(f'{resource} = "{ref}')[1].split('"')[0]
        model = _import(project, ref + cls)
        got = _round_trip(model, table)
        family = {name for name, t in stored.items()
                  if name == table or (t.get("parent") and name.startswith(f"{table}__"))}
        assert set(got) == family
        for name in family:
            want = {c: spec.get("data_type") for c, spec in stored[name]["columns"].items()
                    if not c.startswith("_dlt")}
            assert set(got[name]) == set(want), name
            for column, data_type in got[name].items():
                # None: an `Any` field, for a json column of a model that skips nested types
                # (dlt would leave a dict field out) or a column without a type yet
                assert data_type == want[column] or (
                    data_type is None and want[column] in ("json", None)), (name, column)


def test_orders_model_reads_as_written_by_hand(loaded: tuple[Project, str]) -> None:
    project, _ = loaded
    assert project.cli("models", "infer", "-s", "raw_source").returncode == 0
    folder = str(project.root / "inferred_models")
    for check in (["check", "--isolated", "--select", "F,E,W,I,UP", "--line-length", "100"],
                  ["format", "--check"]):
        lint = subprocess.run([sys.executable, "-m", "ruff", *check, folder],
                              capture_output=True, text=True, check=False)
        assert lint.returncode == 0, lint.stdout + lint.stderr
    text = (project.root / "inferred_models" / "raw_source" / "orders_tbl.py").read_text()
    assert 'dlt_config: ClassVar[dict[str, Any]] = {"skip_nested_types": True}' in text
    assert "order_id: int" in text  # never NULL in the data: required
    assert "customer_name: str | None = None" in text  # NULLs seen: Optional
    assert 'Semantics(categories=("paid", "pending", "void"))' in text
    assert 'Semantics(timezone="UTC")' in text
    assert "items: list[OrdersTblItems] = []" in text
    assert "    # child table `orders_tbl__items__tags`\n    tags: list[str] = []\n" in text
    assert 'class_: str = Field(alias="class")' in text  # one value: a constant, no code set
    assert "address__city: str" in text
    assert "    # observed 0 .. 119\n    order_id: int\n" in text  # a comment, never a constraint


def test_bound_models_make_reconcile_clean_then_find_a_planted_column(
    loaded: tuple[Project, str], request: pytest.FixtureRequest
) -> None:
    project, _dataset = loaded
    before = project.cli("reconcile", "-s", "raw_source", "--dry-run", "--format", "json")
    assert "no Pydantic model" in before.stdout + before.stderr
    assert project.cli("models", "infer", "-s", "raw_source").returncode == 0
    clean = project.cli("reconcile", "-s", "raw_source", "--dry-run", "--format", "json")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    doc = json.loads(clean.stdout)
    assert not [f for r in doc["results"] for f in r["findings"]]
    assert "no Pydantic model" not in clean.stdout + clean.stderr
    # the producer sends a field the models do not declare: loaded by the pipeline
    run_args = ', loader_file_format="parquet"' if "filesystem" in request.node.name else ""
    project.python(f'''
import dlt
p = dlt.attach("{PIPELINE}")

@dlt.resource(name="customers")
def customers():
    yield [{{"id": i, "name": f"n{{i}}", "loyaltyTier": "gold"}} for i in range(5, 8)]

p.run(customers(){run_args}).raise_on_failed_jobs()
''')
    drift = project.cli("reconcile", "-s", "raw_source", "--dry-run", "--format", "json")
    found = [(f["drift_type"], f["columns"]) for r in json.loads(drift.stdout)["results"]
             for f in r["findings"]]
    assert found == [("additive", ["loyalty_tier"])], drift.stdout
    # the model patch goes into the generated module the binding names
    applied = project.cli("reconcile", "-s", "raw_source", "--suggest", "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "note: wrote inferred_models/raw_source/customers.py" in applied.stderr
    module = (project.root / "inferred_models" / "raw_source" / "customers.py").read_text()
    assert "    loyalty_tier: str | None = None  # new column, first seen" in module
    again = project.cli("reconcile", "-s", "raw_source", "--dry-run", "--format", "json")
    assert not [f for r in json.loads(again.stdout)["results"] for f in r["findings"]]


def test_an_existing_module_is_kept_without_force(loaded: tuple[Project, str]) -> None:
    project, _ = loaded
    module = project.root / "inferred_models" / "raw_source" / "customers.py"
    module.parent.mkdir(parents=True)
    module.write_text("# written by hand\n")
    again = project.cli("models", "infer", "-s", "raw_source")
    assert again.returncode == 2
    assert again.stderr.count("\n") == 1
    assert "--force" in again.stderr
    assert module.read_text() == "# written by hand\n"
    assert not (project.root / "inferred_models" / "raw_source" / "orders_tbl.py").exists()
    forced = project.cli("models", "infer", "-s", "raw_source", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "class Customers(BaseModel)" in module.read_text()
    # bound now: a second run finds nothing left to infer
    third = project.cli("models", "infer", "-s", "raw_source")
    assert third.returncode == 0
    assert "nothing to infer" in third.stderr + third.stdout


def test_dry_run_prints_the_bindings_and_writes_nothing(loaded: tuple[Project, str]) -> None:
    project, _ = loaded
    config = (project.root / ".dlt" / "config.toml").read_text()
    proc = project.cli("models", "infer", "-s", "raw_source", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("[sources.raw_source.contract_ops.models]\n")
    assert 'customers = "inferred_models.raw_source.customers:Customers"' in proc.stdout
    assert not (project.root / "inferred_models").exists()
    assert (project.root / ".dlt" / "config.toml").read_text() == config


@pytest.mark.parametrize(("args", "says"), [
    (("-s", "nope"), "nope"),
    (("--pipeline", "never_ran"), "never_ran"),
    ((), "one of"),
])
def test_bad_requests_are_one_line_exit_2(
    project: Project, args: tuple[str, ...], says: str
) -> None:
    project.module("pipelines.raw", RAW)
    project.source("raw_source", "pipelines.raw:raw_source", pipeline_name=PIPELINE,
                   dataset_name="raw")
    proc = project.cli("models", "infer", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1
    assert says in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_source_never_loaded_is_one_line_exit_2(project: Project) -> None:
    project.module("pipelines.raw", RAW)
    _declare(project, "duckdb", "raw")
    project.python('''
import duckdb
duckdb.connect("raw_pipeline.duckdb").close()
''')
    every = project.cli("models", "infer", "--all")  # --all: a note, the others go on
    assert every.returncode == 0, every.stderr
    assert "was never loaded" in every.stdout
    assert "Skipped." in every.stdout
    proc = project.cli("models", "infer", "-s", "raw_source")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1
    assert "never loaded" in proc.stderr




GATE = '''
import dlt
from dlt_contract_ops import gated_run
from dlt_contract_ops.errors import GateRejected
import pipelines.raw as raw

p = dlt.attach("{pipeline}")
src = raw.raw_source()
{patch}
try:
    report = gated_run(p, src, load=False)
except GateRejected as exc:
    report = exc.report
print("ACTION", report.action)
print("TABLES", sorted({{d.table for d in report.differences if not d.approved}}))
'''


def test_the_gate_treats_a_bound_model_as_a_columns_model(
    loaded: tuple[Project, str]
) -> None:
    project, _ = loaded
    text_ids = 'src.orders.add_map(lambda row: {**row, "orderId": "id-" + str(row["orderId"])})'
    before = project.python(GATE.format(pipeline=PIPELINE, patch=text_ids))
    assert "ACTION loaded" in before.stdout  # no model: the resources are not gated
    assert project.cli("models", "infer", "-s", "raw_source").returncode == 0
    same = project.python(GATE.format(pipeline=PIPELINE, patch=""))
    assert "ACTION loaded" in same.stdout, same.stdout + same.stderr  # a batch like the loaded
    changed = project.python(GATE.format(pipeline=PIPELINE, patch=text_ids))
    assert "ACTION rejected" in changed.stdout, changed.stdout + changed.stderr
    assert "TABLES ['orders_tbl']" in changed.stdout


def test_a_pipeline_not_declared_gets_models_and_no_bindings(project: Project) -> None:
    project.module("pipelines.raw", RAW)
    _load(project, "duckdb", "raw")
    proc = project.cli("models", "infer", "--pipeline", PIPELINE, "--out", "models_out")
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in (project.root / "models_out" / "raw_source").glob("*.py"))
    assert written == ["__init__.py", "customers.py", "orders_tbl.py"]
    config = project.root / ".dlt" / "config.toml"
    assert not config.exists() or "contract_ops.models" not in config.read_text()


def test_all_sources_and_validate_accepts_the_bindings(loaded: tuple[Project, str]) -> None:
    project, _ = loaded
    proc = project.cli("models", "infer", "--all")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("wrote `") == 2
    checked = project.cli("validate")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_binding_that_cannot_be_imported_is_one_line(loaded: tuple[Project, str]) -> None:
    project, _ = loaded
    project.config('[sources.raw_source.contract_ops.models]\norders = "nowhere.mod:Orders"\n')
    proc = project.cli("reconcile", "-s", "raw_source", "--dry-run")
    assert proc.returncode != 0
    assert "nowhere.mod:Orders" in proc.stdout + proc.stderr
    assert "`orders` in `[sources.raw_source.contract_ops.models]`" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_destination_without_an_adapter_is_one_line_exit_2(project: Project) -> None:
    project.module("pipelines.raw", RAW)
    project.source("raw_source", "pipelines.raw:raw_source", pipeline_name=PIPELINE,
                   destination="dummy", dataset_name="raw")
    proc = project.cli("models", "infer", "-s", "raw_source")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1
    assert "`dummy`" in proc.stderr


def test_contract_commands_read_a_bound_model(loaded: tuple[Project, str]) -> None:
    project, _ = loaded
    assert project.cli("models", "infer", "-s", "raw_source").returncode == 0
    proc = project.cli("contract", "snapshot", "-s", "raw_source", "--version", "1.0.0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    released = "\n".join(p.read_text() for p in (project.root / "contracts").rglob("*")
                         if p.is_file())
    assert "orders_tbl" in released
    assert "customers" in released


EVENTS = '''
import dlt


@dlt.resource(table_name=lambda row: f"events_{row['kind']}")
def events():
    yield [{"id": i, "kind": ["push", "pull"][i % 2]} for i in range(6)]


@dlt.source
def hooks():
    return events
'''


def test_a_resource_loading_several_tables_gets_models_but_no_binding(
    project: Project
) -> None:
    project.module("pipelines.hooks", EVENTS)
    project.source("hooks", "pipelines.hooks:hooks", pipeline_name="hooks_pipeline",
                   dataset_name="hooks")
    project.python('''
import dlt
from pipelines.hooks import hooks
dlt.pipeline("hooks_pipeline", destination="duckdb", dataset_name="hooks").run(hooks())
''')
    proc = project.cli("models", "infer", "-s", "hooks")
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in (project.root / "inferred_models" / "hooks").glob("e*.py"))
    assert written == ["events_pull.py", "events_push.py"]
    assert "resource `events` (source `hooks`) loads 2 tables: not bound" in proc.stdout
    assert "contract_ops.models" not in (project.root / ".dlt" / "config.toml").read_text()


def test_code_set_thresholds_are_settings(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.module("pipelines.raw", RAW)
    _declare(project, "duckdb", "raw")
    _load(project, "duckdb", "raw")
    project.config("[contract_ops.infer]\ncode_set_max_values = 2\n")
    assert project.cli("models", "infer", "-s", "raw_source").returncode == 0
    orders = project.root / "inferred_models" / "raw_source" / "orders_tbl.py"
    assert "categories" not in orders.read_text()  # `status` has 3 values: over the limit
    flag = project.cli("models", "infer", "-s", "raw_source", "--force",
                       "--code-set-max-values", "3")
    assert flag.returncode == 0, flag.stderr
    assert 'Semantics(categories=("paid", "pending", "void"))' in orders.read_text()
    monkeypatch.setenv("CONTRACT_OPS__INFER__CODE_SET_MIN_ROWS", '"many"')
    bad = project.cli("models", "infer", "-s", "raw_source", "--force")
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert "code_set_min_rows" in bad.stderr


@pytest.mark.postgres
def test_fields_keep_a_case_sensitive_naming(project: Project) -> None:
    """Under dlt's `sql_cs_v1` naming (PostgreSQL keeps the case) a field is named as its
    column (`orderId`), so the schema's naming gives that column back, and the sweep is clean."""
    require_server("127.0.0.1", 5432, "PostgreSQL")
    dataset = f"raw_cs_{uuid.uuid4().hex[:8]}"
    project.module("pipelines.raw", RAW)
    _declare(project, "postgres", dataset)
    project.config('[schema]\nnaming = "sql_cs_v1"\n')
    try:
        _load(project, "postgres", dataset)
        assert project.cli("models", "infer", "-s", "raw_source").returncode == 0
        text = (project.root / "inferred_models/raw_source/orders_tbl.py").read_text()
        assert "    orderId: int\n" in text
        assert "    address__zipCode: str\n" in text
        clean = project.cli("reconcile", "-s", "raw_source", "--dry-run", "--format", "json")
        assert clean.returncode == 0, clean.stderr
        assert not [f for r in json.loads(clean.stdout)["results"] for f in r["findings"]]
    finally:
        import psycopg2

        with psycopg2.connect(DSN) as con, con.cursor() as cur:
            cur.execute(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')


def test_json_output_and_a_dropped_column_is_missing(project: Project) -> None:
    project.module("pipelines.raw", RAW)
    _declare(project, "duckdb", "raw")
    _load(project, "duckdb", "raw")
    proc = project.cli("models", "infer", "-s", "raw_source", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    refs = {m["resource"]: m["ref"] for m in doc["models"]}
    assert refs == {"orders": "inferred_models.raw_source.orders_tbl:OrdersTbl",
                    "customers": "inferred_models.raw_source.customers:Customers"}
    assert doc["written"] is True
    # the budget: one metadata query, one stored schema, per table (4: two roots, two child
    # tables) one aggregate, and one values query for `orders_tbl`, whose `status` is a code
    # set (a list of scalars, the tags, is never one)
    assert doc["queries"] == {"metadata": 1, "schema": 1, "coverage": 5}
    project.python(f'''
import dlt
p = dlt.attach("{PIPELINE}")
with p.sql_client() as c:
    c.execute_sql("ALTER TABLE " + c.make_qualified_table_name("customers") + " DROP COLUMN name")
''')
    drift = project.cli("reconcile", "-s", "raw_source", "--dry-run", "--format", "json")
    found = [(f["drift_type"], f["table"], f["columns"])
             for r in json.loads(drift.stdout)["results"] for f in r["findings"]]
    assert found == [("missing", "customers", ["name"])], drift.stdout


def test_a_machine_without_the_pipelines_local_state(project: Project) -> None:
    """A fresh CI job or cron container: no local pipeline state, the stored schema is read
    from the dataset (`_dlt_version`), as dlt itself restores a pipeline."""
    import os
    import shutil

    project.module("pipelines.raw", RAW)
    _declare(project, "duckdb", "raw")
    _load(project, "duckdb", "raw")
    shutil.rmtree(Path(os.environ["DLT_DATA_DIR"]) / "pipelines")
    proc = project.cli("models", "infer", "-s", "raw_source")
    assert proc.returncode == 0, proc.stderr
    text = (project.root / "inferred_models/raw_source/orders_tbl.py").read_text()
    assert "items: list[OrdersTblItems] = []" in text


def test_a_column_dropped_from_the_dataset_before_infer_is_left_out(project: Project) -> None:
    """dlt's stored schema still lists a column the live table no longer has (dropped
    behind dlt's back): the model holds what the table holds, a note names the column, and
    the sweep after binding is clean."""
    project.module("pipelines.raw", RAW)
    _declare(project, "duckdb", "raw")
    _load(project, "duckdb", "raw")
    project.python(f'''
import dlt
p = dlt.attach("{PIPELINE}")
with p.sql_client() as c:
    for table, column in (("customers", "name"), ("orders_tbl__items", "qty")):
        c.execute_sql(f"ALTER TABLE {{c.make_qualified_table_name(table)}} DROP COLUMN {{column}}")
''')
    proc = project.cli("models", "infer", "-s", "raw_source")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("column `name` of table `customers` (source `raw_source`) is in dlt's schema but "
            "not in the dataset: left out") in proc.stdout
    assert "column `qty` of table `orders_tbl__items`" in proc.stdout
    folder = project.root / "inferred_models" / "raw_source"
    assert "name" not in (folder / "customers.py").read_text().split("class Customers")[1]
    assert "    qty:" not in (folder / "orders_tbl.py").read_text()
    clean = project.cli("reconcile", "-s", "raw_source", "--dry-run", "--format", "json")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert not [f for r in json.loads(clean.stdout)["results"] for f in r["findings"]]
