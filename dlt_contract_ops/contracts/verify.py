"""Verify live data against a declared contract: the checks a contract implies, and what the
counts and examples a destination returns for them mean.

Pure: no SQL, no driver, no I/O. `plan_checks` turns a `ResourceContract` (plus the model,
for the Pydantic constraints the contract does not carry) into `Check` values; the runner
(`detectors/contract.py`) has the destination count each check's offending rows in one
aggregate query per table (`verify_queries.py`), and `violations` reads those counts and
examples back into `Violation` values, one per check that found rows.

The rules, each a property the model declares and the data may break:

- `not_null`: a required field (not `Optional`) whose column holds NULLs;
- `code_set`: a value outside the declared closed set (`Literal`, an `Enum`, or
  `Semantics(categories=...)`);
- `range`: a value outside `Field(ge=, gt=, le=, lt=)` (annotated_types `Ge`/`Gt`/`Le`/`Lt`);
- `pattern`: a text value `Field(pattern=...)` or `Semantics(category_pattern=...)` does not
  match (searched anywhere in the value, as Pydantic matches it: anchor it with `^...$`);
- `unique_key`: rows beyond the first for one value of the `TableSemantics(keys=...)` grain.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

from dlt_contract_ops.contracts.model import ColumnContract, ResourceContract
from dlt_contract_ops.core.columns import ROW_ID

if TYPE_CHECKING:
    pass

RuleName = Literal["not_null", "code_set", "range", "pattern", "unique_key"]
#: the order violations are reported in
RULES: tuple[RuleName, ...] = ("not_null", "code_set", "range", "pattern", "unique_key")
#: offending values a violation carries
EXAMPLES_PER_VIOLATION = 3
#: the comparison a value must pass, per annotated_types bound
_BOUNDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
#: dlt data types whose values can be compared with a bound (bool, json and binary cannot)
_ORDERED = {"bigint", "double", "decimal", "wei", "text", "date", "timestamp", "time"}

Op = Literal[">=", ">", "<=", "<"]


@dataclass(frozen=True)
class Check:
    """One declared property of one column (of the key columns, for `unique_key`).

    `values` is the code set, typed as the column holds it; `bounds` the comparisons every
    value must pass; `pattern` the regular expression every text value must match.
    """

    rule: RuleName
    columns: tuple[str, ...]
    values: tuple[Any, ...] = ()
    bounds: tuple[tuple[Op, Any], ...] = ()
    pattern: str | None = None

    @property
    def column(self) -> str:
        """The column, or the key columns joined, as a violation names it."""
        return ", ".join(self.columns)

    @property
    def declared(self) -> str:
        """What the model declares, in words: `in {paid, pending}`, `>= 0, < 10`, `/^A-/`.

        >>> Check("range", ("n",), bounds=((">=", 0), ("<", 10))).declared
        '>= 0, < 10'
        """
        if self.rule == "not_null":
            return "required (not Optional)"
        if self.rule == "code_set":
            return "in {" + ", ".join(str(v) for v in self.values) + "}"
        if self.rule == "range":
            return ", ".join(f"{op} {value}" for op, value in self.bounds)
        if self.rule == "pattern":
            return f"/{self.pattern}/"
        return f"unique ({self.column})"


@dataclass(frozen=True)
class Plan:
    """The checks of one table, and why any declared property is not checked."""

    checks: tuple[Check, ...]
    notes: tuple[str, ...] = ()
    #: columns that identify an offending row in examples of `not_null`: the declared key,
    #: else dlt's `_dlt_id`; empty when the table has neither
    row_id: tuple[str, ...] = ()


@dataclass(frozen=True)
class Violation:
    """Rows of one table that break one check: how many, and up to three examples."""

    check: Check
    count: int
    examples: tuple[Any, ...] = field(default_factory=tuple)

    def document(self) -> dict[str, Any]:
        """As a finding's `violations` entry carries it."""
        doc: dict[str, Any] = {
            "column": self.check.column,
            "rule": self.check.rule,
            "count": self.count,
            "examples": list(self.examples),
            "declared": self.check.declared,
        }
        if self.check.rule == "unique_key":
            doc["columns"] = list(self.check.columns)
        return doc


# -- reading the model ---------------------------------------------------------------------


def _metadata(annotation: Any, top: Iterable[Any]) -> list[Any]:
    """Constraint objects on a field: its own metadata, any nested `Annotated[...]`'s, and
    the members of grouped metadata (`annotated_types.Interval`)."""
    found: list[Any] = list(top)
    stack = [annotation]
    while stack:
        current = stack.pop()
        origin = get_origin(current)
        if origin is Annotated:
            found.extend(current.__metadata__)
            stack.append(get_args(current)[0])
        elif origin is Union or origin is types.UnionType:
            stack.extend(get_args(current))
    out: list[Any] = []
    for item in found:
        out.append(item)
        out.extend(getattr(item, "metadata", None) or [])  # a nested FieldInfo
        if hasattr(item, "__iter__") and type(item).__module__ == "annotated_types":
            out.extend(item)  # GroupedMetadata, e.g. Interval(ge=0, lt=10)
    return out


def declared_constraints(
    model: type[Any], field_name: str
) -> tuple[list[tuple[Op, Any]], list[str]]:
    """The bounds and the patterns `Field(...)`/annotated_types declare on a model field.

    Read here from the model, typed as Python holds them (a contract records bounds as
    text, and an older extraction did not record them at all).

    >>> from pydantic import BaseModel, Field
    >>> class M(BaseModel):
    ...     n: int = Field(ge=0, lt=10)
    ...     code: str = Field(pattern=r"^[A-Z]{3}$")
    >>> declared_constraints(M, "n"), declared_constraints(M, "code")
    (([('>=', 0), ('<', 10)], []), ([], ['^[A-Z]{3}$']))
    """
    info = model.model_fields[field_name]
    bounds: list[tuple[Op, Any]] = []
    patterns: list[str] = []
    for item in _metadata(info.annotation, info.metadata):
        for attr, op in _BOUNDS.items():
            value = getattr(item, attr, None)
            # annotated_types' `Ge(ge=0)` and its kin; `Interval` arrives expanded into them
            if value is not None and not isinstance(value, bool) and (
                type(item).__name__ == attr.capitalize()
            ):
                bounds.append((op, value))  # type: ignore[arg-type]  # op is one of Op
        pattern = getattr(item, "pattern", None)
        if isinstance(pattern, str) and pattern not in patterns:
            patterns.append(pattern)
        elif pattern is not None and hasattr(pattern, "pattern"):  # a compiled re.Pattern
            patterns.append(str(pattern.pattern))
    return list(dict.fromkeys(bounds)), patterns


def typed_values(column: ColumnContract) -> tuple[Any, ...] | None:
    """The code set as the column holds it (`"1"` → 1 in a bigint column); None when the
    column's type holds no comparable value.

    >>> typed_values(ColumnContract("n", "bigint", False, categories=("1", "2")))
    (1, 2)
    """
    convert: Any = {
        "bigint": int,
        "double": float,
        "decimal": Decimal,
        "wei": Decimal,
        "bool": lambda v: {"true": True, "false": False}[v.lower()],
        "text": str,
        None: str,
    }.get(column.type)
    if convert is None or column.categories is None:
        return None
    try:
        return tuple(convert(v) for v in column.categories)
    except (ValueError, KeyError, InvalidOperation):
        return None


def _typed(text: str, dtype: str | None) -> Any:
    """A bound recorded as text in a contract (`"0"`, `"2020-01-01"`), as the column holds it."""
    import datetime as dt

    convert: Any = {
        "bigint": int, "double": float, "decimal": Decimal, "wei": Decimal,
        "date": dt.date.fromisoformat, "timestamp": dt.datetime.fromisoformat,
    }.get(dtype or "", str)
    return convert(text)


def contract_constraints(column: ColumnContract) -> tuple[list[tuple[Op, Any]], list[str]]:
    """Bounds and pattern the contract itself records (`ge`/`gt`/`le`/`lt`/`pattern`, text),
    typed for the column; empty where the contract model records none.

    >>> contract_constraints(ColumnContract("n", "bigint", False))
    ([], [])
    """
    bounds: list[tuple[Op, Any]] = []
    for attr, op in _BOUNDS.items():
        text = getattr(column, attr, None)
        if isinstance(text, str):
            try:
                bounds.append((op, _typed(text, column.type)))  # type: ignore[arg-type]
            except (ValueError, InvalidOperation):
                continue
    pattern = getattr(column, "pattern", None)
    return bounds, [pattern] if isinstance(pattern, str) else []


def plan_checks(
    contract: ResourceContract,
    live_columns: Iterable[str],
    *,
    model: type[Any] | None = None,
    field_columns: Mapping[str, Sequence[str]] | None = None,
    regex: bool = True,
    regex_note: str = "",
) -> Plan:
    """The checks `contract` implies for the live columns it shares with the table.

    `model` and `field_columns` (field name → landed column names, `extract.field_columns`)
    add the ranges and patterns Pydantic declares. `regex` is whether the destination can
    match a regular expression; without it, pattern checks are left out with `regex_note`.

    >>> c = ResourceContract("s", "r", "r", (ColumnContract("id", "bigint", False),
    ...                      ColumnContract("kind", "text", True, categories=("a", "b"))),
    ...                      keys=("id",))
    >>> [(k.rule, k.column) for k in plan_checks(c, ["id", "kind"]).checks]
    [('not_null', 'id'), ('code_set', 'kind'), ('unique_key', 'id')]
    """
    live = set(live_columns)
    notes: list[str] = []
    where = f"table `{contract.table}`"
    constraints: dict[str, tuple[list[tuple[Op, Any]], list[str]]] = {}
    if model is not None and field_columns is not None:
        for field_name, names in field_columns.items():
            if field_name in model.model_fields:
                for name in names:
                    constraints[name] = declared_constraints(model, field_name)
    by_rule: dict[RuleName, list[Check]] = {r: [] for r in RULES}
    for column in contract.columns:
        name = column.name
        from_model = constraints.get(name, ([], []))
        recorded = contract_constraints(column)
        bounds = list(dict.fromkeys([*from_model[0], *recorded[0]]))
        patterns = list(dict.fromkeys([*from_model[1], *recorded[1]]))
        declared = (not column.nullable or column.categories or column.category_pattern
                    or bounds or patterns)
        if not declared:
            continue
        if name not in live:
            notes.append(f"{where}: column `{name}` is not in the live table: its declared "
                         "semantics are not verified (the `missing` detector reports it)")
            continue
        if not column.nullable:
            by_rule["not_null"].append(Check("not_null", (name,)))
        if column.categories is not None:
            values = typed_values(column)
            if values is None:
                notes.append(f"{where}: column `{name}` is {column.type_label}: its code set "
                             "cannot be compared with its values: not verified")
            else:
                by_rule["code_set"].append(Check("code_set", (name,), values=values))
        if bounds:
            if column.type in _ORDERED:
                by_rule["range"].append(Check("range", (name,), bounds=tuple(bounds)))
            else:
                notes.append(f"{where}: column `{name}` is {column.type_label}: its declared "
                             "range cannot be compared with its values: not verified")
        for pattern in dict.fromkeys([*patterns, *filter(None, [column.category_pattern])]):
            if column.type not in ("text", None):
                notes.append(f"{where}: column `{name}` is {column.type_label}, not text: "
                             f"pattern /{pattern}/ not verified")
            elif not regex:
                notes.append(f"{where}: column `{name}`: pattern /{pattern}/ not verified: "
                             f"{regex_note}")
            else:
                by_rule["pattern"].append(Check("pattern", (name,), pattern=pattern))
    keys = contract.keys or ()
    if keys:
        absent = [k for k in keys if k not in live]
        if absent:
            notes.append(f"{where}: key column(s) {', '.join(f'`{k}`' for k in absent)} not in "
                         "the live table: uniqueness of the declared key is not verified")
        else:
            by_rule["unique_key"].append(Check("unique_key", tuple(keys)))
    row_id = tuple(keys) if keys and all(k in live for k in keys) else (
        (ROW_ID,) if ROW_ID in live else ()
    )
    return Plan(tuple(c for r in RULES for c in by_rule[r]), tuple(notes), row_id)


# -- reading the results -------------------------------------------------------------------


def _count(value: Any) -> int:
    return int(value or 0)  # an empty table sums to NULL


def read_counts(checks: Sequence[Check], row: Sequence[Any] | None) -> dict[Check, int]:
    """The aggregate query's one row (`rows`, then one count per check) as counts per check.

    >>> read_counts([Check("not_null", ("a",))], (10, 2))
    {Check(rule='not_null', columns=('a',), values=(), bounds=(), pattern=None): 2}
    """
    if row is None:
        return dict.fromkeys(checks, 0)
    return {c: _count(row[1 + i]) for i, c in enumerate(checks)}


def example_value(check: Check, values: Sequence[Any], row_id: Sequence[str]) -> Any:
    """One example as a violation carries it: the offending value; the key (or `_dlt_id`)
    of a row with a NULL; the duplicated key. One name gives a plain value, several a dict."""
    names = row_id if check.rule == "not_null" else check.columns
    if len(names) == 1:
        return values[0]
    return dict(zip(names, values, strict=True))


def violations(
    counts: Mapping[Check, int], examples: Mapping[Check, Sequence[Any]] | None = None
) -> list[Violation]:
    """The checks that found rows, in rule order, with their examples (at most three)."""
    examples = examples or {}
    found = [
        Violation(c, n, tuple(examples.get(c, ())[:EXAMPLES_PER_VIOLATION]))
        for c, n in counts.items()
        if n > 0
    ]
    return sorted(found, key=lambda v: (RULES.index(v.check.rule), v.check.columns))


def violated_columns(found: Sequence[Violation]) -> list[str]:
    """Every column a violation names, once, sorted: a finding's `columns`."""
    return sorted({c for v in found for c in v.check.columns})
