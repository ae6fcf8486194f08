"""Edits to one field of one Pydantic model class in the user's own source text, through a
concrete syntax tree (libcst): everything not edited (comments, blank lines, quotes, the
order of things) stays byte for byte as the user wrote it.

Pure: text in, text out. Each edit names the class by its qualified name (`Outer.Inner`) and
the field by its Python name; `EditError` when either is not where the text should have it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import libcst as cst

from dlt_contract_ops.errors import SuggestError

#: (module, name) an edit needs imported
Import = tuple[str, str]

FieldEdit = Callable[[cst.SimpleStatementLine], "cst.SimpleStatementLine | None"]


def _is_field(stmt: cst.BaseStatement, name: str | None = None) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    node = stmt.body[0]
    return (isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name)
            and (name is None or node.target.value == name))


def _class_body(
    module: cst.Module, qualname: str, edit: Callable[[list[cst.BaseStatement]], None]
) -> cst.Module:
    """`module` with `edit` applied (in place) to the statements of class `qualname`."""
    parts = qualname.split(".")

    def walk(body: Sequence[Any], depth: int) -> list[Any] | None:
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.ClassDef) and stmt.name.value == parts[depth]:
                inner = stmt.body
                if not isinstance(inner, cst.IndentedBlock):
                    return None
                if depth == len(parts) - 1:
                    stmts = list(inner.body)
                    edit(stmts)
                    new_inner = inner.with_changes(body=stmts)
                else:
                    found = walk(inner.body, depth + 1)
                    if found is None:
                        return None
                    new_inner = inner.with_changes(body=found)
                out = list(body)
                out[i] = stmt.with_changes(body=new_inner)
                return out
        return None

    body = walk(module.body, 0)
    if body is None:
        raise SuggestError(f"class `{qualname}` is not defined at the top of the file")
    return module.with_changes(body=body)


def _field_index(stmts: list[cst.BaseStatement], qualname: str, field: str) -> int:
    for i, stmt in enumerate(stmts):
        if _is_field(stmt, field):
            return i
    raise SuggestError(f"class `{qualname}` declares no field `{field}` in its own body")


def edit_field(text: str, qualname: str, field: str, edit: FieldEdit) -> str:
    """`text` with the field's statement replaced by `edit(statement)` (None: removed)."""
    module = cst.parse_module(text)

    def apply(stmts: list[cst.BaseStatement]) -> None:
        i = _field_index(stmts, qualname, field)
        new = edit(stmts[i])  # type: ignore[arg-type]  # `_is_field` checked it
        if new is None:
            del stmts[i]
            if not stmts:
                stmts.append(cst.SimpleStatementLine([cst.Expr(cst.Ellipsis())]))
        else:
            stmts[i] = new

    return _class_body(module, qualname, apply).code


def add_field(text: str, qualname: str, lines: Sequence[str]) -> str:
    """`text` with a field (its source `lines`, comments above it included) after the class's
    last field (or at the end of its body)."""
    stmt = cst.parse_statement("\n".join(lines) + "\n")
    module = cst.parse_module(text)

    def apply(stmts: list[cst.BaseStatement]) -> None:
        last = max((i for i, s in enumerate(stmts) if _is_field(s)), default=len(stmts) - 1)
        stmts.insert(last + 1, stmt)

    return _class_body(module, qualname, apply).code


# --- the pieces of one field statement -------------------------------------------------


def ann_assign(stmt: cst.SimpleStatementLine) -> cst.AnnAssign:
    node = stmt.body[0]
    assert isinstance(node, cst.AnnAssign)
    return node


def with_ann(stmt: cst.SimpleStatementLine, node: cst.AnnAssign) -> cst.SimpleStatementLine:
    return stmt.with_changes(body=[node])


def with_comment(stmt: cst.SimpleStatementLine, comment: str) -> cst.SimpleStatementLine:
    """The statement with `# comment` after it (after the one it had, if any)."""
    old = stmt.trailing_whitespace.comment
    value = f"{old.value}; {comment}" if old is not None else f"# {comment}"
    return stmt.with_changes(trailing_whitespace=cst.TrailingWhitespace(
        whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(value)))


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _subscript_of(node: cst.BaseExpression, name: str) -> cst.Subscript | None:
    """`node` when it is `name[...]` or `typing.name[...]`."""
    if not isinstance(node, cst.Subscript):
        return None
    value = node.value
    head = value.attr.value if isinstance(value, cst.Attribute) else getattr(value, "value", None)
    return node if head == name else None


def is_nullable(annotation: cst.BaseExpression) -> bool:
    """`Optional[X]`, `X | None`, `Union[X, None]` (or `Annotated` around one)."""
    if _subscript_of(annotation, "Optional") is not None:
        return True
    union = _subscript_of(annotation, "Union")
    if union is not None:
        return any(_is_none(e.slice.value) for e in union.slice
                   if isinstance(e.slice, cst.Index))
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator,
                                                                  cst.BitOr):
        return _is_none(annotation.right) or _is_none(annotation.left) or is_nullable(
            annotation.left)
    annotated = _subscript_of(annotation, "Annotated")
    if annotated is not None and isinstance(annotated.slice[0].slice, cst.Index):
        return is_nullable(annotated.slice[0].slice.value)
    return False


def core_type(annotation: cst.BaseExpression) -> cst.BaseExpression:
    """The type inside `Optional[...]`, `... | None` and `Annotated[..., ...]`."""
    for wrapper in ("Optional", "Annotated"):
        sub = _subscript_of(annotation, wrapper)
        if sub is not None and isinstance(sub.slice[0].slice, cst.Index):
            return core_type(sub.slice[0].slice.value)
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator,
                                                                  cst.BitOr):
        if _is_none(annotation.right):
            return core_type(annotation.left)
        if _is_none(annotation.left):
            return core_type(annotation.right)
    return annotation


class _Replace(cst.CSTTransformer):
    def __init__(self, old: cst.CSTNode, new: cst.BaseExpression) -> None:
        self.old, self.new = old, new

    def on_leave(self, original: Any, updated: Any) -> Any:
        return self.new if original is self.old else updated


def replace_node(tree: cst.CSTNode, old: cst.CSTNode, new: cst.BaseExpression) -> Any:
    return tree.visit(_Replace(old, new))


def nullable(annotation: cst.BaseExpression, optional_style: bool) -> cst.BaseExpression:
    """`annotation` made nullable, as `Optional[X]` or `X | None`."""
    if is_nullable(annotation):
        return annotation
    text = cst.Module([]).code_for_node(annotation)
    return cst.parse_expression(f"Optional[{text}]" if optional_style else f"{text} | None")


def _field_call(node: cst.BaseExpression | None) -> cst.Call | None:
    if isinstance(node, cst.Call):
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        return node if name == "Field" else None
    return None


def with_default_none(node: cst.AnnAssign) -> cst.AnnAssign:
    """The field with a default of None, unless it has a default already."""
    if node.value is None:
        return node.with_changes(value=cst.Name("None"), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(" "),
            whitespace_after=cst.SimpleWhitespace(" ")))
    call = _field_call(node.value)
    if call is None:
        return node  # a plain default stays
    has_default = any(a.keyword is None or a.keyword.value in ("default", "default_factory")
                      for a in call.args)
    if has_default:
        return node
    first = cst.Arg(value=cst.Name("None"), keyword=cst.Name("default"),
                    equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                          whitespace_after=cst.SimpleWhitespace("")))
    return node.with_changes(value=call.with_changes(args=[first, *call.args]))


def set_keyword(call: cst.Call, keyword: str, value: cst.BaseExpression | None) -> cst.Call:
    """`call` with `keyword=value` set (replaced, added last), or removed when None."""
    args = [a for a in call.args if not (a.keyword and a.keyword.value == keyword)]
    if value is not None:
        kept = [a for a in call.args if a.keyword and a.keyword.value == keyword]
        arg = kept[0].with_changes(value=value) if kept else cst.Arg(
            value=value, keyword=cst.Name(keyword),
            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                  whitespace_after=cst.SimpleWhitespace("")))
        args.append(arg)
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(args) - 1 else a
            for i, a in enumerate(args)]
    return call.with_changes(args=args)


def field_call(node: cst.AnnAssign) -> cst.Call | None:
    return _field_call(node.value)


# --- the module's imports --------------------------------------------------------------


def _module_name(node: cst.ImportFrom) -> str:
    if node.module is None:
        return ""
    return cst.Module([]).code_for_node(node.module)


def imported_names(module: cst.Module) -> set[str]:
    """Names bound at the top of the module by an import."""
    out: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for node in stmt.body:
            if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(
                    node.names, cst.ImportStar):
                for alias in node.names:
                    bound = alias.asname.name if alias.asname else alias.name
                    out.add(cst.Module([]).code_for_node(bound).partition(".")[0])
    return out


def ensure_imports(text: str, imports: Iterable[Import]) -> str:
    """`text` importing each (module, name) it does not bind yet: added to an existing
    `from module import ...` line, else a new line after the last top-level import."""
    module = cst.parse_module(text)
    have = imported_names(module)
    wanted = sorted({(m, n) for m, n in imports if n not in have})
    if not wanted:
        return text
    body: list[cst.BaseStatement] = list(module.body)
    for mod, name in wanted:
        done = False
        for i, stmt in enumerate(body):
            if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
                continue
            node = stmt.body[0]
            if (isinstance(node, cst.ImportFrom) and _module_name(node) == mod
                    and not node.relative and not isinstance(node.names, cst.ImportStar)):
                names = [*node.names, cst.ImportAlias(name=cst.Name(name))]
                names = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in names]
                body[i] = stmt.with_changes(body=[node.with_changes(names=names)])
                done = True
                break
        if not done:
            _insert_import(body, mod, cst.parse_statement(f"from {mod} import {name}\n"))
    return module.with_changes(body=body).code


def _top_module(stmt: cst.BaseStatement) -> str | None:
    """The module a top-level import line imports from (`a` of `import a.b`), else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    node = stmt.body[0]
    if isinstance(node, cst.ImportFrom):
        return None if node.relative else _module_name(node)
    if isinstance(node, cst.Import):
        return code(node.names[0].name)
    return None


def _insert_import(body: list[cst.BaseStatement], mod: str, stmt: cst.BaseStatement) -> None:
    """`stmt` among the imports where isort would put it: a standard-library module among
    the standard library's lines (before the first that sorts after it), any other after the
    last import. Inserted before a line, it takes over that line's leading blank lines."""
    modules = [(i, m) for i, s in enumerate(body) if (m := _top_module(s)) is not None]

    def stdlib(m: str) -> bool:
        return m.partition(".")[0] in sys.stdlib_module_names and m != "__future__"
    if stdlib(mod):
        # (isort puts `import x` lines before `from x import y` ones within a section)
        after = [i for i, m in modules if stdlib(m) and m > mod
                 and isinstance(cast(cst.SimpleStatementLine, body[i]).body[0], cst.ImportFrom)]
        alone = not any(stdlib(m) for _, m in modules)
        if after or alone:
            before = after[0] if after else next(
                (i for i, m in modules if m != "__future__"), None)
            if before is not None:
                old = cast(cst.SimpleStatementLine, body[before])
                # the first of the standard library's lines: a blank line before the others
                body[before] = old.with_changes(leading_lines=[cst.EmptyLine()] if alone else [])
                body.insert(before, stmt.with_changes(leading_lines=old.leading_lines))
                return
        last = max((i for i, m in modules if stdlib(m)), default=None)
        if last is not None:
            body.insert(last + 1, stmt)
            return
    at = max((i + 1 for i, _ in modules), default=0)
    body.insert(at, stmt)


class _Names(cst.CSTVisitor):
    """Every name the code uses outside its imports."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def names_in(node: cst.CSTNode) -> set[str]:
    visitor = _Names()
    node.visit(visitor)
    return visitor.names


def drop_unused_imports(text: str, candidates: Iterable[str]) -> str:
    """`text` without the `from ... import` names among `candidates` nothing uses any more
    (what a removed field alone needed); a line left empty goes."""
    module = cst.parse_module(text)
    unused = set(candidates) - names_in(module)
    if not unused:
        return text
    body: list[cst.BaseStatement] = []
    for stmt in module.body:
        node = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(
            stmt.body) == 1 else None
        if isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            kept = [a for a in node.names if code(a.asname.name if a.asname else a.name)
                    not in unused]
            if not kept:
                continue
            if len(kept) != len(node.names):
                kept = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in kept]
                stmt = stmt.with_changes(body=[node.with_changes(names=kept)])
        body.append(stmt)
    return module.with_changes(body=body).code


def uses_optional(text: str) -> bool:
    """The module imports `Optional` (so a new nullable field is written its way)."""
    return "Optional" in imported_names(cst.parse_module(text))


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
