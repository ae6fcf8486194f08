"""An ODCS v3 document read back into contracts: the inverse of `odcs.to_odcs`, for an
importer (`models infer --from-odcs`) and for the round-trip test.

A document this package exported reads back to the contracts it was made from (its custom
properties carry what ODCS has no key for). A document another tool wrote reads as far as ODCS
says: types from `logicalType` and its options (`odcs_types.dlt_type_of`), nullability, keys,
time zones, bounds, lengths, patterns and `invalidValues` code sets. Pure: a parsed document in,
values out; every error names the element and the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dlt_contract_ops.contracts.model import ColumnContract, DltHints, ResourceContract
from dlt_contract_ops.contracts.odcs import ChildTable
from dlt_contract_ops.contracts.odcs_types import (
    BOUND_OPTIONS,
    CUSTOM_PROPERTIES,
    LENGTH_OPTIONS,
    dlt_type_of,
)
from dlt_contract_ops.errors import SnapshotError

#: logicalTypeOptions key -> ColumnContract attribute
_BOUNDS = {key: attribute for attribute, key in BOUND_OPTIONS.items()}
_LENGTHS = {key: attribute for attribute, key in LENGTH_OPTIONS.items()}
#: custom property -> ColumnContract attribute: what ODCS has no key for, and an option the
#: export could not place for the column's logical type (a time zone on text, a bound on bool)
_CUSTOM = {**{key: attribute for attribute, key in CUSTOM_PROPERTIES.items()},
           "timezone": "timezone", **_BOUNDS, **_LENGTHS}


def _custom(element: Mapping[str, Any]) -> dict[str, Any]:
    return {c["property"]: c["value"] for c in element.get("customProperties") or []
            if isinstance(c, Mapping) and "property" in c}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _vocabulary(element: Mapping[str, Any]) -> tuple[tuple[str, ...] | None, str | None]:
    """A code set or category pattern from the element's `invalidValues` check."""
    for check in element.get("quality") or []:
        if not isinstance(check, Mapping) or check.get("metric") != "invalidValues":
            continue
        arguments = check.get("arguments") or {}
        if "validValues" in arguments:
            return tuple(sorted({_text(v) for v in arguments["validValues"]})), None
        if "pattern" in arguments:
            return None, _text(arguments["pattern"])
    return None, None


def _declared(element: Mapping[str, Any], dlt_type: str | None, precision: int | None
              ) -> dict[str, Any]:
    """The ColumnContract keyword arguments an element declares (not name, type, nullable)."""
    options = element.get("logicalTypeOptions") or {}
    custom = _custom(element)
    values: dict[str, Any] = {}
    for key, attribute in _CUSTOM.items():
        if key in custom:
            values[attribute] = custom[key]
    for key, attribute in {**_BOUNDS, **_LENGTHS}.items():
        if key in options:
            values[attribute] = options[key]
    if "defaultTimezone" in options:
        values["timezone"] = options["defaultTimezone"]
    for attribute in values:  # bounds and texts are text in a contract, lengths integers
        if attribute not in ("min_length", "max_length"):
            values[attribute] = _text(values[attribute])
    if dlt_type == "text" and values.get("max_length") == precision:
        values.pop("max_length", None)  # a text's width, written as its maxLength
    if element.get("description") is not None:
        values["description"] = _text(element["description"])
    values["categories"], values["category_pattern"] = _vocabulary(element)
    return values


def _members(element: Mapping[str, Any], prefix: str) -> list[ColumnContract]:
    """The declarations inside a json column: `items`, nested `properties` and the custom
    `members` the export wrote for what ODCS cannot nest."""
    out: list[ColumnContract] = []
    for flat in _custom(element).get("members") or []:
        path = f"{prefix}{flat['path']}" if flat["path"].startswith(("[", "{")) or not prefix \
            else f"{prefix}.{flat['path']}"
        values = {k: v for k, v in flat.items() if k != "path"}
        if "categories" in values:
            values["categories"] = tuple(sorted(values["categories"]))
        out.append(ColumnContract(path, None, True, **values))
    below: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(element.get("items"), Mapping):
        below.append((f"{prefix}[]", element["items"]))
    for prop in element.get("properties") or []:
        below.append((f"{prefix}.{prop['name']}" if prefix else prop["name"], prop))
    for path, inner in below:
        declared = {k: v for k, v in _declared(inner, None, None).items() if v is not None}
        if declared:
            out.append(ColumnContract(path, None, True, **declared))
        out.extend(_members(inner, path))
    return out


def _column(prop: Mapping[str, Any], where: str) -> ColumnContract:
    name = prop.get("name")
    if not isinstance(name, str):
        raise SnapshotError(f"{where}: a property has no `name`.")
    custom = _custom(prop)
    physical = custom.get("dltDataType") or prop.get("physicalType")
    logical = prop.get("logicalType")
    dlt_type, precision, scale = dlt_type_of(logical, physical, prop.get("logicalTypeOptions"))
    if logical is None and physical is None:
        dlt_type = None
    values = _declared(prop, dlt_type, precision)
    members = tuple(_members(prop, ""))
    return ColumnContract(name, dlt_type, not prop.get("required", False), precision=precision,
                          scale=scale, members=members, **values)


def _resource(source: str, obj: Mapping[str, Any], i: int) -> tuple[ResourceContract, str | None]:
    where = f"schema[{i}] ({obj.get('name')})"
    if not isinstance(obj.get("name"), str):
        raise SnapshotError(f"schema[{i}]: a schema object has no `name`.")
    custom = _custom(obj)
    props = obj.get("properties") or []
    columns = tuple(_column(p, where) for p in props)
    if "dltHints" in custom:  # this package's export: dlt's hints exactly
        hints = dict(custom["dltHints"])
    else:  # another tool's document: its primary key, unique and partition flags
        flagged = {"primary_key": "primaryKey", "unique": "unique", "partition": "partitioned"}
        hints = {hint: [p["name"] for p in props if p.get(flag)] for hint, flag in flagged.items()}
    keys = custom.get("keys")
    parent = custom.get("parentTable")
    contract = ResourceContract(
        source=source,
        resource=custom.get("resource") or obj["name"],
        table=obj.get("physicalName") or obj["name"],
        columns=columns,
        keys=tuple(keys) if keys is not None else None,
        grain=obj.get("dataGranularityDescription"),
        model=custom.get("model", ""),
        hints=DltHints(**{k: tuple(v) for k, v in hints.items()}),
        owner=custom.get("owner"),
        consumer_owners=tuple(custom.get("consumerOwners") or ()),
        change_key=custom.get("changeKey"),
    )
    return contract, parent


def contracts_from_odcs(
    document: Mapping[str, Any], source: str | None = None
) -> tuple[list[ResourceContract], list[ChildTable]]:
    """The contracts (root tables) and child tables an ODCS document declares; `source`
    defaults to the document's `name`."""
    name = source or document.get("name") or document.get("id")
    if not isinstance(name, str):
        raise SnapshotError("The ODCS document has no `name`: give the source name.")
    roots: list[ResourceContract] = []
    children: list[ChildTable] = []
    for i, obj in enumerate(document.get("schema") or []):
        contract, parent = _resource(name, obj, i)
        if parent is None:
            roots.append(contract)
        else:
            children.append(ChildTable(contract, parent))
    return roots, children
