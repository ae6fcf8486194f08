"""`contract verify` against real data: a real dlt pipeline loads clean rows into DuckDB and
PostgreSQL, violating rows are written out of band with SQL, and each violation class is found
with its count and examples; a clean table raises nothing. Column names are odd on purpose
(the source uses dlt's `direct` naming, so `order id`, `Line-No`, `Order Status` and `größe`
land as written).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.engine.sweep_stats import SweepStats, observe_sweeps
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from tests.conftest import require_server
from tests.projects import Project

DSN = "postgresql://postgres:x@127.0.0.1:5432/test"

SOURCE = r'''
from enum import Enum
from typing import Annotated, Literal, Optional

import dlt
from pydantic import BaseModel, Field

from dlt_contract_ops import contracts as c


class Tier(str, Enum):
    gold = "gold"
    silver = "silver"


@c.TableSemantics(keys=("order id", "Line-No"), grain="one row per order line")
class Order(BaseModel):
    order_id: int = Field(alias="order id")
    line_no: int = Field(alias="Line-No")
    status: Literal["paid", "pending"] = Field(alias='Order Status')
    tier: Optional[Tier] = None
    amount: Annotated[float, Field(ge=0, lt=1000)] = Field(alias="größe")
    code: Optional[str] = Field(default=None, pattern=r"^[A-Z]{3}-[0-9]+$")
    country: Annotated[Optional[str], c.Semantics(category_pattern="^[A-Z]{2}$")] = None
    note: Optional[str] = None


@c.TableSemantics(keys=("id",))
class Clean(BaseModel):
    id: int
    kind: Literal["a", "b"]
    score: Optional[int] = Field(default=None, ge=0, le=100)
    tag: Optional[str] = Field(default=None, pattern="^t")


@dlt.resource(name="orders", columns=Order)
def orders():
    yield [
        {"order id": i, "Line-No": 1, 'Order Status': "paid", "tier": "gold",
         "größe": 10.0 * i, "code": f"ABC-{i}", "country": "DE", "note": None}
        for i in range(6)
    ]


@dlt.resource(name="clean", columns=Clean)
def clean():
    yield [{"id": i, "kind": "ab"[i % 2], "score": i, "tag": f"t{i}"} for i in range(4)]


@dlt.source(name="shop")
def shop():
    return orders, clean
'''

ORDERS = ('"order id"', '"Line-No"', '"Order Status"', '"tier"', '"größe"', '"code"',
          '"country"', '"_dlt_load_id"', '"_dlt_id"')
#: rows written out of band, each breaking what its comment says
BAD_ROWS = [
    (2, 1, "paid", "gold", 20.0, "ABC-2", "DE"),  # duplicate key (2, 1)
    (3, 1, "paid", "gold", 30.0, "ABC-3", "DE"),  # duplicate key (3, 1) ...
    (3, 1, "paid", "gold", 30.0, "ABC-3", "DE"),  # ... twice
    (10, 1, "refunded", "gold", 1.0, "ABC-10", "DE"),  # status outside the code set
    (11, 1, "void", "gold", 1.0, "ABC-11", "DE"),
    (12, 1, "void", "platinum", 1.0, "ABC-12", "DE"),  # and tier outside its Enum
    (13, 1, "paid", None, -5.0, "ABC-13", "DE"),  # größe below ge=0
    (14, 1, "paid", None, 1000.0, "ABC-14", "DE"),  # größe not lt=1000
    (15, 1, "paid", None, 1.0, "abc-15", "Germany"),  # code and country off pattern
    (16, 1, "paid", None, 1.0, "XYZ", None),  # code off pattern; a NULL country is fine
    (17, 1, None, None, 1.0, None, None),  # NULL in the required `Order Status`
]


class Destination:
    """One destination the scenario runs on: how the pipeline loads, and raw SQL to break
    the data out of band."""

    def __init__(self, name: str, dataset: str) -> None:
        self.name = name
        self.dataset = dataset

    def execute(self, project: Project, statements: list[tuple[str, list[Any]]]) -> None:
        if self.name == "duckdb":
            import duckdb

            with duckdb.connect(str(project.root / "verify_pipe.duckdb")) as con:
                for sql, params in statements:
                    con.execute(sql.replace("%s", "?"), params)
            return
        import psycopg2

        with psycopg2.connect(DSN) as con, con.cursor() as cur:
            for sql, params in statements:
                cur.execute(sql, params)


@pytest.fixture(params=["duckdb", "postgres"])
def destination(request: pytest.FixtureRequest) -> Iterator[Destination]:
    if request.param == "duckdb":
        yield Destination("duckdb", "verify_data")
        return
    require_server("127.0.0.1", 5432, "PostgreSQL")
    dest = Destination("postgres", f"co_verify_{uuid.uuid4().hex[:8]}")
    yield dest
    import psycopg2

    with psycopg2.connect(DSN) as con, con.cursor() as cur:
        cur.execute(f'DROP SCHEMA IF EXISTS "{dest.dataset}" CASCADE')


@pytest.fixture
def loaded(project: Project, destination: Destination) -> Project:
    project.module("pipes.shop", SOURCE)
    project.config('[contract_ops]\nalert_sinks = []\n\n[sources.shop.schema]\nnaming = "direct"\n')
    if destination.name == "postgres":
        project.secrets(f'[destination.postgres]\ncredentials = "{DSN}"\n')
    project.source("shop", "pipes.shop:shop", pipeline_name="verify_pipe",
                   destination=destination.name, dataset_name=destination.dataset)
    project.python(
        f"""
        import dlt
        from pipes.shop import shop
        p = dlt.pipeline("verify_pipe", destination={destination.name!r},
                         dataset_name={destination.dataset!r})
        p.run(shop())
        """
    )
    return project


def _break(project: Project, destination: Destination) -> None:
    table = f'"{destination.dataset}"."orders"'
    statements: list[tuple[str, list[Any]]] = [
        # a required column whose NOT NULL someone dropped: the declaration still holds
        (f'ALTER TABLE {table} ALTER COLUMN "Order Status" DROP NOT NULL', []),
    ]
    placeholders = ", ".join(["%s"] * len(ORDERS))
    insert = f"INSERT INTO {table} ({', '.join(ORDERS)}) VALUES ({placeholders})"
    for i, row in enumerate(BAD_ROWS):
        statements.append((insert, [*row, "1700000000.000000", f"bad{i}"]))
    destination.execute(project, statements)


class Queries:
    """Queries of the test's sweeps per kind, each read as its sweep closed."""

    def __init__(self, sweeps: list[SweepStats]) -> None:
        self.sweeps = sweeps

    def items(self) -> Iterable[tuple[str, int]]:
        return sum((s.queries for s in self.sweeps), Counter[str]()).items()


@pytest.fixture
def queries() -> Iterator[Queries]:
    with observe_sweeps() as sweeps:
        yield Queries(sweeps)


def _verify(project: Project) -> ReconcileResult:
    [result] = run(["shop"], detectors=("contract",), dry_run=True, project_dir=project.root)
    assert result.error is None, result.error
    assert result.detector == "contract"
    return result


def _violations(finding: DriftFinding) -> dict[tuple[str, str], dict[str, Any]]:
    assert finding.violations is not None
    return {(v["column"], v["rule"]): v for v in finding.violations}


def test_clean_data_raises_nothing(loaded: Project, queries: Queries) -> None:
    result = _verify(loaded)

    assert result.findings == []
    # one metadata query for the dataset, one aggregate per modelled table, no examples
    assert {k: v for k, v in queries.items() if v} == {"metadata": 1, "coverage": 2}


def test_every_violation_class_with_counts_and_examples(
    loaded: Project, destination: Destination, queries: Queries
) -> None:
    _break(loaded, destination)

    result = _verify(loaded)

    [finding] = result.findings  # the clean table raises nothing
    assert (finding.drift_type, finding.resource, finding.table) == ("contract", "orders",
                                                                     "orders")
    found = _violations(finding)
    assert {k: (v["count"], v["examples"]) for k, v in found.items()} == {
        ('Order Status', "not_null"): (1, [{"order id": 17, "Line-No": 1}]),
        ('Order Status', "code_set"): (3, ["refunded", "void"]),
        ("tier", "code_set"): (1, ["platinum"]),
        ("größe", "range"): (2, [-5.0, 1000.0]),
        ("code", "pattern"): (2, ["XYZ", "abc-15"]),
        ("country", "pattern"): (1, ["Germany"]),
        ("Line-No, order id", "unique_key"): (
            3, [{"order id": 2, "Line-No": 1}, {"order id": 3, "Line-No": 1}]
        ),
    }
    assert found[("Line-No, order id", "unique_key")]["columns"] == ["Line-No", "order id"]
    assert found[("größe", "range")]["declared"] == ">= 0, < 1000"
    assert finding.columns == sorted(
        ["Order Status", "tier", "größe", "code", "country", "order id", "Line-No"]
    )
    assert set(finding.column_types) == set(finding.columns)
    # one aggregate per table, and one examples query for the one table with violations
    assert {k: v for k, v in queries.items() if v} == {"metadata": 1, "coverage": 2,
                                                       "sample": 1}


def test_reproduce_runs_as_pasted_and_shows_the_counts(
    loaded: Project, destination: Destination
) -> None:
    _break(loaded, destination)
    [finding] = _verify(loaded).findings
    assert finding.reproduce is not None

    got: list[tuple[Any, ...]] = []
    if destination.name == "duckdb":
        import duckdb

        with duckdb.connect(str(loaded.root / "verify_pipe.duckdb"), read_only=True) as con:
            got = con.execute(finding.reproduce).fetchall()
    else:
        import psycopg2

        with psycopg2.connect(DSN) as con, con.cursor() as cur:
            cur.execute(finding.reproduce)
            got = cur.fetchall()
    [row] = got
    # rows, then one count per violation in the finding's order
    assert [int(v) for v in row] == [6 + len(BAD_ROWS)] + [
        v["count"] for v in finding.violations or []
    ]


def test_cli_json_text_and_exit_codes(loaded: Project, destination: Destination) -> None:
    clean = loaded.cli("contract", "verify", "-s", "shop", "--fail-on-drift")
    assert clean.returncode == 0, clean.stderr
    assert "keeps every declared contract" in clean.stdout

    _break(loaded, destination)
    proc = loaded.cli("contract", "verify", "-s", "shop", "--format", "json", "--dry-run",
                      "--fail-on-drift")
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    [result] = doc["results"]
    assert result["detector"] == "contract"
    [finding] = result["findings"]
    assert finding["drift_type"] == "contract"
    assert {(v["column"], v["rule"]) for v in finding["violations"]} >= {
        ("Line-No, order id", "unique_key"), ('Order Status', "not_null"),
    }

    text = loaded.cli("contract", "verify", "-s", "shop", "--dry-run")
    assert text.returncode == 0, text.stderr
    assert 'Order Status: code_set, 3 row(s) not in {paid, pending}; e.g. "refunded", "void"' \
        in text.stdout
    assert "größe: range, 2 row(s) outside >= 0, < 1000; e.g. -5.0, 1000.0" in text.stdout

    unknown = loaded.cli("contract", "verify", "-s", "nope")
    assert unknown.returncode == 2  # a typo of a source is a usage error
    usage = loaded.cli("contract", "verify")
    assert usage.returncode == 2


def test_findings_go_through_the_sinks_with_dedup(
    loaded: Project, destination: Destination
) -> None:
    _break(loaded, destination)

    def alerts() -> list[str | None]:
        results = run(["shop"], detectors=("contract",), project_dir=loaded.root,
                      alert_sinks=["logging"])
        return [f.alert for r in results for f in r.findings]

    assert alerts() == ["new"]
    assert alerts() == ["repeat"]  # the same violations are not alerted again

