"""Issue 37's acceptance, end to end: a dlt project with no models at all (a dlt-docs style
REST source read with dlt's own REST client from a loopback HTTP server: a paginated endpoint
with a nested list, a resource with `table_name=`, CamelCase fields, aware timestamps and
decimals) is loaded over several loads; `models infer` writes a model per table and the
bindings it prints, the modules pass ruff and mypy, and then every table is guarded: the
sweep (`reconcile --all --include-removal`) is clean, a gated batch like the loaded ones is
accepted, and a planted additive, dark and missing column are each found on their table,
the child table's included. docs/quickstart.md ("A pipeline with no models") walks the same
steps.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from tests.conftest import require_server
from tests.projects import Project, checker_env
from tests.servers import PagedApi

PIPELINE = "shop_api_pipeline"
DSN = "postgresql://postgres:x@127.0.0.1:5432/test"

#: both sources' imports and their one conversion: the API sends its timestamps as ISO text
#: and its amounts as strings
TYPED = '''
from datetime import datetime
from decimal import Decimal

import dlt


def _typed(order):
    return {**order, "createdAt": datetime.fromisoformat(order["createdAt"]),
            "TotalAmount": Decimal(order["TotalAmount"])}
'''

#: the source as the dlt docs write a REST source: resources inside the source function, the
#: REST client's `paginate`, the base URL from dlt's config, no `columns=` anywhere
SOURCE = TYPED + '''
from dlt.sources.helpers.rest_client import paginate
from dlt.sources.helpers.rest_client.paginators import JSONLinkPaginator


@dlt.source
def shop_api(base_url: str = dlt.config.value):
    def pages(path):
        return paginate(f"{base_url}/{path}", data_selector="data",
                        paginator=JSONLinkPaginator(next_url_path="next"))

    @dlt.resource(primary_key="OrderId")
    def orders():
        for page in pages("orders-1.json"):
            yield [_typed(order) for order in page]

    @dlt.resource(name="accounts", table_name="customer_accounts", primary_key="AccountId")
    def accounts():
        yield from pages("accounts-1.json")

    return orders, accounts
'''

#: the same API through dlt's declarative REST source (`rest_api_resources` in a source, as
#: the rest_api docs write it): the resources dlt makes from the config, no code of ours
REST_API_SOURCE = TYPED + '''
from dlt.sources.rest_api import rest_api_resources


@dlt.source
def shop_api(base_url: str = dlt.config.value):
    yield from rest_api_resources({
        "client": {"base_url": base_url + "/",
                   "paginator": {"type": "json_link", "next_url_path": "next"}},
        "resource_defaults": {"endpoint": {"data_selector": "data"}},
        "resources": [
            {"name": "orders", "primary_key": "OrderId",
             "endpoint": {"path": "orders-1.json"}, "processing_steps": [{"map": _typed}]},
            {"name": "accounts", "table_name": "customer_accounts", "primary_key": "AccountId",
             "endpoint": {"path": "accounts-1.json"}},
        ],
    })
'''

LOAD = '''
import dlt
from pipelines.shop_api import shop_api

p = dlt.pipeline("{pipeline}", destination={destination}, dataset_name="{dataset}")
p.run(shop_api()).raise_on_failed_jobs()
'''


def orders(start: int, n: int = 40, *, plant: str | None = None) -> list[dict[str, Any]]:
    """`n` orders from `start`: `plant` = "additive" sends a new field (and one in the nested
    items), "dark" sends `CustomerName` and the items' `Qty` as null."""
    out = []
    for i in range(start, start + n):
        items = [{"Sku": f"sku-{i}-{j}", "Qty": None if plant == "dark" else j + 1}
                 for j in range(2)]
        order = {
            "OrderId": i,
            "CustomerName": None if plant == "dark" else f"customer {i}",
            "createdAt": (datetime(2026, 1, 1, tzinfo=timezone.utc)
                          + timedelta(hours=i)).isoformat(),
            "TotalAmount": f"{i}.50",
            "Items": items,
        }
        if plant == "additive":
            order["DiscountCode"] = "WINTER"
            for item in items:
                item["GiftWrap"] = True
        out.append(order)
    return out


def accounts(start: int, n: int = 10) -> list[dict[str, Any]]:
    return [{"AccountId": i, "DisplayName": f"account {i}", "Tier": ["gold", "silver"][i % 2]}
            for i in range(start, start + n)]


class Shop:
    """The project, its API and its destination."""

    def __init__(self, project: Project, api: PagedApi, destination: str, dataset: str) -> None:
        self.project, self.api, self.destination, self.dataset = (
            project, api, destination, dataset)

    def load(self, order_rows: list[dict[str, Any]], account_rows: list[dict[str, Any]]) -> None:
        self.api.publish("orders", order_rows)
        self.api.publish("accounts", account_rows)
        dest = ('"duckdb"' if self.destination == "duckdb"
                else f'dlt.destinations.postgres("{DSN}")')
        self.project.python(LOAD.format(pipeline=PIPELINE, destination=dest,
                                        dataset=self.dataset))

    def sql(self, statement: str, *params: Any) -> list[Any]:
        """A statement on the destination through the pipeline's own SQL client; `{t}`
        stands for the qualified `orders`, `{c}` for the qualified `customer_accounts`."""
        proc = self.project.python(f'''
import json, dlt
p = dlt.attach("{PIPELINE}")
with p.sql_client() as c:
    sql = {statement!r}.format(t=c.make_qualified_table_name("orders"),
                               c=c.make_qualified_table_name("customer_accounts"))
    rows = c.execute_sql(sql, *{list(params)!r})
    print(json.dumps([list(r) for r in rows or []], default=str))
''')
        out: list[Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        return out

    def age_loads(self, days: float) -> None:
        """Move every load so far `days` back in time (the roots' `_dlt_load_id`; a child
        table's rows follow their root's), so the next load is alone in the recent window."""
        for [load_id] in self.sql("SELECT DISTINCT _dlt_load_id FROM {t}"):
            older = f"{float(load_id) - days * 86400:.6f}"
            for table in ("{t}", "{c}"):
                self.sql(f"UPDATE {table} SET _dlt_load_id = %s WHERE _dlt_load_id = %s",
                         older, load_id)

    def sweep(self) -> list[tuple[str, str, list[str]]]:
        """`reconcile --all --include-removal`: (drift type, table, columns) of each finding,
        after checking that the sweep itself ran clean of errors and notes of unguarded
        tables."""
        proc = self.project.cli("reconcile", "--all", "--include-removal", "--dry-run",
                                "--format", "json")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        doc = json.loads(proc.stdout)
        assert not [r["error"] for r in doc["results"] if r.get("error")], proc.stdout
        assert "no Pydantic model" not in proc.stdout + proc.stderr
        return sorted((f["drift_type"], f["table"], f["columns"])
                      for r in doc["results"] for f in r["findings"])


@pytest.fixture(params=[("duckdb", SOURCE), ("duckdb", REST_API_SOURCE),
                        pytest.param(("postgres", SOURCE), marks=pytest.mark.postgres)],
                ids=["duckdb", "duckdb-rest_api", "postgres"])
def shop(request: pytest.FixtureRequest, project: Project) -> Iterator[Shop]:
    destination, source = request.param
    dataset = f"shop_api_{uuid.uuid4().hex[:8]}"
    if destination == "postgres":
        require_server("127.0.0.1", 5432, "PostgreSQL")
        project.secrets(f'[destination.postgres]\ncredentials = "{DSN}"\n')
    api = PagedApi(project.root / "api")
    project.module("pipelines.shop_api", source)
    project.config(f'[sources.shop_api]\nbase_url = "{api.url}"\n')
    try:
        yield Shop(project, api, destination, dataset)
    finally:
        api.close()
        if destination == "postgres":
            import psycopg2

            with psycopg2.connect(DSN) as con, con.cursor() as cur:
                cur.execute(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')


def _lint(project: Project) -> None:
    """The generated modules pass ruff and mypy (strict) as the project's own code would."""
    folder = "inferred_models"
    for tool, args in (("ruff", ["check", "--isolated", "--select", "F,E,W,I,UP,B",
                                 "--line-length", "100", folder]),
                       ("ruff", ["format", "--check", "--isolated", "--line-length", "100",
                                 folder]),
                       ("mypy", ["--strict", "--follow-imports=silent",
                                 "--no-error-summary", folder])):
        proc = subprocess.run([sys.executable, "-m", tool, *args], cwd=project.root,
                              capture_output=True, text=True, check=False, env=checker_env())
        assert proc.returncode == 0, f"{tool} {args[0]}:\n{proc.stdout}{proc.stderr}"


GATE = '''
import dlt
from dlt_contract_ops import gated_run
from dlt_contract_ops.errors import GateRejected
from pipelines.shop_api import shop_api

try:
    report = gated_run(dlt.attach("{pipeline}"), shop_api())
except GateRejected as exc:
    report = exc.report
print("ACTION", report.action)
print("TABLES", sorted({{d.table for d in report.differences if not d.approved}}))
'''


def test_infer_and_bind_guard_every_table_of_a_project_without_models(shop: Shop) -> None:
    project = shop.project
    # two loads, the first a day and a half back: a baseline and a recent window
    shop.load(orders(0), accounts(0))
    shop.age_loads(1.5)
    shop.load(orders(40), accounts(10))
    # `init` declares the source: it has no model, but a local pipeline loaded it
    init = project.cli("init")
    assert init.returncode == 0, init.stdout + init.stderr
    assert ("added [sources.shop_api.contract_ops]: `pipelines.shop_api:shop_api` (no model "
            f"yet, pipeline `{PIPELINE}`)") in init.stdout
    assert "models infer -s shop_api" in init.stdout
    checked = project.cli("validate")
    assert checked.returncode != 0
    assert "run `dlt-contract-ops models infer -s shop_api`" in checked.stdout
    unguarded = project.cli("reconcile", "--all", "--dry-run")
    assert "no Pydantic model" in unguarded.stdout + unguarded.stderr

    printed = project.cli("models", "infer", "-s", "shop_api", "--dry-run")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == (
        "[sources.shop_api.contract_ops.models]\n"
        'orders = "inferred_models.shop_api.orders:Orders"\n'
        'accounts = "inferred_models.shop_api.customer_accounts:CustomerAccounts"\n'
    )
    written = project.cli("models", "infer", "-s", "shop_api")
    assert written.returncode == 0, written.stderr
    assert printed.stdout in (project.root / ".dlt" / "config.toml").read_text()
    modules = sorted(p.name for p in (project.root / "inferred_models" / "shop_api").iterdir()
                     if p.suffix == ".py")
    assert modules == ["__init__.py", "customer_accounts.py", "orders.py"]
    _lint(project)
    assert project.cli("validate").returncode == 0

    # every table guarded, and nothing to say
    text = project.cli("reconcile", "--all", "--include-removal")
    assert text.returncode == 0, text.stdout + text.stderr
    assert text.stdout.count("✓ No drift") == 2, text.stdout  # the default detectors, removal
    assert shop.sweep() == []

    # the gate: a batch like the loaded ones is accepted and loaded
    shop.api.publish("orders", orders(80))
    shop.api.publish("accounts", accounts(20))
    gate = project.python(GATE.format(pipeline=PIPELINE))
    assert "ACTION loaded" in gate.stdout, gate.stdout + gate.stderr
    assert shop.sweep() == []
    # ... and one whose nested items send `Qty` as text is rejected on the child table
    shop.api.publish("orders", [{**o, "Items": [{**i, "Qty": f"{i['Qty']} pcs"}
                                                for i in o["Items"]]} for o in orders(100)])
    rejected = project.python(GATE.format(pipeline=PIPELINE))
    assert "ACTION rejected" in rejected.stdout, rejected.stdout + rejected.stderr
    assert "TABLES ['orders__items']" in rejected.stdout

    # (1) the API sends a new field, on the orders and in their nested items
    shop.load(orders(120, plant="additive"), accounts(30))
    additive = [("additive", "orders", ["discount_code"]),
                ("additive", "orders__items", ["gift_wrap"])]
    assert shop.sweep() == additive

    # (2) a declared column goes dark: null in every recent load, on the root and the child
    shop.age_loads(1.0)
    shop.load(orders(160, plant="dark"), accounts(40))
    dark = [("removal", "orders", ["customer_name"]), ("removal", "orders__items", ["qty"])]
    assert shop.sweep() == sorted(additive + dark)

    # (3) a declared column dropped from the destination, behind dlt's back
    shop.sql("ALTER TABLE {c} DROP COLUMN tier")
    missing = [("missing", "customer_accounts", ["tier"])]
    assert shop.sweep() == sorted(additive + dark + missing)
