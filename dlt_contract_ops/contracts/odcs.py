"""A source's contracts as an Open Data Contract Standard (ODCS v3.1) document.

Built from the same `ResourceContract`s a snapshot writes, so an export and a snapshot of the
same models agree. What ODCS has a place for goes there; the rest goes to `customProperties`,
so nothing declared is left out:

- a resource -> a schema object (`name` the resource, `physicalName` its table, `grain` as
  `dataGranularityDescription`); a child table dlt lands a list field in -> a schema object of
  its own, naming its `parentTable`;
- a column -> a property: `logicalType` and `logicalTypeOptions` (`odcs_types`), the dlt type
  as `physicalType`, `required` (not nullable), `primaryKey`/`primaryKeyPosition` (dlt's
  `primary_key`, else the declared `keys`), `unique`, `partitioned`/`partitionKeyPosition`,
  the description;
- a time zone -> `defaultTimezone`; bounds, lengths, patterns -> `logicalTypeOptions` where
  ODCS allows them for the type; a code set / category pattern -> an `invalidValues` quality
  check that must be 0; declared keys -> a schema-level `duplicateValues` check;
- declarations inside a json column -> `items` / `properties` of an array / object;
- unit, CRS, value format, previous name, owner, consumer owners, change key, model name,
  dlt's key hints -> `customProperties`.

Pure: the document as a dict, and its YAML text.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dlt_contract_ops.contracts.canonical import column_document
from dlt_contract_ops.contracts.model import HINT_NAMES, ColumnContract, ResourceContract, Version
from dlt_contract_ops.contracts.odcs_types import (
    BOUND_OPTIONS,
    CUSTOM_PROPERTIES,
    LENGTH_OPTIONS,
    OPTION_KEYS,
    logical_type,
    type_format,
)

API_VERSION = "v3.1.0"


#: a column -> its type on the destination, None where unknown (`export.destination_types`)
PhysicalTypes = Callable[[ColumnContract], "str | None"]


@dataclass(frozen=True)
class ChildTable:
    """A child table dlt lands a model's list field in (`skip_nested_types`): its contract
    (`resource` the root resource, `table` the child table) and the table it is nested under."""

    contract: ResourceContract
    parent: str


def contract_id(source: str) -> str:
    """The document `id` of `source`: the same UUID on every export (a name-based UUID of
    `dlt-contract-ops:source/<name>`), so a re-export replaces the document, not adds one.

    >>> contract_id("shop")
    '07f2c3fc-8c35-53b7-93ea-e5788177bee3'
    """
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"dlt-contract-ops:source/{source}"))


def _number(text: str) -> int | float | None:
    """`text` as the JSON number that reads back as the same text; None when there is none
    (`1e-3`, `1.50`, a 30-digit decimal): the bound then stays text, as a custom property.

    >>> _number("1"), _number("0.5"), _number("1.50"), _number("2020-01-01")
    (1, 0.5, None, None)
    """
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if repr(value) == text and math.isfinite(value):
            return value
    return None


def _custom(entries: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"property": k, "value": v} for k, v in entries.items()]


def _declarations(
    col: ColumnContract, logical: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(logicalTypeOptions, custom properties) of `col`'s declarations for its logical type."""
    allowed = OPTION_KEYS.get(logical or "", frozenset())
    options: dict[str, Any] = {}
    custom: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        (options if key in allowed else custom)[key] = value

    fmt = type_format(col.type, col.precision)
    if fmt is not None:
        put("format", fmt)
    if col.timezone is not None:
        put("defaultTimezone" if "defaultTimezone" in allowed else "timezone", col.timezone)
    numeric = logical in ("integer", "number")
    for attribute, key in BOUND_OPTIONS.items():
        text = getattr(col, attribute)
        if text is None:
            continue
        value = _number(text) if numeric else text
        if value is None or (numeric and key == "multipleOf" and value <= 0):
            custom[key] = text
        else:
            put(key, value)
    for attribute, key in LENGTH_OPTIONS.items():
        value = getattr(col, attribute)
        if attribute == "max_length" and value is None and col.type == "text":
            value = col.precision  # a text's width is its most characters
        if value is not None:
            put(key, value)
    for attribute, key in CUSTOM_PROPERTIES.items():
        if getattr(col, attribute) is not None:
            custom[key] = getattr(col, attribute)
    return options, custom


def _quality(col: ColumnContract, where: str) -> list[dict[str, Any]]:
    """The `invalidValues` check a code set or a category pattern is."""
    if col.categories is not None:
        argument: dict[str, Any] = {"validValues": list(col.categories)}
        what = f"`{where}` holds only the values of its code set."
    elif col.category_pattern is not None:
        argument = {"pattern": col.category_pattern}
        what = f"Every value of `{where}` matches its category pattern."
    else:
        return []
    return [{"type": "library", "metric": "invalidValues", "arguments": argument, "mustBe": 0,
             "dimension": "conformity", "description": what}]


def _segments(path: str) -> list[str]:
    """`[].dims[]` -> `["[]", "dims", "[]"]`: a member path's steps."""
    out: list[str] = []
    for part in path.split("."):
        name = part.split("[", 1)[0].split("{", 1)[0]
        if name:
            out.append(name)
        rest = part[len(name):]
        out.extend(rest[i:i + 2] for i in range(0, len(rest), 2))
    return out


@dataclass
class _Node:
    member: ColumnContract | None = None
    children: dict[str, _Node] | None = None

    def child(self, step: str) -> _Node:
        if self.children is None:
            self.children = {}
        return self.children.setdefault(step, _Node())


def _element(node: _Node, col: ColumnContract, where: str, logical: str | None) -> dict[str, Any]:
    """The ODCS keys of one element (a column or a value inside one): options, quality, the
    elements below it, custom properties. A declaration ODCS cannot nest goes to `members`."""
    doc: dict[str, Any] = {}
    options, custom = _declarations(col, logical)
    if options:
        doc["logicalTypeOptions"] = options
    if quality := _quality(col, where):
        doc["quality"] = quality
    unplaced: list[dict[str, Any]] = []
    children = node.children or {}
    if "[]" in children and logical == "array":
        doc["items"] = _nested(children.pop("[]"), f"{where}[]")
    named = {k: v for k, v in children.items() if k not in ("[]", "{}")}
    if named and logical == "object":
        doc["properties"] = [{"name": k, **_nested(v, f"{where}.{k}")} for k, v in named.items()]
        children = {k: v for k, v in children.items() if k not in named}
    for step, below in children.items():
        unplaced.extend(_flat(below, step))
    if unplaced:
        custom["members"] = unplaced
    if custom:
        doc["customProperties"] = _custom(custom)
    return doc


def _nested(node: _Node, where: str) -> dict[str, Any]:
    """An element inside a json column: a list's items or a nested model's field."""
    children = node.children or {}
    logical = "array" if "[]" in children else "object" if any(
        k not in ("[]", "{}") for k in children) else None
    col = node.member or ColumnContract(where, None, True)
    doc: dict[str, Any] = {"logicalType": logical} if logical else {}
    if col.description is not None:
        doc["description"] = col.description
    return {**doc, **_element(node, col, where, logical)}


def _flat(node: _Node, path: str) -> list[dict[str, Any]]:
    """Declarations ODCS has no nesting for (a mapping's values), as `{path, ...}` entries."""
    out: list[dict[str, Any]] = []
    if node.member is not None:
        doc = column_document(node.member)
        out.append({"path": path, **{k: v for k, v in doc.items()
                                     if k not in ("name", "type", "nullable")}})
    for step, below in (node.children or {}).items():
        out.extend(_flat(below, f"{path}{step}" if step in ("[]", "{}") else f"{path}.{step}"))
    return out


def _property(
    col: ColumnContract, contract: ResourceContract, primary: tuple[str, ...],
    physical_type: PhysicalTypes | None,
) -> dict[str, Any]:
    root = _Node()
    for member in col.members:
        node = root
        for step in _segments(member.name):
            node = node.child(step)
        node.member = member
    top = root.children or {}
    logical = logical_type(col.type, array="[]" in top)
    doc: dict[str, Any] = {"name": col.name}
    if logical is not None:
        doc["logicalType"] = logical
    physical = physical_type(col) if physical_type is not None else None
    if physical is not None:
        doc["physicalType"] = physical
    elif col.type is not None:
        doc["physicalType"] = col.type_label
    if col.description is not None:
        doc["description"] = col.description
    doc["required"] = not col.nullable
    if col.name in primary:
        doc["primaryKey"] = True
        doc["primaryKeyPosition"] = primary.index(col.name) + 1
    if col.name in contract.hints.unique:
        doc["unique"] = True
    if col.name in contract.hints.partition:
        doc["partitioned"] = True
        doc["partitionKeyPosition"] = contract.hints.partition.index(col.name) + 1
    element = _element(root, col, f"{contract.table}.{col.name}", logical)
    if physical is not None and col.type is not None:  # the dlt type stays readable
        custom = [{"property": "dltDataType", "value": col.type_label}]
        element["customProperties"] = custom + element.get("customProperties", [])
    return {**doc, **element}


def _object(
    contract: ResourceContract, parent: str | None, physical_type: PhysicalTypes | None
) -> dict[str, Any]:
    """One schema object: a resource's table, or (`parent` given) a child table."""
    primary = contract.hints.primary_key or contract.keys or ()
    doc: dict[str, Any] = {
        "name": contract.resource if parent is None else contract.table,
        "physicalName": contract.table,
        "logicalType": "object",
        "physicalType": "table",
    }
    if contract.grain is not None:
        doc["dataGranularityDescription"] = contract.grain
    doc["properties"] = [_property(c, contract, primary, physical_type)
                         for c in contract.columns]
    if contract.keys:
        doc["quality"] = [{
            "type": "library", "metric": "duplicateValues",
            "arguments": {"properties": list(contract.keys)}, "mustBe": 0,
            "dimension": "uniqueness",
            "description": f"One row per {', '.join(contract.keys)} (the declared keys).",
        }]
    custom: dict[str, Any] = {}
    if parent is not None:
        custom.update(resource=contract.resource, parentTable=parent)
    if contract.model:
        custom["model"] = contract.model
    if contract.keys is not None:
        custom["keys"] = list(contract.keys)
    hints = {h: list(contract.hints.columns(h)) for h in HINT_NAMES if contract.hints.columns(h)}
    if hints:
        custom["dltHints"] = hints
    for key, value in (("owner", contract.owner), ("changeKey", contract.change_key),
                       ("consumerOwners", list(contract.consumer_owners) or None)):
        if value is not None:
            custom[key] = value
    if custom:
        doc["customProperties"] = _custom(custom)
    return doc


def to_odcs(
    source: str,
    resources: Sequence[ResourceContract],
    *,
    version: Version | None = None,
    children: Sequence[ChildTable] = (),
    destination: str | None = None,
    physical_type: PhysicalTypes | None = None,
) -> dict[str, Any]:
    """The ODCS document of `source`'s contracts. Without a `version` the document is a
    `draft` at `0.0.0` (the models as they are, not a release); with one it is `active`.

    `physical_type` gives a column's type on `destination` (None where unknown): it becomes
    the `physicalType`, and the dlt type moves to the custom property `dltDataType`.
    """
    objects = [_object(r, None, physical_type)
               for r in sorted(resources, key=lambda r: r.resource)]
    objects += [_object(c.contract, c.parent, physical_type)
                for c in sorted(children, key=lambda c: (c.contract.resource, c.contract.table))]
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "DataContract",
        "id": contract_id(source),
        "name": source,
        "version": str(version or Version(0, 0, 0)),
        "status": "active" if version is not None else "draft",
        "schema": objects,
    }
    if destination is not None:
        document["customProperties"] = _custom({"dltDestination": destination})
    return document


def to_yaml(document: dict[str, Any]) -> str:
    """The document as YAML, keys in the order ODCS documents them."""
    import yaml

    text: str = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    return text
