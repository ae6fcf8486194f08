"""`models infer`'s pure half: a dlt column as a Pydantic field, and a module that imports
only what it uses. Each case is checked the way it is used: the rendered field, compiled in
a model, read back through dlt's own conversion (`core.naming.expected_table`)."""

from __future__ import annotations

from typing import Any

import pytest
from dlt.common.normalizers.naming.snake_case import NamingConvention

from dlt_contract_ops.core.naming import expected_table, nested_tables
from dlt_contract_ops.infer.fields import ColumnFacts, field_text, python_name
from dlt_contract_ops.infer.module import Header, InferredTable, render_module

NAMING = NamingConvention()


def _model(table: InferredTable) -> tuple[str, Any]:
    text, cls = render_module(table, NAMING, Header("p", "d", "1"))
    namespace: dict[str, Any] = {}
    # `dont_inherit`: this test module's `from __future__ import annotations` is not the module's
    exec(compile(text, "<inferred>", "exec", dont_inherit=True), namespace)
    return text, namespace[cls]


@pytest.mark.parametrize(("column", "field", "data_type", "size"), [
    ({"name": "a", "data_type": "text", "nullable": False}, "a: str", "text", (None, None)),
    ({"name": "a", "data_type": "text", "precision": 12, "nullable": False},
     "a: str = Field(max_length=12)", "text", (12, None)),
    ({"name": "a", "data_type": "bigint", "nullable": False}, "a: int", "bigint", (None, None)),
    ({"name": "a", "data_type": "double"}, "a: float | None = None", "double", (None, None)),
    ({"name": "a", "data_type": "bool", "nullable": False}, "a: bool", "bool", (None, None)),
    ({"name": "a", "data_type": "binary", "nullable": False}, "a: bytes", "binary",
     (None, None)),
    ({"name": "a", "data_type": "date", "nullable": False}, "a: date", "date", (None, None)),
    ({"name": "a", "data_type": "time", "nullable": False}, "a: time", "time", (None, None)),
    ({"name": "a", "data_type": "decimal", "precision": 10, "scale": 2, "nullable": False},
     "a: Decimal = Field(max_digits=10, decimal_places=2)", "decimal", (10, 2)),
    ({"name": "a", "data_type": "timestamp", "nullable": False},
     'a: Annotated[datetime, Semantics(timezone="UTC")]', "timestamp", (None, None)),
    ({"name": "a", "data_type": "timestamp", "timezone": False, "nullable": False},
     "a: datetime  # timestamp without time zone", "timestamp", (None, None)),
    ({"name": "a", "data_type": "json"}, "a: dict[str, Any] | list[Any] | None = None", "json",
     (None, None)),
    ({"name": "class", "data_type": "text", "nullable": False},
     'class_: str = Field(alias="class")', "text", (None, None)),
    ({"name": "model_name", "data_type": "text", "nullable": False},
     'm_model_name: str = Field(alias="model_name")', "text", (None, None)),
])
def test_a_column_round_trips_through_dlts_conversion(
    column: dict[str, Any], field: str, data_type: str, size: tuple[int | None, int | None]
) -> None:
    text, model = _model(InferredTable("t", (column,)))
    assert f"    {field}\n" in text
    [got] = expected_table("r", "t", model, NAMING).columns
    assert (got.name, got.data_type, got.nullable) == (
        column["name"], data_type, column.get("nullable", True))
    assert (got.precision, got.scale) == size


def test_a_type_with_no_python_counterpart_is_any_with_a_comment() -> None:
    text, model = _model(InferredTable("t", ({"name": "g", "data_type": "wei"},
                                             {"name": "n"})))
    # dlt's `Wei` has no pydantic schema: a model typed so would not build
    assert "g: Any = None  # dlt data type `wei` has no Python counterpart" in text
    assert "n: Any = None  # no data type in dlt's schema" in text
    # never dropped: the reconciler expects both columns, with no declared type
    assert {(c.name, c.data_type) for c in expected_table("r", "t", model, NAMING).columns} == {
        ("g", None), ("n", None)}
    model.model_validate({"g": 10**30, "n": "x"})


def test_the_data_decides_optional_and_code_sets_and_ranges_are_comments() -> None:
    facts = {
        "status": ColumnFacts(200, 0, ("paid", "void")),
        "note": ColumnFacts(200, 3),
        "id": ColumnFacts(200, 0, None, "1", "200"),
    }
    columns = ({"name": "status", "data_type": "text"}, {"name": "note", "data_type": "text"},
               {"name": "id", "data_type": "bigint"})
    text, model = _model(InferredTable("t", columns, facts=facts))
    assert 'status: Annotated[str, Semantics(categories=("paid", "void"))]\n' in text
    assert "note: str | None = None\n" in text
    assert "    # observed 1 .. 200\n    id: int\n" in text
    from dlt_contract_ops.contracts.extract import contract_from_model

    expected = expected_table("r", "t", model, NAMING)
    contract = contract_from_model("s", expected, model, NAMING)
    assert {c.name: c.categories for c in contract.columns}["status"] == ("paid", "void")


def test_child_tables_are_nested_models_dlt_expects_as_tables() -> None:
    child = InferredTable("orders__line_items", ({"name": "sku", "data_type": "text"},),
                          children=(InferredTable("orders__line_items__tags",
                                                  ({"name": "value", "data_type": "text"},)),))
    root = InferredTable("orders", ({"name": "id", "data_type": "bigint"},), (child,))
    text, model = _model(root)
    assert "line_items: list[OrdersLineItems] = []" in text
    expected = expected_table("r", "orders", model, NAMING)
    tables = {t.table: sorted(t.names) for t in nested_tables(expected, model, NAMING)}
    assert tables == {"orders__line_items": ["sku"], "orders__line_items__tags": ["value"]}


def test_the_module_imports_only_what_it_uses() -> None:
    text, _ = _model(InferredTable("t", ({"name": "a", "data_type": "bigint",
                                          "nullable": False},)))
    imports = [line for line in text.splitlines() if line.startswith(("from ", "import "))]
    assert imports == ["from pydantic import BaseModel"]


@pytest.mark.parametrize(("column", "expected"), [
    ("user_id", ("user_id", None)),
    ("_private", ("private", "_private")),
    ("2fa", ("f_2fa", "2fa")),
    ("for", ("for_", "for")),
    ("schema", ("schema_", "schema")),
    ("Mixed", ("Mixed_", "Mixed")),  # snake_case would name the field `mixed`
])
def test_a_field_name_normalizes_to_its_column(
    column: str, expected: tuple[str, str | None]
) -> None:
    name, alias = python_name(column, NAMING, set())
    assert (name, alias) == expected
    assert NAMING.normalize_path(alias or name) == column or column != NAMING.normalize_path(
        column)


def test_two_columns_never_share_a_field_name() -> None:
    taken: set[str] = set()
    first = field_text({"name": "a b", "data_type": "text"}, NAMING, taken)
    second = field_text({"name": "a-b", "data_type": "text"}, NAMING, taken)
    assert (first.name, second.name) == ("a_b", "a_b_2")


def test_names_from_the_warehouse_cannot_inject_code() -> None:
    """Names come from the destination: a quote or a line break in one ends no docstring,
    comment or literal of the generated module."""
    import ast

    evil = 'x"""\nimport os  # \\'
    child = InferredTable(f"{evil}__kids", ({"name": evil, "data_type": "text"},))
    table = InferredTable(evil, ({"name": evil, "data_type": "bigint", "nullable": False},),
                          (child,))
    text, _cls = render_module(table, NAMING, Header(evil, evil, evil, evil))
    tree = ast.parse(text)
    imported = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                for a in node.names}
    assert "os" not in imported
    _, model = _model(table)
    assert next(info.alias for info in model.model_fields.values()) == evil
