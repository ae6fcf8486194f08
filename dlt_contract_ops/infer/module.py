"""A loaded table (and its child tables) as the text of one Pydantic model module.

Pure: the stored table and what the data showed in, module text out. Child tables become
nested models in a `list[...]` field of their parent, and the root model sets dlt's
`skip_nested_types` so the reconciler (`core.naming.nested_tables`) expects those tables.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dlt_contract_ops.contracts.model import ResourceContract
from dlt_contract_ops.core.columns import DLT_PREFIX
from dlt_contract_ops.infer.declared import declared_field
from dlt_contract_ops.infer.fields import (
    ANY,
    ColumnFacts,
    FieldText,
    Import,
    _literal,
    annotation,
    field_text,
    python_name,
    shown,
)


@dataclass(frozen=True)
class InferredTable:
    """A stored table to write a model for: its data columns and its child tables."""

    table: str
    #: dlt's stored column schemas, dlt's own columns left out
    columns: tuple[Mapping[str, Any], ...]
    children: tuple[InferredTable, ...] = ()
    #: column -> what the data showed (empty: not measured)
    facts: Mapping[str, ColumnFacts] = field(default_factory=dict)
    #: what a contract declares for the table (`--from-odcs`): its columns, instead of
    #: `columns`, render with their declarations, the class is named as its `model`, and its
    #: keys, grain and owners become `@TableSemantics(...)`
    contract: ResourceContract | None = None
    #: column -> member path -> the dlt type a document gives the values there
    leaf_types: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class Header:
    """Where the model was inferred from, for the module's header comment."""

    pipeline: str
    dataset: str
    load_id: str | None
    source: str | None = None

    def describe(self, table: str) -> list[str]:
        return [
            f"Model of table `{shown(table)}`, inferred by `dlt-contract-ops models infer`.",
            "",
            f"Pipeline: `{shown(self.pipeline)}`",
            *([f"Source: `{shown(self.source)}`"] if self.source else []),
            f"Dataset: `{shown(self.dataset)}`",
            (f"Newest load: `{shown(self.load_id)}`" if self.load_id
             else "Newest load: none recorded"),
            "",
            "Review it (types, optional fields, code sets), then commit it.",
        ]


def data_columns(columns: Mapping[str, Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    """A stored table's columns without dlt's own.

    >>> [c["name"] for c in data_columns({"id": {"name": "id"}, "_dlt_id": {"name": "_dlt_id"}})]
    ['id']
    """
    return tuple(c for name, c in columns.items() if not name.startswith(DLT_PREFIX))


def class_name(table: str, taken: set[str]) -> str:
    """A CamelCase class name for a table, unique among `taken`.

    >>> class_name("orders__line_items", set())
    'OrdersLineItems'
    """
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", table) if p]
    base = "".join(p[:1].upper() + p[1:] for p in parts) or "Table"
    if base[0].isdigit():
        base = f"T{base}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}{n}", n + 1
    taken.add(name)
    return name


def _child_field(parent: str, child: str) -> str:
    """The parent's field (as dlt normalized it) a child table holds the items of."""
    prefix = f"{parent}__"
    return child[len(prefix):] if child.startswith(prefix) else child.rsplit("__", 1)[-1]


@dataclass
class _Writer:
    naming: Any
    classes: list[str] = field(default_factory=list)
    imports: set[Import] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    #: (table, column) -> its field's name, for `@TableSemantics` to name fields by
    fields: dict[tuple[str, str], str] = field(default_factory=dict)
    #: what a declared table could not declare in its model
    notes: list[str] = field(default_factory=list)

    def model(self, table: InferredTable, *, root: bool) -> str:
        """Write `table`'s class (its children's first); returns its name."""
        lists: list[FieldText] = []
        taken: set[str] = set()
        for child in table.children:
            lists.append(self._list_field(table.table, child, taken))
        nested = bool(table.children) or not root  # a child's own rows are unnested by dlt
        if table.contract is not None:
            fields = self._declared(table, taken, nested=nested, root=root)
        else:
            fields = [field_text(c, self.naming, taken, table.facts.get(c["name"]),
                                 json_as_any=nested) for c in table.columns]
        wanted = table.contract.model if table.contract is not None else ""
        name = class_name(wanted if wanted.isidentifier() else table.table, self.names)
        body = [f"    {line}" for f in (*fields, *lists) for line in f.lines()]
        for f in (*fields, *lists):
            self.imports.update(f.imports)
        if root and table.children:
            self.imports.update({("typing", "ClassVar"), ANY})
            body.insert(0, '    dlt_config: ClassVar[dict[str, Any]] = {"skip_nested_types": True}')
        self.imports.add(("pydantic", "BaseModel"))
        doc = f'    """Rows of table `{shown(table.table)}`."""'
        head = [f"class {name}(BaseModel):", doc, "", *body]
        if table.contract is not None and (decorator := self._table_semantics(table.contract)):
            head.insert(0, decorator)
        self.classes.append("\n".join(head))
        return name

    def _declared(self, table: InferredTable, taken: set[str], *, nested: bool, root: bool
                  ) -> list[FieldText]:
        """The fields of a declared table; `self.fields` maps its columns to field names."""
        assert table.contract is not None
        out = []
        for col in table.contract.columns:
            text, notes = declared_field(
                col, self.naming, taken, self.nested_class, json_as_any=nested,
                in_child_table=not root, leaf_types=table.leaf_types.get(col.name))
            self.fields[table.table, col.name] = text.name
            self.notes += [f"table `{table.table}`: {n}" for n in notes]
            out.append(text)
        return out

    def _table_semantics(self, contract: ResourceContract) -> str | None:
        """`@TableSemantics(...)` of a contract's keys, grain and owners (fields by name)."""
        def name(column: str) -> str:
            return _literal(self.fields.get((contract.table, column), column))

        def items(values: list[str]) -> str:
            return f"({', '.join(values)}{',' if len(values) == 1 else ''})"

        parts = []
        if contract.keys:
            parts.append(f"keys={items([name(k) for k in contract.keys])}")
        if contract.grain is not None:
            parts.append(f"grain={_literal(contract.grain)}")
        if contract.owner is not None:
            parts.append(f"owner={_literal(contract.owner)}")
        if contract.consumer_owners:
            owners = [_literal(o) for o in contract.consumer_owners]
            parts.append(f"consumer_owners={items(owners)}")
        if contract.change_key is not None:
            parts.append(f"change_key={name(contract.change_key)}")
        if not parts:
            return None
        self.imports.add(("dlt_contract_ops", "TableSemantics"))
        return f"@TableSemantics({', '.join(parts)})"

    def nested_class(self, hint: str, fields: list[FieldText]) -> str:
        """A model for values inside a json column: it keeps what it does not declare
        (`extra="allow"`), so validating a row through it drops no key."""
        name = class_name(hint, self.names)
        self.imports.update({("pydantic", "BaseModel"), ("pydantic", "ConfigDict")})
        body = ['    model_config = ConfigDict(extra="allow")', ""]
        for f in fields:
            self.imports.update(f.imports)
            body += [f"    {line}" for line in f.lines()]
        self.classes.append("\n".join([f"class {name}(BaseModel):", *body]))
        return name

    def _list_field(self, parent: str, child: InferredTable, taken: set[str]) -> FieldText:
        column = _child_field(parent, child.table)
        py, alias = python_name(column, self.naming, taken)
        names = [c["name"] for c in child.columns]
        if names == ["value"] and not child.children:  # a list of scalars
            item, imports, _, _ = annotation(child.columns[0], json_as_any=True)
            self.imports.update(imports)
        else:
            item = self.model(child, root=False)
        default = f"Field(default=[], alias={_literal(alias)})" if alias else "[]"
        if alias:
            self.imports.add(("pydantic", "Field"))
        return FieldText(py, f"list[{item}]", default, None, frozenset(),
                         f"child table `{shown(child.table)}`")


def _import_lines(imports: set[Import]) -> list[str]:
    by_module: dict[str, set[str]] = {}
    for module, name in imports:
        by_module.setdefault(module, set()).add(name)
    lines: list[str] = []
    for stdlib in (True, False):  # the standard library's first, a blank line, then the rest
        group = sorted(m for m in by_module if (m.split(".")[0] in _STDLIB) is stdlib)
        if group and lines:
            lines.append("")
        lines += [f"from {m} import {', '.join(sorted(by_module[m]))}" for m in group]
    return lines


_STDLIB = frozenset({"datetime", "decimal", "typing"})


class Describes(Protocol):
    def describe(self, table: str) -> list[str]:
        """The module docstring's lines for root table `table`."""


def render_module(
    table: InferredTable, naming: Any, header: Describes, notes: list[str] | None = None
) -> tuple[str, str]:
    """(module text, root class name) of `table`'s model; unformatted (see `format_files`).
    What a declared table could not declare is added to `notes`."""
    writer = _Writer(naming)
    root = writer.model(table, root=True)
    if notes is not None:
        notes += writer.notes
    first, *rest = header.describe(table.table)
    lines = [
        f'"""{first}',
        *rest,
        '"""',
        "",
        *_import_lines(writer.imports),
        "",
        "",
        "\n\n\n".join(writer.classes),
        "",
    ]
    return "\n".join(lines), root


def format_files(paths: Sequence[str]) -> bool:
    """Format the written modules with ruff where it is installed (the project's settings,
    found from each file): ONE ruff process for all of them. False when ruff is not
    installed or refused them (they stay as written, valid code either way)."""
    import importlib.util
    import subprocess
    import sys

    if not paths or importlib.util.find_spec("ruff") is None:
        return False
    try:
        proc = subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", *paths],
                              capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.SubprocessError):  # ruff unusable here: left as written
        return False
    return proc.returncode == 0


__all__ = ["ANY", "DLT_PREFIX", "Header", "InferredTable", "class_name", "data_columns",
           "format_files", "render_module"]
