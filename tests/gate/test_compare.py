"""The gate's pure decision as case tables: `compare`, the rename pairing rule, the reason."""

from __future__ import annotations

import doctest
import subprocess
import sys
import textwrap

import pytest

from dlt_contract_ops.core import ingest as compare_module
from dlt_contract_ops.core import rename
from dlt_contract_ops.core.ingest import ColumnShape, GatePolicy, Shape, compare
from dlt_contract_ops.core.rename import compatible, pair_renames
from dlt_contract_ops.model import gate as gate_module
from dlt_contract_ops.model.gate import Difference, reason_of

# the seed's contract: one row per order, every field required
ORDERS: Shape = {
    "orders": {
        "order_id": ColumnShape("text", False),
        "order_date": ColumnShape("date", False),
        "channel": ColumnShape("text", False),
        "amount_cents": ColumnShape("bigint", False),
    }
}
#: what dlt infers from a raw batch: every column nullable
SENT = {name: ColumnShape(shape.data_type) for name, shape in ORDERS["orders"].items()}


def sent(drop: tuple[str, ...] = (), **extra: ColumnShape) -> Shape:
    """The seed's batch as observed, minus `drop`, plus `extra` columns."""
    cols = {n: s for n, s in SENT.items() if n not in drop}
    cols.update(extra)
    return {"orders": cols}


def outcome(observed: Shape, expected: Shape = ORDERS, policy: GatePolicy | None = None,
            coerced: bool = False) -> list[tuple[str, str, str | None, bool, str | None]]:
    """(change, table.column, observed type, approved, renamed_from) per difference."""
    return [
        (d.change, d.label, d.observed_type, d.approved, d.renamed_from)
        for d in compare(observed, expected, policy or GatePolicy(), coerced=coerced)
    ]


NO_ADDITIONS = GatePolicy(allow_nullable_additions=False)
PINNED = GatePolicy(allow_nullable_additions=False,
                    approved_additions=frozenset({"orders.currency:text"}))
COERCE = GatePolicy(allow_coercion=True)


@pytest.mark.parametrize(
    ("case", "observed", "policy", "coerced", "expected"),
    [
        ("baseline", sent(), None, False, []),
        ("added nullable currency", sent(currency=ColumnShape("text")), None, False,
         [("added", "orders.currency", "text", True, None)]),
        ("added, but a non-null addition is never approved by the general rule",
         sent(currency=ColumnShape("text", False)), None, False,
         [("added", "orders.currency", "text", False, None)]),
        ("additions not allowed", sent(currency=ColumnShape("text")), NO_ADDITIONS, False,
         [("added", "orders.currency", "text", False, None)]),
        ("additions not allowed, currency pinned", sent(currency=ColumnShape("text")), PINNED,
         False, [("added", "orders.currency", "text", True, None)]),
        ("the pin names a type: bigint currency is not the approved one",
         sent(currency=ColumnShape("bigint")), PINNED, False,
         [("added", "orders.currency", "bigint", False, None)]),
        ("the pin names a table: the same column elsewhere is not approved",
         {**sent(), "refunds": {"currency": ColumnShape("text")}}, PINNED, False,
         [("added", "refunds.currency", "text", False, None)]),
        ("renamed date: half a rename is never approved, even nullable",
         sent(drop=("order_date",), sale_date=ColumnShape("date")), None, False,
         [("missing", "orders.order_date", None, False, None),
          ("added", "orders.sale_date", "date", False, "order_date")]),
        ("renamed date, pinned as an addition: the missing half still rejects",
         sent(drop=("order_date",), sale_date=ColumnShape("date")),
         GatePolicy(approved_additions=frozenset({"orders.sale_date:date"})), False,
         [("missing", "orders.order_date", None, False, None),
          ("added", "orders.sale_date", "date", False, "order_date")]),
        ("retyped amount (text like 9000c)", sent(amount_cents=ColumnShape("text")), None,
         False, [("retyped", "orders.amount_cents", "text", False, None)]),
        ("retyped, the model coerced it, coercion not allowed",
         sent(amount_cents=ColumnShape("text")), None, True,
         [("retyped", "orders.amount_cents", "text", False, None)]),
        ("retyped, coercion allowed, but the model refused a value",
         sent(amount_cents=ColumnShape("text")), COERCE, False,
         [("retyped", "orders.amount_cents", "text", False, None)]),
        ("retyped, coercion allowed and the model coerced it",
         sent(amount_cents=ColumnShape("text")), COERCE, True,
         [("retyped", "orders.amount_cents", "text", True, None)]),
        ("a variant column is a retype of its base column, not an addition",
         sent(amount_cents__v_text=ColumnShape("text")), None, False,
         [("retyped", "orders.amount_cents", "text", False, None)]),
        ("a variant column alone (every value was text) is still the base column",
         sent(drop=("amount_cents",), amount_cents__v_text=ColumnShape("text")), None, False,
         [("retyped", "orders.amount_cents", "text", False, None)]),
        ("removed channel", sent(drop=("channel",)), None, False,
         [("missing", "orders.channel", None, False, None)]),
        ("narrowing double into bigint is a retype",
         sent(amount_cents=ColumnShape("double")), None, False,
         [("retyped", "orders.amount_cents", "double", False, None)]),
        ("a table the contract does not know: each column is an addition",
         {**sent(), "refunds": {"refund_id": ColumnShape("text"),
                                "cents": ColumnShape("bigint", False)}}, None, False,
         [("added", "refunds.cents", "bigint", False, None),
          ("added", "refunds.refund_id", "text", True, None)]),
        ("a contract table absent from the batch: its required columns are missing",
         {}, None, False,
         [("missing", "orders.amount_cents", None, False, None),
          ("missing", "orders.channel", None, False, None),
          ("missing", "orders.order_date", None, False, None),
          ("missing", "orders.order_id", None, False, None)]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_compare(
    case: str, observed: Shape, policy: GatePolicy | None, coerced: bool,
    expected: list[tuple[str, str, str | None, bool, str | None]],
) -> None:
    assert outcome(observed, ORDERS, policy, coerced) == expected


@pytest.mark.parametrize(
    ("sent_type", "expected"),
    [
        ("bigint", []),  # widening: integers fit a double column as they are
        ("double", []),
        ("decimal", []),
        ("text", [("retyped", "orders.amount_cents", "text", False, None)]),
        ("bool", [("retyped", "orders.amount_cents", "bool", False, None)]),
    ],
)
def test_types_against_a_double_contract(
    sent_type: str, expected: list[tuple[str, str, str | None, bool, str | None]]
) -> None:
    contract: Shape = {"orders": {**ORDERS["orders"], "amount_cents": ColumnShape("double", False)}}
    assert outcome(sent(amount_cents=ColumnShape(sent_type)), contract) == expected


@pytest.mark.parametrize(
    ("observed", "expected"),
    [
        # a nullable column absent from the batch may just be NULL in every row: not missing
        ({"orders": {"order_id": ColumnShape("text")}}, []),
        # present with a compatible type: nothing to say
        ({"orders": {"order_id": ColumnShape("text"), "note": ColumnShape("text")}}, []),
        ({"orders": {"order_id": ColumnShape("text"), "note": ColumnShape("bigint")}},
         [("retyped", "orders.note", "bigint", False, None)]),
    ],
)
def test_a_nullable_column_absent_is_not_missing(
    observed: Shape, expected: list[tuple[str, str, str | None, bool, str | None]]
) -> None:
    contract: Shape = {"orders": {"order_id": ColumnShape("text", False),
                                  "note": ColumnShape("text", True)}}
    assert outcome(observed, contract) == expected


# a `items: list[Item]` field is a json column in the contract; a raw batch is unnested by dlt
WITH_ITEMS: Shape = {"orders": {**ORDERS["orders"], "items": ColumnShape("json", True),
                                "meta": ColumnShape("json", True)}}


@pytest.mark.parametrize(
    ("observed", "expected"),
    [
        # nested dicts flatten into `items__sku`-like columns of the same table
        (sent(meta__source=ColumnShape("text"), meta__tags__first=ColumnShape("text")), []),
        # a list of dicts becomes a child table, and its own lists grandchildren
        ({**sent(), "orders__items": {"sku": ColumnShape("text"), "qty": ColumnShape("bigint")},
          "orders__items__tags": {"value": ColumnShape("text")}}, []),
        # a field new inside the nested items is not seen: the json column takes any shape
        ({**sent(), "orders__items": {"sku": ColumnShape("text"),
                                      "gift_wrap": ColumnShape("bool", False)}}, []),
        # ...but a column merely sharing a json column's prefix without `__` is an addition
        (sent(items_count=ColumnShape("bigint")),
         [("added", "orders.items_count", "bigint", True, None)]),
        # ...and a child table of a column that is not json is a new table
        ({**sent(), "orders__lines": {"sku": ColumnShape("text")}},
         [("added", "orders__lines.sku", "text", True, None)]),
    ],
)
def test_json_columns_cover_what_dlt_unnests(
    observed: Shape, expected: list[tuple[str, str, str | None, bool, str | None]]
) -> None:
    assert outcome(observed, WITH_ITEMS) == expected


@pytest.mark.parametrize(
    ("added", "missing", "pairs"),
    [
        ({"sale_date": "date"}, {"order_date": "date"}, {"sale_date": "order_date"}),
        # a type that does not carry the values is no rename
        ({"sale_date": "text"}, {"order_date": "date"}, {}),
        # widening: a date column renamed and sent as timestamps
        ({"sold_at": "timestamp"}, {"order_date": "date"}, {}),
        ({"sold_on": "date"}, {"sold_at": "timestamp"}, {"sold_on": "sold_at"}),
        # an exact type match beats a widening one
        ({"cents": "bigint"}, {"amount_d": "double", "amount_b": "bigint"},
         {"cents": "amount_b"}),
        ({"cents": "bigint"}, {"amount_d": "double", "amount_x": "decimal"}, {}),
        # two equally good candidates: no pair (a guess would mislead)
        ({"day": "date"}, {"order_date": "date", "ship_date": "date"}, {}),
        # each missing column pairs at most once, names visited in sorted order
        ({"b_date": "date", "a_date": "date"}, {"order_date": "date"},
         {"a_date": "order_date"}),
        ({"a": "date", "b": "text"}, {"x": "date", "y": "text"}, {"a": "x", "b": "y"}),
        # an unknown type on one side holds nothing against the pair
        ({"note2": None}, {"note": "text"}, {"note2": "note"}),
        ({}, {"order_date": "date"}, {}),
        ({"sale_date": "date"}, {}, {}),
    ],
)
def test_pair_renames(
    added: dict[str, str | None], missing: dict[str, str | None], pairs: dict[str, str]
) -> None:
    assert pair_renames(added, missing) == pairs


@pytest.mark.parametrize(
    ("observed", "expected", "fits"),
    [
        ("bigint", "bigint", True),
        ("bigint", "double", True),
        ("bigint", "decimal", True),
        ("double", "bigint", False),
        ("text", "bigint", False),
        ("bigint", "text", False),
        ("date", "timestamp", True),
        ("timestamp", "date", False),
        ("bool", "bigint", False),
        ("json", "json", True),
        (None, "text", True),
        ("text", None, True),
    ],
)
def test_compatible(observed: str | None, expected: str | None, fits: bool) -> None:
    assert compatible(observed, expected) is fits


def test_exact_type_rename_beats_a_widening_one_in_compare() -> None:
    contract: Shape = {"orders": {"total": ColumnShape("double", False),
                                  "amount_cents": ColumnShape("bigint", False)}}
    observed: Shape = {"orders": {"cents": ColumnShape("bigint")}}
    assert outcome(observed, contract) == [
        ("missing", "orders.amount_cents", None, False, None),
        ("missing", "orders.total", None, False, None),
        ("added", "orders.cents", "bigint", False, "amount_cents"),
    ]


def test_two_candidates_in_compare_pair_with_none() -> None:
    contract: Shape = {"orders": {"order_date": ColumnShape("date", False),
                                  "ship_date": ColumnShape("date", False)}}
    observed: Shape = {"orders": {"day": ColumnShape("date")}}
    assert [d.renamed_from for d in compare(observed, contract, GatePolicy())] == [
        None, None, None]


def _d(change: str, column: str, **kw: object) -> Difference:
    return Difference(table="orders", column=column, change=change, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("differences", "reason"),
    [
        ([], "no differences: the batch matches the contract"),
        ([_d("added", "currency", observed_type="text", approved=True)],
         "added: orders.currency (approved)"),
        ([_d("added", "sale_date", observed_type="date", renamed_from="order_date"),
          _d("missing", "order_date", expected_type="date", nullable=False)],
         "missing: orders.order_date; added: orders.sale_date (renamed from order_date?)"),
        ([_d("retyped", "amount_cents", observed_type="text", expected_type="bigint")],
         "retyped: orders.amount_cents (text, expected bigint)"),
        ([_d("retyped", "amount_cents", observed_type="text", expected_type="bigint",
             approved=True)],
         "retyped: orders.amount_cents (text, expected bigint) (approved)"),
        ([_d("missing", "channel", expected_type="text", nullable=False)],
         "missing: orders.channel"),
        # grouped by change in a fixed order, columns in the order given
        ([_d("added", "b"), _d("retyped", "r", observed_type="text", expected_type="date"),
          _d("added", "a"), _d("missing", "m")],
         "missing: orders.m; retyped: orders.r (text, expected date); added: orders.b, orders.a"),
        ([Difference(table="Orders-EU", column="Straße Nr", change="added")],
         "added: Orders-EU.Straße Nr"),
    ],
)
def test_reason_of(differences: list[Difference], reason: str) -> None:
    assert reason_of(differences) == reason


def test_the_seed_rejections_name_their_columns() -> None:
    renamed = sent(drop=("order_date",), sale_date=ColumnShape("date"))
    retyped = sent(amount_cents=ColumnShape("text"))
    removed = sent(drop=("channel",))
    reasons = [reason_of(compare(o, ORDERS, GatePolicy())) for o in (renamed, retyped, removed)]
    assert reasons == [
        "missing: orders.order_date; added: orders.sale_date (renamed from order_date?)",
        "retyped: orders.amount_cents (text, expected bigint)",
        "missing: orders.channel",
    ]


@pytest.mark.parametrize("module", [compare_module, gate_module, rename])
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert (result.failed, result.attempted > 0) == (0, True)


def test_the_decision_imports_without_dlt_or_drivers() -> None:
    probe = """
        import sys
        from dlt_contract_ops.core.ingest import ColumnShape, GatePolicy, compare
        from dlt_contract_ops.model.gate import reason_of
        obs = {"o": {"b": ColumnShape("text")}}
        assert reason_of(compare(obs, {"o": {}}, GatePolicy())) == "added: o.b (approved)"
        heavy = ("dlt", "duckdb", "psycopg2", "sqlalchemy", "sentry_sdk", "click")
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
        assert not loaded, loaded
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(probe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
