"""Per-table queries of one shape: rendered once, then filled in with each table's names.

A sweep sends the same query to every table of a dataset, differing only in the table and the
columns it names (removal's coverage aggregate). Building, preparing and rendering each with
sqlglot costs about 2 ms of Python per table, as much as DuckDB needs to count a 2k-row table.

A `Shape` is rendered ONCE per adapter through the same path as any query (`prepare`, the
read-only check, sqlglot's generator), with sentinel names for the table and its columns. A
table's text is then that template with the sentinels replaced by the table's own names, each
rendered by sqlglot as a quoted identifier (so escaping stays sqlglot's), spelled as `prepare`
spells them (the catalog's spelling, else `to_live`).

What else `prepare` does depends on the live type of the columns a parameter is compared with
(BigQuery casts a bound timestamp to DATE for a DATE column): those names are found in the
shape's tree once, and their live types are part of the template's key. The first table of
every template is also rendered the ordinary way and the two texts compared: a shape whose
texts differ is never templated on that adapter (a debug log says so), so a template can only
ever stand in for exactly the text the ordinary path renders.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sqlglot import exp

from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.sql import _generate, compared_column, ident, render_marked

log = logging.getLogger("dlt_contract_ops")


class _Adapter(Protocol):
    """What a template uses of `execution.SqlClientAdapter` (which imports this module)."""

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def dataset(self) -> str: ...

    def table(self, name: str) -> exp.Table: ...

    def catalog_column(self, tables: Sequence[str], column: str) -> tuple[str, str] | None: ...

    def to_live(self, name: str) -> str: ...

    def prepare(
        self, query: exp.Expression, *, owned: bool = False,
        lookup: Callable[[Sequence[str], str], tuple[str, str] | None] | None = None,
    ) -> exp.Expression: ...


@dataclass(frozen=True)
class Shape:
    """Queries that differ only in their table and the table columns they name.

    `build(table, names)` makes one; `names` are table columns, in the order the shape uses
    them. `key` is everything else the query depends on: two shapes with one key must build
    the same query from the same names."""

    key: Hashable
    build: Callable[[exp.Table, Sequence[str]], exp.Expression]


@dataclass(frozen=True)
class ShapedQuery:
    """One table's query of a shape: what `SqlClientAdapter.run` accepts besides a tree."""

    shape: Shape
    table: str
    names: tuple[str, ...]

    def expression(self, adapter: _Adapter) -> exp.Expression:
        """The query as a tree (the ordinary path; also what an error names)."""
        return self.shape.build(adapter.table(self.table), self.names)


@dataclass
class _Template:
    #: the marked text (`render_marked`, marks as positions) cut at the sentinels: text, or
    #: the index of a name, or TABLE
    parts: list[str | int]
    marks: list[str]


TABLE = -1
#: a key whose template did not render as the ordinary path does: never templated again
_REFUSED = _Template([], [])


@dataclass
class Templates:
    """An adapter's templates and rendered identifiers (one adapter: one dialect, one
    catalog)."""

    by_key: dict[Hashable, _Template] = field(default_factory=dict)
    identifiers: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    #: per (shape key, number of names): the indexes of the names compared with a parameter
    compared: dict[Hashable, tuple[int, ...]] = field(default_factory=dict)

    def marked(self, adapter: _Adapter, query: ShapedQuery) -> tuple[str, list[str]]:
        """The query's marked text (as `render_marked` gives it for the ordinary tree)."""
        live_table = adapter.table(query.table)
        shape = (query.shape.key, len(query.names))
        if shape not in self.compared:
            self.compared[shape] = _compared(query)
        types = {i: _type(adapter, live_table.name, query.names[i])
                 for i in self.compared[shape]}
        key = (*shape, tuple(types.items()))
        template = self.by_key.get(key)
        if template is None:  # a new template: checked against the ordinary rendering
            ordinary = _ordinary(adapter, query)
            template = self._make(adapter, query, types)
            if template is None or self._fill(adapter, template, query, live_table) != (
                _unmarked(*ordinary)
            ):
                log.debug("query shape %r is not templated on `%s`: its text differs from the "
                          "ordinary rendering", query.shape.key, adapter.dataset)
                template = _REFUSED
            self.by_key[key] = template
            return ordinary
        if template is _REFUSED:
            return _ordinary(adapter, query)
        return _remark(self._fill(adapter, template, query, live_table), template.marks)

    def _make(self, adapter: _Adapter, query: ShapedQuery,
              types: dict[int, str | None]) -> _Template | None:
        nonce = secrets.token_hex(5)
        sentinels = [f"co{nonce}s{i}x" for i in range(len(query.names))]
        table = exp.Table(this=ident(f"co{nonce}tx"))
        # a sentinel is spelled as it is; a compared one carries its column's live type. One
        # of unknown type gets "" (every adapter coerces nothing for it, as for a column the
        # catalog lacks; the comparison with the ordinary rendering below holds them to it)
        found = {s: (s, types.get(i) or "") for i, s in enumerate(sentinels)}

        def lookup(tables: Sequence[str], name: str) -> tuple[str, str] | None:
            if name in found:
                return found[name]
            return adapter.catalog_column(tables, name)

        rendered = {_generate(table.copy(), adapter.capabilities.dialect, owned=True): TABLE}
        for i, s in enumerate(sentinels):
            rendered[_generate(ident(s), adapter.capabilities.dialect, owned=True)] = i
        tree = adapter.prepare(query.shape.build(table, sentinels), owned=True, lookup=lookup)
        text, marks = render_marked(tree, adapter.capabilities.dialect, owned=True)
        cut = re.split("(" + "|".join(map(re.escape, rendered)) + ")", _unmarked(text, marks))
        parts: list[str | int] = [rendered.get(p, p) if i % 2 else p for i, p in enumerate(cut)]
        if set(rendered.values()) - {p for p in parts if isinstance(p, int)}:
            return None  # a sentinel did not come out as an identifier: not a plain shape
        return _Template(parts, marks)

    def _fill(self, adapter: _Adapter, template: _Template, query: ShapedQuery,
              live_table: exp.Table) -> str:
        table = self.tables.get(live_table.name)
        if table is None:
            table = self.tables[live_table.name] = _generate(
                live_table.copy(), adapter.capabilities.dialect, owned=True)
        names = [self._identifier(adapter, live_table.name, n) for n in query.names]
        return "".join(
            p if isinstance(p, str) else table if p == TABLE else names[p]
            for p in template.parts
        )

    def _identifier(self, adapter: _Adapter, table: str, name: str) -> str:
        """A column as `prepare` spells and the generator renders it."""
        found = adapter.catalog_column([table], name)
        spelled = found[0] if found is not None else adapter.to_live(name)
        rendered = self.identifiers.get(spelled)
        if rendered is None:
            rendered = self.identifiers[spelled] = _generate(
                ident(spelled), adapter.capabilities.dialect, owned=True)
        return rendered


def _ordinary(adapter: _Adapter, query: ShapedQuery) -> tuple[str, list[str]]:
    """The query's tree, built, prepared and rendered as any query is."""
    return render_marked(adapter.prepare(query.expression(adapter), owned=True),
                         adapter.capabilities.dialect, owned=True)


def _compared(query: ShapedQuery) -> tuple[int, ...]:
    """The indexes of the shape's names a parameter is compared with (found as `prepare`
    finds them, `sql.compared_column`)."""
    names = [f"cmp{i}" for i in range(len(query.names))]
    tree = query.shape.build(exp.Table(this=ident("cmp")), names)
    pairs = (compared_column(node) for node in tree.walk())
    return tuple(sorted({names.index(p[0].name) for p in pairs
                         if p is not None and p[0].name in names}))


def _type(adapter: _Adapter, table: str, name: str) -> str | None:
    found = adapter.catalog_column([table], name)
    return found[1] if found is not None else None


#: the placeholder marks `render_marked` makes are unique per call: a template keeps them as
#: positions (`\0<n>\0`, which no rendered SQL holds) and each fill gets marks of its own
def _unmarked(text: str, marks: Sequence[str]) -> str:
    for i, mark in enumerate(marks):
        text = text.replace(mark, f"\0{i}\0", 1)
    return text


def _remark(text: str, marks: Sequence[str]) -> tuple[str, list[str]]:
    for i, mark in enumerate(marks):
        text = text.replace(f"\0{i}\0", mark, 1)
    return text, list(marks)
