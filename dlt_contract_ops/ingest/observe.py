"""The shape a batch *sent*, as dlt would name and type it, observed while the batch streams.

Each resource gets a tap right in front of its Pydantic validator. The tap keeps the raw items
(for the quarantine and the observer). After the extract, the observer runs dlt's own JSON
normalizer (`JsonLItemsNormalizer`, the code `pipeline.normalize()` runs) in memory, with no
hints and no model, over a schema of its own: names through the naming convention, types as dlt
data types, variant columns, nested tables.

Most rows of a batch look alike, and a row can change the shape only where dlt's normalizer
leaves its fast path. So a row goes through the normalizer only until its *signature* (its keys
and the Python type of each value) is settled: every key already names a column whose dlt type
is exactly the value's type (or the value is None), and no value is a container. A settled row
would take dlt's fast path for every value and add nothing, so it is skipped; columns never
change type once created, so a settled signature stays settled. A batch of identical shapes
costs one tuple per row, not a normalization per row.

Items that are not mappings (Arrow tables, data frames, model instances) go through a scratch
dlt pipeline instead, which extracts and normalizes them the way `pipeline.run` would.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import dlt_contract_ops.dlt_private as dlt_private
from dlt_contract_ops.core.columns import DLT_COLUMNS
from dlt_contract_ops.core.ingest import ColumnShape, Shape

_CONTAINERS = (dict, list, tuple, set)


class Tap:
    """A pipe step that keeps every item the resource yields, before its validator coerces or
    drops anything."""

    def __init__(self, resource: str, table: str, max_nesting: int | None) -> None:
        self.items: list[Any] = []
        self.resource = resource
        self.table = table
        self.max_nesting = max_nesting

    def __call__(self, item: Any, meta: Any = None) -> Any:
        if isinstance(item, list):
            self.items.extend(dict(i) if isinstance(i, Mapping) else i for i in item)
        else:
            self.items.append(dict(item) if isinstance(item, Mapping) else item)
        return item


def observe(
    pipeline: Any, taps: list[Tap], schema_name: str, normalizers: Any
) -> tuple[Shape, dict[str, set[str]]]:
    """The shape the tapped items take in dlt, and per resource the tables it produced."""
    if all(isinstance(i, dict) for t in taps for i in t.items):
        capabilities = dlt_private.destination_capabilities(pipeline)
        observer = Observer(schema_name, normalizers, capabilities)
        roots = {t.resource: observer.add_table(t.table, t.max_nesting) for t in taps}
        for tap in taps:
            observer.see(roots[tap.resource], tap.items)
        return shape_of(observer.schema, roots)
    return observe_with_pipeline(pipeline, taps, schema_name, normalizers)


class Observer:
    """dlt's normalizer over a scratch schema, fed only rows that may change the shape."""

    def __init__(self, schema_name: str, normalizers: Any, capabilities: Any) -> None:
        from dlt.common.schema import Schema

        self.schema = Schema(schema_name, normalizers=normalizers)
        #: the destination's capabilities shape inferred columns as in `pipeline.normalize()`
        self._config = SimpleNamespace(destination_capabilities=capabilities)
        self._normalizer: Any = None
        self._settled: set[tuple[tuple[Any, ...], tuple[type, ...]]] = set()
        self._names: dict[str, str] = {}

    def add_table(self, table: str, max_nesting: int | None) -> str:
        """Declare a resource's root table (its nesting limit is a table hint in dlt); returns
        the table's name through the naming convention."""
        from dlt.common.schema.utils import new_table

        name: str = self.schema.naming.normalize_table_identifier(table)
        if name not in self.schema.tables:
            hints = new_table(name)
            if max_nesting is not None:
                hints["x-normalizer"] = {"max_nesting": max_nesting}
            self.schema.update_table(hints)
        return name

    def see(self, table: str, items: list[dict[str, Any]]) -> None:
        """Normalize the rows of `items` that may change the shape, in an order that gives the
        shape dlt gives the whole batch in its order.

        The first row of each signature goes first, in batch order; then, in batch order, the
        other rows of every signature those did not settle. The same shape follows: the row
        that creates a column (its first non-NULL value) is the first of its signature, since
        an earlier row of that signature would carry a value there too, so every column is
        created by the same row as in batch order; whether a later value needs a variant
        column depends only on the value and the column's type, not on when it is seen.
        """
        signatures = [(tuple(i), tuple(map(type, i.values()))) for i in items]
        # the earliest row per signature: later rows are overwritten by earlier ones
        firsts = dict(zip(reversed(signatures), reversed(items), strict=True))
        settled = self._settled
        unsettled = set()
        for signature in dict.fromkeys(signatures):
            if signature in settled:
                continue
            item = firsts[signature]
            self._normalize(table, dict(item))
            if self._is_settled(table, item):
                settled.add(signature)
            else:
                unsettled.add(signature)
        if unsettled:
            seen_first = {id(firsts[s]) for s in unsettled}
            for signature, item in zip(signatures, items, strict=True):
                if signature in unsettled and id(item) not in seen_first:
                    self._normalize(table, dict(item))

    def _normalize(self, table: str, row: dict[str, Any]) -> None:
        if self._normalizer is None:
            self._normalizer = dlt_private.jsonl_normalizer(self.schema, self._config)
        dlt_private.normalize_row(self._normalizer, table, row)

    def _is_settled(self, table: str, item: dict[str, Any]) -> bool:
        columns = self.schema.tables[table]["columns"]
        type_map = self._normalizer.schema.data_item_normalizer.py_type_to_sc_type_map
        for key, value in item.items():
            if value is None:
                continue
            if isinstance(value, _CONTAINERS) or not isinstance(key, str):
                return False
            column = columns.get(self._name(key))
            if column is None or column.get("data_type") != type_map.get(type(value)):
                return False
        return True

    def _name(self, key: str) -> str:
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = self.schema.naming.normalize_identifier(key)
        return name

def shape_of(schema: Any, roots: Mapping[str, str]) -> tuple[Shape, dict[str, set[str]]]:
    shape: dict[str, dict[str, ColumnShape]] = {}
    tables: dict[str, set[str]] = {}
    for resource, root in roots.items():
        own = {t for t in schema.tables if t == root or t.startswith(root + "__")}
        own = {t for t in own if schema.tables[t].get("columns")}
        tables[resource] = own
        for t in own:
            shape[t] = {
                name: ColumnShape(col.get("data_type"), bool(col.get("nullable", True)))
                for name, col in schema.tables[t]["columns"].items()
                if name not in DLT_COLUMNS
            }
    return shape, tables


def observe_with_pipeline(
    pipeline: Any, taps: list[Tap], schema_name: str, normalizers: Any
) -> tuple[Shape, dict[str, set[str]]]:
    """The shape of the tapped items through a scratch dlt pipeline (its own temporary folder,
    no hints): for items the in-memory observer does not take."""
    import dlt
    from dlt.common.schema import Schema

    with tempfile.TemporaryDirectory(prefix="dlt-contract-ops-gate-") as scratch_dir:
        scratch = dlt.pipeline(
            pipeline_name=f"{pipeline.pipeline_name}_gate_observe",
            pipelines_dir=scratch_dir,
            destination=pipeline.destination,
        )
        schema = Schema(schema_name, normalizers=normalizers)
        scratch.extract(
            [
                dlt.resource(t.items, name=t.resource, table_name=t.table,
                             max_table_nesting=t.max_nesting)  # type: ignore[arg-type]  # None: no limit
                for t in taps
            ],
            schema=schema,
        )
        scratch.normalize()
        observed = scratch.default_schema
        roots = {t.resource: observed.naming.normalize_table_identifier(t.table) for t in taps}
        result = shape_of(observed, roots)
        scratch.drop()
    return result
