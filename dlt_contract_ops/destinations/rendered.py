"""A query rendered once for both its uses: the text the driver runs and the `reproduce` text.

A finding's `reproduce` is the query it ran, with its parameters as literals. Rendering it
twice (prepared and generated for the driver, then prepared, inlined and generated again for
the user) doubled sqlglot's work on every sampled table. Here the query is prepared and
rendered ONCE with each placeholder a mark (`sql.render_marked`): the driver's text binds the
marks (`sql.bind_marks`), the reproduce text puts each parameter's literal, rendered by sqlglot
in the adapter's dialect, where its mark is.

A literal renders alike alone and in place; still, the first query of each adapter class and
dialect is also reproduced the ordinary way (`adapter.reproduce`) and the texts compared: where
they differ the ordinary way is used from then on (a debug log says so).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlglot import exp

from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.sql import _generate, literal, render_marked

log = logging.getLogger("dlt_contract_ops")


class _Adapter(Protocol):
    """What a one-render query uses of `execution.SqlClientAdapter` (which imports this)."""

    @property
    def capabilities(self) -> Capabilities: ...

    def prepare(self, query: exp.Expression, *, owned: bool = False) -> exp.Expression: ...

    def adapt_param(self, value: Any) -> Any: ...

    def reproduce(self, query: exp.Expression, params: Sequence[Any]) -> str: ...


@dataclass(frozen=True)
class Rendered:
    """A query prepared and rendered with marks: what `SqlClientAdapter.run` takes besides a
    tree. `named`: the prepared tree, which an error names the tables of."""

    named: exp.Expression
    text: str
    marks: tuple[str, ...]


#: (adapter class, dialect) -> whether the reproduce text from the one render is the
#: ordinary one (checked on the first query)
_CHECKED: dict[tuple[type, str], bool] = {}


def render_once(
    adapter: _Adapter, query: exp.Expression, params: Sequence[Any], plain: bool = True
) -> tuple[Rendered | exp.Expression, str]:
    """What to run for `query` with `params`, and its `reproduce` text, from one render.
    Not `plain` (the adapter's `reproduce` adds to the query's text): rendered each way."""
    key = (type(adapter), adapter.capabilities.dialect)
    if not plain or _CHECKED.get(key) is False:
        return query, adapter.reproduce(query, params)
    ordinary = adapter.reproduce(query, params) if key not in _CHECKED else None
    prepared = adapter.prepare(query)  # a copy of its own: marked and rendered in place
    text, marks = render_marked(prepared, adapter.capabilities.dialect, owned=True)
    reproduce = text
    for mark, value in zip(marks, params, strict=True):
        shown = _generate(literal(adapter.adapt_param(value)), adapter.capabilities.dialect,
                           owned=True)
        reproduce = reproduce.replace(mark, shown, 1)
    if ordinary is not None:
        _CHECKED[key] = reproduce == ordinary
        if not _CHECKED[key]:
            log.debug("`reproduce` on %s is rendered on its own: the one render differs",
                      key[0].__name__)
            return query, ordinary
    return Rendered(prepared, text, tuple(marks)), reproduce
