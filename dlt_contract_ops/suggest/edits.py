"""The smallest model change for one finding, as an edit of the model's source text.

Pure: a finding, what the sweep knew of its table (`TableFacts`) and the file's text in; the
edited text and notes out. The types of new or widened fields come from `infer.fields` (the
one mapping of a dlt column to a Python type), so a suggested field reads back through dlt as
the column the table holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from dlt_contract_ops.infer.fields import FIELD, annotation, field_text, python_name, shown
from dlt_contract_ops.model.findings import DriftFinding
from dlt_contract_ops.suggest import cst as edit
from dlt_contract_ops.suggest.cst import Import

OPTIONAL: Import = ("typing", "Optional")


@dataclass(frozen=True)
class TableFacts:
    """What the sweep knew of the finding's table and model."""

    qualname: str
    naming: Any
    #: column -> the model field it comes from
    fields: Mapping[str, str]
    #: column -> dlt column schema of what the table holds (`data_type`, `precision`, ...)
    live: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


#: drift types with a model change; the others get a note
KINDS = ("additive", "missing", "type", "rename", "removal", "contract", "distribution")


def _field(facts: TableFacts, column: str) -> str:
    return facts.fields.get(column, column)


def _nullable_text(text: str, optional: bool) -> str:
    """`X | None` as `field_text` writes it, in the file's style (`Optional[X]`)."""
    core = text.removesuffix(" | None")
    return f"Optional[{core}]" if optional and core != text else text


def unlandable(finding: DriftFinding, facts: TableFacts) -> list[str]:
    """The new columns of an additive finding no field can land in: dlt names a field's
    column by the schema's naming, so a column another name (`ip-address` under snake_case:
    made outside dlt) is out of any model's reach."""
    if finding.drift_type != "additive":
        return []
    return [c for c in finding.columns if facts.naming.normalize_path(c) != c]


def additive(text: str, finding: DriftFinding, facts: TableFacts) -> str:
    """A new nullable field per new column, typed from what the column holds (not for a
    column no field can land in: `unlandable`)."""
    optional = edit.uses_optional(text)
    taken = set(facts.fields.values())
    skip = set(unlandable(finding, facts))
    for column in [c for c in finding.columns if c not in skip]:
        live = {"data_type": None, **facts.live.get(column, {}), "name": column,
                "nullable": True}
        ft = field_text(live, facts.naming, taken)
        since = (finding.column_first_seen or {}).get(column) or finding.first_seen
        comment = "; ".join(c for c in (ft.comment, f"new column, first seen {since}"
                                        if since else "new column") if c)
        lines = [f"{ft.name}: {_nullable_text(ft.annotation, optional)}"
                 + (f" = {ft.default}" if ft.default else "") + f"  # {comment}"]
        text = edit.add_field(text, facts.qualname, lines)
        needed = set(ft.imports) | ({OPTIONAL} if optional else set())
        text = edit.ensure_imports(text, needed)
    return text


def missing(text: str, finding: DriftFinding, facts: TableFacts, *, keep: bool) -> str:
    """Each field whose column the table lacks removed; with `keep`, made nullable with a
    comment saying so."""
    for column in finding.columns:
        name = _field(facts, column)
        if keep:
            text = _make_nullable(
                text, facts.qualname, name,
                f"kept: column `{shown(column)}` not in the table yet")
            continue
        gone: set[str] = set()

        def drop(stmt: cst.SimpleStatementLine, gone: set[str] = gone) -> None:
            gone.update(edit.names_in(edit.ann_assign(stmt)))

        text = edit.edit_field(text, facts.qualname, name, drop)
        text = edit.drop_unused_imports(text, gone)
    return text


def _make_nullable(text: str, qualname: str, name: str, comment: str | None) -> str:
    optional = edit.uses_optional(text)

    def change(stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        node = edit.ann_assign(stmt)
        ann = node.annotation.with_changes(
            annotation=edit.nullable(node.annotation.annotation, optional))
        node = edit.with_default_none(node.with_changes(annotation=ann))
        stmt = edit.with_ann(stmt, node)
        return edit.with_comment(stmt, comment) if comment else stmt

    return edit.edit_field(text, qualname, name, change)


def removal(text: str, finding: DriftFinding, facts: TableFacts) -> str:
    """Each dark column's field made nullable and marked deprecated with the load it went
    dark (`Field(deprecated=...)`: the removal detector no longer expects data in it)."""
    for column in finding.columns:
        since = (finding.column_first_seen or {}).get(column) or finding.first_seen
        reason = f"went dark in the load of {since}" if since else "went dark"
        text = _deprecate(text, facts.qualname, _field(facts, column), reason)
    return text


def _deprecate(text: str, qualname: str, name: str, reason: str) -> str:
    text = _make_nullable(text, qualname, name, None)  # the reason is in `deprecated=`

    def mark(stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        node = edit.ann_assign(stmt)
        call = edit.field_call(node)
        value = cst.SimpleString(f'"{shown(reason)}"')
        if call is None:
            default = node.value if node.value is not None else cst.Name("None")
            call = cst.Call(cst.Name("Field"), args=[cst.Arg(default, keyword=cst.Name(
                "default"), equal=_EQ)])
        call = edit.set_keyword(call, "deprecated", value)
        return edit.with_ann(stmt, node.with_changes(value=call))

    text = edit.edit_field(text, qualname, name, mark)
    return edit.ensure_imports(text, [("pydantic", "Field")])


_EQ = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                      whitespace_after=cst.SimpleWhitespace(""))


def widen(text: str, finding: DriftFinding, facts: TableFacts) -> str:
    """Each field's type replaced by the type of what its column holds (its nullability and
    `Annotated` metadata kept)."""
    for column in finding.columns:
        live = facts.live.get(column)
        if not live or not live.get("data_type"):
            continue
        new, imports, args, _ = annotation(live, json_as_any=False)

        def change(stmt: cst.SimpleStatementLine, new: str = new,
                   args: dict[str, str] = args) -> cst.SimpleStatementLine:
            node = edit.ann_assign(stmt)
            old = edit.core_type(node.annotation.annotation)
            replaced = edit.replace_node(node.annotation, old, cst.parse_expression(new))
            node = node.with_changes(annotation=replaced)
            call = edit.field_call(node)
            if call is None and args:
                default = [] if node.value is None else [
                    cst.Arg(node.value, keyword=cst.Name("default"), equal=_EQ)]
                call = cst.Call(cst.Name("Field"), args=default)
            if call is not None:
                # the size the column holds: a bound of the old type goes, the new one's is set
                for key in SIZES:
                    value = args.get(key)
                    call = edit.set_keyword(call, key, None if value is None else
                                            cst.parse_expression(value))
                node = node.with_changes(value=call)
            return edit.with_ann(stmt, node)

        text = edit.edit_field(text, facts.qualname, _field(facts, column), change)
        text = edit.ensure_imports(text, imports | ({FIELD} if args else set()))
    return text


#: the `Field` arguments that bound a type's size (`infer.fields.annotation` sets them)
SIZES = ("max_length", "max_digits", "decimal_places")


def rename(text: str, finding: DriftFinding, facts: TableFacts) -> str:
    """The old column's field renamed to the new column (an alias where the new name is not
    a usable Python name); the old name kept as a deprecated field, since the table still
    holds its earlier values."""
    old, new = finding.renamed_from, finding.renamed_to
    if not old or not new:
        return text
    name = _field(facts, old)
    taken = set(facts.fields.values())
    new_name, alias = python_name(new, facts.naming, taken)
    holder: list[cst.SimpleStatementLine] = []

    def change(stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        holder.append(stmt)
        node = edit.ann_assign(stmt)
        node = node.with_changes(target=cst.Name(new_name))
        call = edit.field_call(node)
        if call is not None:
            value = cst.SimpleString(f'"{shown(alias)}"') if alias else None
            node = node.with_changes(value=edit.set_keyword(call, "alias", value))
        elif alias:
            default = [cst.Arg(node.value, keyword=cst.Name("default"), equal=_EQ)] if (
                node.value is not None) else []
            node = node.with_changes(value=cst.Call(cst.Name("Field"), args=[
                *default, cst.Arg(cst.SimpleString(f'"{shown(alias)}"'),
                                  keyword=cst.Name("alias"), equal=_EQ)]))
        return edit.with_comment(edit.with_ann(stmt, node), f"renamed from `{shown(old)}`")

    text = edit.edit_field(text, facts.qualname, name, change)
    if alias:
        text = edit.ensure_imports(text, [("pydantic", "Field")])
    # the old field again, after the renamed one: deprecated, its earlier values still there
    [stmt] = holder
    lines = [edit.code(stmt.with_changes(leading_lines=[], trailing_whitespace=cst.
                                         TrailingWhitespace())).rstrip("\n")]
    text = edit.add_field(text, facts.qualname, lines)
    since = finding.handoff_load
    return _deprecate(text, facts.qualname, name,
                      f"renamed to `{shown(new)}`" + (f" in load {since}" if since else ""))


def categories(text: str, facts: TableFacts, column: str, values: list[str]) -> str:
    """`values` added to the code set the field declares (`Literal[...]` or
    `Semantics(categories=...)`); unchanged when it declares none."""

    def change(stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        node = edit.ann_assign(stmt)
        return edit.with_ann(stmt, node.visit(_AddCategories(values)))  # type: ignore[arg-type]

    return edit.edit_field(text, facts.qualname, _field(facts, column), change)


class _AddCategories(cst.CSTTransformer):
    def __init__(self, values: list[str]) -> None:
        self.values = values

    def _new(self, have: list[cst.BaseExpression]) -> list[str]:
        known = {getattr(e, "evaluated_value", None) for e in have
                 if isinstance(e, cst.SimpleString)}
        return [v for v in self.values if v not in known]

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> Any:
        if edit._subscript_of(updated, "Literal") is None:
            return updated
        have = [e.slice.value for e in updated.slice if isinstance(e.slice, cst.Index)]
        extra = [cst.SubscriptElement(cst.Index(cst.SimpleString(f'"{shown(v)}"')))
                 for v in self._new(have)]
        elements = [e.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                    for e in [*updated.slice, *extra]]
        return updated.with_changes(slice=elements)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> Any:
        if updated.keyword is None or updated.keyword.value not in ("categories", "code_set"):
            return updated
        seq = updated.value
        if not isinstance(seq, (cst.Tuple, cst.List, cst.Set)):
            return updated
        have = [e.value for e in seq.elements]
        extra = [cst.Element(cst.SimpleString(f'"{shown(v)}"')) for v in self._new(have)]
        elements = [e.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                    for e in [*seq.elements, *extra]]
        if isinstance(seq, cst.Tuple) and len(elements) == 1:
            elements = [elements[0].with_changes(comma=cst.Comma())]
        return updated.with_changes(value=seq.with_changes(elements=elements))


def new_categories(finding: DriftFinding) -> dict[str, list[str]]:
    """Per column, the values outside its declared code set a finding names: a contract
    finding's `code_set` examples, a distribution finding's `new_category` metrics."""
    out: dict[str, list[str]] = {}
    for v in finding.violations or []:
        if v.get("rule") == "code_set":
            out.setdefault(v["column"], []).extend(
                str(e) for e in v.get("examples", []) if e is not None)
    for m in finding.metrics or []:
        if m.get("metric") == "new_category" and m.get("category") is not None:
            out.setdefault(m["column"], []).append(str(m["category"]))
    return {c: list(dict.fromkeys(vs)) for c, vs in out.items()}


def suggest(text: str, finding: DriftFinding, facts: TableFacts, *, keep: bool = False) -> str:
    """`text` with the model change for `finding` (unchanged when its kind has none)."""
    kind = finding.drift_type
    if kind == "additive":
        return additive(text, finding, facts)
    if kind == "missing":
        return missing(text, finding, facts, keep=keep)
    if kind == "type":
        return widen(text, finding, facts)
    if kind == "rename":
        return rename(text, finding, facts)
    if kind == "removal":
        return removal(text, finding, facts)
    for column, values in new_categories(finding).items():
        text = categories(text, facts, column, values)
    return text
