"""`contract verify`'s pure parts: the checks a contract and its model imply, reading counts
and examples back, and the queries as each dialect renders them. The live runs are in
`test_verify_live.py`."""

from __future__ import annotations

import datetime as dt
import doctest
import enum
import subprocess
import sys
import textwrap
from decimal import Decimal
from typing import Annotated, Any, Literal

import annotated_types as at
import pytest
from dlt.common.normalizers.naming.snake_case import NamingConvention
from pydantic import BaseModel, Field

from dlt_contract_ops.contracts import verify
from dlt_contract_ops.contracts.extract import contract_from_model, field_columns
from dlt_contract_ops.contracts.semantics import Semantics, TableSemantics
from dlt_contract_ops.contracts.verify import (
    Check,
    Violation,
    declared_constraints,
    plan_checks,
    read_counts,
    violations,
)
from dlt_contract_ops.contracts.verify_queries import (
    aggregate_query,
    examples_query,
    read_examples,
)
from dlt_contract_ops.core.naming import expected_table
from dlt_contract_ops.destinations.sql import render, table_ref
from dlt_contract_ops.destinations.sqlalchemy import SQLiteAdapter
from dlt_contract_ops.output.text import violation_line
from tests.contracts.builders import col, res

NAMING = NamingConvention()


class Color(enum.IntEnum):
    red = 1
    blue = 2


@TableSemantics(keys=("orderId", "line"))
class Order(BaseModel):
    orderId: int
    line: int
    status: Literal["paid", "pending"]
    color: Color | None = None
    amount: Annotated[float, Field(ge=0, lt=1000)]
    qty: Annotated[int, at.Interval(gt=0, le=50)] | None = None
    code: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    country: Annotated[str | None, Semantics(category_pattern="^[A-Z]{2}$")] = None
    flag: bool | None = Field(default=None)
    note: str | None = None


def _plan(model: type[BaseModel], live: list[str] | None = None, **kwargs: Any) -> verify.Plan:
    table = expected_table("orders", "orders", model, NAMING)
    contract = contract_from_model("s", table, model, NAMING)
    names = live if live is not None else [c.name for c in table.columns] + ["_dlt_id"]
    return plan_checks(contract, names, model=model, field_columns=field_columns(model, NAMING),
                       **kwargs)


def test_the_checks_a_model_declares() -> None:
    plan = _plan(Order)

    assert [(c.rule, c.columns) for c in plan.checks] == [
        ("not_null", ("amount",)),
        ("not_null", ("line",)),
        ("not_null", ("order_id",)),
        ("not_null", ("status",)),
        ("code_set", ("color",)),
        ("code_set", ("status",)),
        ("range", ("amount",)),
        ("range", ("qty",)),
        ("pattern", ("code",)),
        ("pattern", ("country",)),
        ("unique_key", ("line", "order_id")),
    ]
    by = {(c.rule, c.column): c for c in plan.checks}
    assert by[("code_set", "color")].values == (1, 2)  # an IntEnum lands as bigint
    assert by[("range", "amount")].bounds == ((">=", 0), ("<", 1000))
    assert by[("range", "qty")].bounds == ((">", 0), ("<=", 50))
    assert by[("pattern", "code")].pattern == "^[A-Z]{3}$"
    assert plan.row_id == ("line", "order_id")
    assert plan.notes == ()


@pytest.mark.parametrize(
    ("annotation", "bounds", "patterns"),
    [
        (Annotated[int, Field(ge=1)], [(">=", 1)], []),
        (Annotated[int, at.Gt(0), at.Lt(5)], [(">", 0), ("<", 5)], []),
        (Annotated[int, at.Le(9)] | None, [("<=", 9)], []),
        (Annotated[Decimal, Field(ge=Decimal("0.5"))], [(">=", Decimal("0.5"))], []),
        (Annotated[dt.date, at.Ge(dt.date(2020, 1, 1))], [(">=", dt.date(2020, 1, 1))], []),
        (Annotated[str, Field(pattern="^x")], [], ["^x"]),
        (Annotated[str, Field(min_length=2)], [], []),
        (int, [], []),
    ],
    ids=["field-ge", "annotated-types", "optional-nested", "decimal", "date", "pattern",
         "length-only", "none"],
)
def test_declared_constraints(annotation: Any, bounds: list[Any], patterns: list[str]) -> None:
    from pydantic import create_model

    model = create_model("M", x=(annotation, ...))
    assert declared_constraints(model, "x") == (bounds, patterns)


@pytest.mark.parametrize(
    ("contract", "live", "regex", "notes"),
    [
        (res(col("id"), col("status", "text", categories=("a",))), ["status"], True,
         ["column `id` is not in the live table"]),
        (res(col("id", "bigint", True, category_pattern="^1")), ["id"], True,
         ["is bigint, not text: pattern /^1/ not verified"]),
        (res(col("s", "text", True, category_pattern="^a")), ["s"], False,
         ["pattern /^a/ not verified: SQLite has no built-in"]),
        (res(col("j", "json", True, categories=("a",))), ["j"], True,
         ["is json: its code set cannot be compared"]),
        (res(col("id"), keys=("id", "gone")), ["id"], True,
         ["key column(s) `gone` not in the live table"]),
    ],
    ids=["missing-column", "pattern-on-bigint", "no-regex", "json-code-set", "missing-key"],
)
def test_what_cannot_be_verified_is_a_note(
    contract: Any, live: list[str], regex: bool, notes: list[str]
) -> None:
    note = SQLiteAdapter.capabilities.regex_note
    plan = plan_checks(contract, live, regex=regex, regex_note=note)
    assert len(plan.notes) == len(notes)
    for note, part in zip(plan.notes, notes, strict=True):
        assert part in note


def test_contract_recorded_bounds_and_pattern_are_verified_too() -> None:
    column = col("n", "bigint", True)
    for attr, value in (("ge", "1"), ("lt", "10"), ("pattern", None)):
        if hasattr(column, attr) and value is not None:
            object.__setattr__(column, attr, value)
    plan = plan_checks(res(column), ["n"])
    if hasattr(column, "ge"):  # a contract model that records bounds
        assert [c.bounds for c in plan.checks] == [((">=", 1), ("<", 10))]
    else:
        assert plan.checks == ()


def test_a_null_row_is_pointed_at_by_dlt_id_without_a_key() -> None:
    plan = plan_checks(res(col("id")), ["id", "_dlt_id"])
    assert plan.row_id == ("_dlt_id",)
    assert plan_checks(res(col("id")), ["id"]).row_id == ()


def test_counts_violations_and_examples() -> None:
    a, b, k = Check("not_null", ("a",)), Check("range", ("b",), bounds=((">", 0),)), \
        Check("unique_key", ("x", "y"))
    counts = read_counts([a, b, k], (10, 0, Decimal(4), 2))
    assert counts == {a: 0, b: 4, k: 2}
    assert read_counts([a], None) == {a: 0}
    assert read_counts([a], (0, None)) == {a: 0}  # an empty table sums to NULL

    found = violations(counts, {b: [-1, -2, -3, -4], k: [{"x": 1, "y": 2}]})
    assert found == [Violation(b, 4, (-1, -2, -3)), Violation(k, 2, ({"x": 1, "y": 2},))]
    assert found[1].document() == {
        "column": "x, y", "rule": "unique_key", "count": 2, "examples": [{"x": 1, "y": 2}],
        "declared": "unique (x, y)", "columns": ["x", "y"],
    }


@pytest.mark.parametrize(
    ("doc", "line"),
    [
        ({"column": "a", "rule": "not_null", "count": 1, "examples": [{"id": 3}]},
         'a: not_null, 1 row(s) NULL; e.g. {"id": 3}'),
        ({"column": "a, b", "rule": "unique_key", "count": 2, "examples": [],
          "columns": ["a, b", "c"]},
         '"a, b", c: unique_key, 2 row(s) beyond the first of their key'),
        ({"column": "n", "rule": "range", "count": 1, "examples": [-1], "declared": ">= 0"},
         "n: range, 1 row(s) outside >= 0; e.g. -1"),
    ],
)
def test_violation_line(doc: dict[str, Any], line: str) -> None:
    assert violation_line(doc) == line


CHECKS = [
    Check("not_null", ("a b",)),
    Check("code_set", ("Status",), values=("x", "y")),
    Check("range", ("n",), bounds=((">=", 0), ("<", 10))),
    Check("pattern", ("code",), pattern="^A"),
]
KEY = Check("unique_key", ("id",))


@pytest.mark.parametrize(
    ("dialect", "fragment"),
    [
        ("duckdb", 'NOT REGEXP_MATCHES("code", ?)'),
        ("postgres", 'NOT "code" ~ %s'),
        ("bigquery", "NOT REGEXP_CONTAINS(`code`, ?)"),
    ],
)
def test_one_aggregate_per_table_in_each_dialect(dialect: str, fragment: str) -> None:
    table = table_ref("t", "ds")
    query, params = aggregate_query(table, [*CHECKS, KEY], ["a b", "Status", "n", "code", "id"])
    sql = render(query, dialect)
    assert sql.count("SELECT") == 2  # one statement: the key's groups in a subquery
    assert fragment in sql
    assert "GROUP BY" in sql
    assert params == ["x", "y", 0, 10, "^A"]

    flat, flat_params = aggregate_query(table, CHECKS, ["a b", "Status", "n", "code"])
    assert render(flat, dialect).count("SELECT") == 1
    assert flat_params == params


def test_helper_names_never_shadow_a_column() -> None:
    query, _ = aggregate_query(table_ref("t", "ds"), [KEY, *CHECKS], ["_co_rows", "_co_v0"])
    sql = render(query, "duckdb")
    assert 'AS "__co_rows"' in sql
    assert 'AS "__co_v0"' in sql


def test_examples_query_reads_back_by_rank() -> None:
    checks = [CHECKS[1], KEY]
    query, params, outputs = examples_query(table_ref("t", "ds"), checks, ["id"],
                                            ["Status", "id"])
    assert params == ["x", "y"]
    assert outputs == [["Status"], ["id"]]
    assert render(query, "postgres").startswith("SELECT")
    # result columns: Status, id, then one hit (rank or NULL) per check
    rows = [("z", 1, 2, None), ("w", 7, 1, 1), ("q", 2, None, 2)]
    assert read_examples(rows, checks, outputs) == {
        checks[0]: [("w",), ("z",)],
        checks[1]: [(7,), (2,)],
    }


def test_doctests() -> None:
    failures, _ = doctest.testmod(verify)
    assert failures == 0


def test_verify_is_pure() -> None:
    code = textwrap.dedent(
        """
        import sys
        import dlt_contract_ops.contracts.verify
        print(sorted(m for m in ("sqlglot", "duckdb", "psycopg2", "click", "dlt")
                     if m in sys.modules))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
