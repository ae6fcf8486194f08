"""A loaded table (and its child tables) as the text of one Pydantic model module.

Pure: the stored table and what the data showed in, module text out. Child tables become
nested models in a `list[...]` field of their parent, and the root model sets dlt's
`skip_nested_types` so the reconciler (`core.naming.nested_tables`) expects those tables.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dlt_contract_ops.core.columns import DLT_PREFIX
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


@dataclass(frozen=True)
class Header:
    """Where the model was inferred from, for the module's header comment."""

    pipeline: str
    dataset: str
    load_id: str | None
    source: str | None = None


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

    def model(self, table: InferredTable, *, root: bool) -> str:
        """Write `table`'s class (its children's first); returns its name."""
        lists: list[FieldText] = []
        taken: set[str] = set()
        for child in table.children:
            lists.append(self._list_field(table.table, child, taken))
        nested = bool(table.children) or not root  # a child's own rows are unnested by dlt
        fields = [field_text(c, self.naming, taken, table.facts.get(c["name"]),
                             json_as_any=nested) for c in table.columns]
        name = class_name(table.table, self.names)
        body = [f"    {line}" for f in (*fields, *lists) for line in f.lines()]
        for f in (*fields, *lists):
            self.imports.update(f.imports)
        if root and table.children:
            self.imports.update({("typing", "ClassVar"), ANY})
            body.insert(0, '    dlt_config: ClassVar[dict[str, Any]] = {"skip_nested_types": True}')
        self.imports.add(("pydantic", "BaseModel"))
        doc = f'    """Rows of table `{shown(table.table)}`."""'
        self.classes.append("\n".join([f"class {name}(BaseModel):", doc, "", *body]))
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


def render_module(table: InferredTable, naming: Any, header: Header) -> tuple[str, str]:
    """(module text, root class name) of `table`'s model; unformatted (see `format_files`)."""
    writer = _Writer(naming)
    root = writer.model(table, root=True)
    lines = [
        f'"""Model of table `{shown(table.table)}`, inferred by `dlt-contract-ops models infer`.',
        "",
        f"Pipeline: `{shown(header.pipeline)}`",
        *([f"Source: `{shown(header.source)}`"] if header.source else []),
        f"Dataset: `{shown(header.dataset)}`",
        (f"Newest load: `{shown(header.load_id)}`" if header.load_id
         else "Newest load: none recorded"),
        "",
        "Review it (types, optional fields, code sets), then commit it.",
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
