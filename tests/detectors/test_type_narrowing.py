"""A narrowed column is `type` drift, a widened one never is: real dlt loads into DuckDB,
PostgreSQL and MariaDB, then `ALTER ... TYPE` out of band, then `reconcile` in process.

The `narrow` source's columns were narrowed until the live type cannot hold every value of
the model's type (a `bigint` in `numeric(5,2)`, `real`, `decimal(4,1)`; a `str` in
`varchar(3)`): one `type` finding naming them, exit 3 with `--fail-on-drift`. The `widen`
source's columns were widened or narrowed only as far as the model allows (`numeric(38,0)`,
`text`, `varchar(3)` for `Field(max_length=3)`, `numeric(12,2)` for `max_digits=10,
decimal_places=2`): no finding, exit 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.destinations.servers import Backend, make, unique
from tests.projects import Project

SOURCE = """
from decimal import Decimal

import dlt
from pydantic import BaseModel, Field


class Payment(BaseModel):
    id: int
    amount_cents: int
    units: int
    fee: int
    code: str
    tag: str = Field(max_length=5)


class Ledger(BaseModel):
    id: int
    total: int
    ratio: float
    label: str
    name: str
    short: str = Field(max_length=3)
    price: Decimal = Field(max_digits=10, decimal_places=2)


@dlt.resource(columns=Payment)
def payments():
    for i in range(3):
        yield {"id": i, "amount_cents": 5 + i, "units": i, "fee": i, "code": "ab", "tag": "xy"}


@dlt.resource(columns=Ledger)
def ledger():
    for i in range(3):
        yield {"id": i, "total": i, "ratio": i / 4, "label": "l", "name": "n", "short": "abc",
               "price": Decimal("12.50")}


@dlt.source(name="narrow")
def narrow():
    return payments()


@dlt.source(name="widen")
def widen():
    return ledger()
"""

PIPELINE = "types_pipe"

#: per backend: out-of-band narrowings of `payments`, widenings of `ledger` (column, type)
ALTERS: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]] = {
    "postgres": (
        [("amount_cents", "numeric(5,2)"), ("units", "numeric(3,0)"), ("fee", "real"),
         ("code", "varchar(3)"), ("tag", "varchar(3)")],
        [("total", "numeric(38,0)"), ("label", "text"), ("short", "varchar(3)"),
         ("price", "numeric(12,2)")],
    ),
    "duckdb": (
        # DuckDB keeps no VARCHAR length: a str column cannot be narrowed there
        [("amount_cents", "DECIMAL(4,1)"), ("units", "INTEGER"), ("fee", "FLOAT")],
        [("total", "DECIMAL(38,0)"), ("short", "VARCHAR(3)"), ("price", "DECIMAL(12,2)")],
    ),
    "mariadb": (
        [("amount_cents", "decimal(5,2)"), ("units", "decimal(3,0)"), ("fee", "float"),
         ("code", "varchar(3)"), ("tag", "varchar(3)")],
        [("total", "decimal(38,0)"), ("label", "longtext"), ("short", "varchar(3)"),
         ("price", "decimal(12,2)")],
    ),
}

#: how each backend spells the narrowed `amount_cents` and `tag` in the finding
AMOUNT = {"postgres": "NUMERIC(5,2)", "duckdb": "DECIMAL(4,1)", "mariadb": "DECIMAL(5,2)"}
VARCHAR = {"postgres": "CHARACTER VARYING(3)", "mariadb": "VARCHAR(3)"}


def _alter(backend: Backend, table: str, column: str, db_type: str) -> str:
    name = backend.q(column)
    if backend.kind == "mariadb":
        return f"ALTER TABLE {table} MODIFY {name} {db_type} NOT NULL"
    if backend.kind == "duckdb":
        return f"ALTER TABLE {table} ALTER {name} TYPE {db_type}"
    return f"ALTER TABLE {table} ALTER COLUMN {name} TYPE {db_type}"


@pytest.fixture(params=sorted(ALTERS))
def altered(
    request: pytest.FixtureRequest, tmp_path: Path, project: Project
) -> Iterator[tuple[Project, Backend]]:
    backend = make(request.param, tmp_path)
    dataset = unique("co_types")
    project.module("types_src", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    project.secrets(backend.secrets())
    for source in ("narrow", "widen"):
        project.source(source, f"types_src:{source}", pipeline_name=PIPELINE,
                       destination=backend.destination, dataset_name=dataset)
    try:
        project.python(
            f"""
            import dlt
            from types_src import narrow, widen
            p = dlt.pipeline({PIPELINE!r}, destination={backend.destination!r},
                             dataset_name={dataset!r})
            p.run([narrow(), widen()])
            """
        )
        narrowed, widened = ALTERS[backend.kind]
        backend.execute(dataset, [
            *(_alter(backend, backend.q(dataset, "payments"), c, t) for c, t in narrowed),
            *(_alter(backend, backend.q(dataset, "ledger"), c, t) for c, t in widened),
        ])
        yield project, backend
    finally:
        backend.drop_dataset(dataset)


def _reconcile(project: Project, source: str, fmt: str) -> tuple[int, str]:
    from dlt_contract_ops.cli import main

    result = CliRunner().invoke(
        main,
        ["reconcile", "-s", source, "--fail-on-drift", "--dry-run", "--format", fmt,
         "--project-dir", str(project.root)],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def _type_result(output: str) -> dict[str, Any]:
    doc = json.loads(output)
    (result,) = [r for r in doc["results"] if r["detector"] == "type"]
    return result  # type: ignore[no-any-return]


def test_narrowed_types_are_type_drift(altered: tuple[Project, Backend]) -> None:
    project, backend = altered
    code, output = _reconcile(project, "narrow", "json")
    assert code == 3, output
    result = _type_result(output)
    assert result["error"] is None
    (finding,) = result["findings"]
    narrowed = sorted(c for c, _ in ALTERS[backend.kind][0])
    assert finding["columns"] == narrowed
    assert finding["column_types"]["amount_cents"] == AMOUNT[backend.kind]
    assert finding["expected_types"] == {c: "bigint" for c in narrowed if c not in ("code", "tag")
                                         } | {c: "text" for c in ("code", "tag") if c in narrowed}

    code, text = _reconcile(project, "narrow", "text")
    assert code == 3, text
    assert f"amount_cents: live {AMOUNT[backend.kind]} cannot hold the model's bigint" in text
    if backend.kind != "duckdb":
        varchar = VARCHAR[backend.kind]
        assert f"tag: live {varchar} cannot hold the model's text of up to 5 characters" in text
        assert f"code: live {varchar} cannot hold the model's text" in text


def test_widened_types_are_no_drift(altered: tuple[Project, Backend]) -> None:
    project, _ = altered
    code, output = _reconcile(project, "widen", "json")
    assert _type_result(output)["findings"] == []
    assert code == 0, output
