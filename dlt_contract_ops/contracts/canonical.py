"""The canonical snapshot document: one resource at one version, as byte-stable JSON.

Keys are sorted, columns are sorted by name and written one per line, undeclared properties
are left out, and `hash` is the SHA-256 of the contract content (everything but `version` and
`hash`), so two versions with the same content carry the same hash. The same contract always
serializes to the same bytes.

Format 2 added value constraints, declarations inside json columns (`members`), dlt's key hints
and contract metadata. Format 1 documents still read: they come back with `format_version=1`, so
the diff knows their lack of those properties means "not recorded", and they hash as before.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from dlt_contract_ops.contracts.model import (
    FORMAT_VERSION,
    HINT_NAMES,
    ColumnContract,
    DltHints,
    ResourceContract,
    Version,
    VersionError,
)
from dlt_contract_ops.errors import SnapshotError

FORMAT = f"dlt-contract-ops/contract@{FORMAT_VERSION}"
#: every format this code reads -> its version
READABLE = {f"dlt-contract-ops/contract@{v}": v for v in (1, FORMAT_VERSION)}

_OPTIONAL_STR = (
    "unit", "timezone", "category_pattern", "crs", "description", "renamed_from",
    "value_format", "ge", "gt", "le", "lt", "multiple_of", "pattern",
)
_OPTIONAL_INT = ("precision", "scale", "min_length", "max_length")


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _properties(col: ColumnContract, doc: dict[str, Any]) -> dict[str, Any]:
    for key in (*_OPTIONAL_INT, *_OPTIONAL_STR):
        value = getattr(col, key)
        if value is not None:
            doc[key] = value
    if col.categories is not None:
        doc["categories"] = list(col.categories)
    return doc


def column_document(col: ColumnContract) -> dict[str, Any]:
    """The JSON object of one column; undeclared properties are omitted."""
    doc = _properties(col, {"name": col.name, "type": col.type, "nullable": col.nullable})
    if col.members:
        doc["members"] = [_properties(m, {"path": m.name}) for m in col.members]
    return doc


def _content(contract: ResourceContract) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": f"dlt-contract-ops/contract@{contract.format_version}",
        "source": contract.source,
        "resource": contract.resource,
        "table": contract.table,
        "model": contract.model,
        "columns": [column_document(c) for c in contract.columns],
    }
    if contract.keys is not None:
        doc["keys"] = list(contract.keys)
    if contract.grain is not None:
        doc["grain"] = contract.grain
    for hint in HINT_NAMES:
        if contract.hints.columns(hint):
            doc[hint] = list(contract.hints.columns(hint))
    if contract.owner is not None:
        doc["owner"] = contract.owner
    if contract.consumer_owners:
        doc["consumer_owners"] = list(contract.consumer_owners)
    if contract.change_key is not None:
        doc["change_key"] = contract.change_key
    return doc


def content_hash(contract: ResourceContract) -> str:
    """`sha256:<hex>` of the contract content, independent of the version it is filed under."""
    digest = hashlib.sha256(_compact(_content(contract)).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"


def to_document(contract: ResourceContract, version: Version) -> str:
    """The canonical text of `contract` at `version`, ending in a newline.

    Columns go one per line so a reviewer reads the change in a plain `git diff`.
    """
    doc = _content(contract)
    doc["version"] = str(version)
    doc["hash"] = content_hash(contract)
    parts = []
    for key in sorted(doc):
        if key == "columns":
            rows = ",\n".join(f"  {_compact(c)}" for c in doc["columns"])
            parts.append(f'"columns": [\n{rows}\n]' if rows else '"columns": []')
        else:
            parts.append(f"{_compact(key)}: {_compact(doc[key])}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


class _Reader:
    """Typed access to a parsed document with errors naming the file and the key."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, what: str) -> SnapshotError:
        return SnapshotError(f"`{self.where}`: `{key}` {what}.")

    def text(self, doc: dict[str, Any], key: str, label: str, *, optional: bool = False) -> Any:
        value = doc.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self.fail(label, "must be a string" if key in doc else "is missing")
        return value

    def integer(self, doc: dict[str, Any], key: str, label: str) -> int | None:
        value = doc.get(key)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(label, "must be a non-negative integer")
        return value

    def strings(self, doc: dict[str, Any], key: str, label: str) -> tuple[str, ...] | None:
        value = doc.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(label, "must be a list of strings")
        return tuple(value)


def _read_properties(
    reader: _Reader, raw: dict[str, Any], label: str, name: str
) -> dict[str, Any]:
    values: dict[str, Any] = {
        key: reader.text(raw, key, f"{label}.{key} ({name})", optional=True)
        for key in _OPTIONAL_STR
    }
    for key in _OPTIONAL_INT:
        values[key] = reader.integer(raw, key, f"{label}.{key} ({name})")
    cats = reader.strings(raw, "categories", f"{label}.categories ({name})")
    values["categories"] = tuple(sorted(set(cats))) if cats is not None else None
    return values


def _member(reader: _Reader, raw: Any, label: str, column: str) -> ColumnContract:
    if not isinstance(raw, dict):
        raise reader.fail(f"{label} ({column})", "must be an object")
    path = reader.text(raw, "path", f"{label}.path ({column})")
    values = _read_properties(reader, raw, label, f"{column} {path}")
    return ColumnContract(path, None, True, **values)


def _column(reader: _Reader, raw: Any, i: int) -> ColumnContract:
    label = f"columns[{i}]"
    if not isinstance(raw, dict):
        raise reader.fail(label, "must be an object")
    name = reader.text(raw, "name", f"{label}.name")
    nullable = raw.get("nullable")
    if not isinstance(nullable, bool):
        raise reader.fail(f"{label}.nullable ({name})", "must be true or false")
    dtype = raw.get("type")
    if dtype is not None and not isinstance(dtype, str):
        raise reader.fail(f"{label}.type ({name})", "must be a string or null")
    raw_members = raw.get("members", [])
    if not isinstance(raw_members, list):
        raise reader.fail(f"{label}.members ({name})", "must be a list of objects")
    members = tuple(
        _member(reader, m, f"{label}.members[{j}]", name) for j, m in enumerate(raw_members)
    )
    if len({m.name for m in members}) != len(members):
        raise reader.fail(f"{label}.members ({name})", "lists a path twice")
    return ColumnContract(
        name=name,
        type=dtype,
        nullable=nullable,
        members=members,
        **_read_properties(reader, raw, label, name),
    )


def from_document(text: str, where: str) -> tuple[ResourceContract, Version]:
    """Parse a snapshot document; `where` (its path) names it in every error.

    A document without `hash` is accepted (a hand-written contract); one whose `hash`
    disagrees with its content is refused, since a released contract must not change.
    """
    reader = _Reader(where)
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise SnapshotError(f"`{where}` is not valid JSON: {exc}.") from exc
    if not isinstance(doc, dict):
        raise SnapshotError(f"`{where}` must hold a JSON object (a contract snapshot).")
    fmt = doc.get("format")
    if fmt not in READABLE:
        known = ", ".join(f'"{f}"' for f in READABLE)
        raise reader.fail(
            "format", f"is {fmt!r}; dlt-contract-ops reads {known} (a newer release of "
            "dlt-contract-ops may have written it: upgrade to read it)"
        )
    raw_columns = doc.get("columns")
    if not isinstance(raw_columns, list):
        raise reader.fail("columns", "must be a list of column objects")
    columns = tuple(_column(reader, raw, i) for i, raw in enumerate(raw_columns))
    seen: set[str] = set()
    for col in columns:
        if col.name in seen:
            raise reader.fail("columns", f"lists `{col.name}` twice")
        seen.add(col.name)
    try:
        version = Version.parse(reader.text(doc, "version", "version"))
    except VersionError as exc:
        raise reader.fail("version", str(exc).rstrip(".")) from exc
    contract = ResourceContract(
        source=reader.text(doc, "source", "source"),
        resource=reader.text(doc, "resource", "resource"),
        table=reader.text(doc, "table", "table"),
        columns=columns,
        keys=reader.strings(doc, "keys", "keys"),
        grain=reader.text(doc, "grain", "grain", optional=True),
        model=reader.text(doc, "model", "model", optional=True) or "",
        hints=DltHints(**{h: reader.strings(doc, h, h) or () for h in HINT_NAMES}),
        owner=reader.text(doc, "owner", "owner", optional=True),
        consumer_owners=reader.strings(doc, "consumer_owners", "consumer_owners") or (),
        change_key=reader.text(doc, "change_key", "change_key", optional=True),
        format_version=READABLE[fmt],
    )
    stored = doc.get("hash")
    if stored is not None and stored != content_hash(contract):
        raise SnapshotError(
            f"`{where}`: `hash` does not match the content: the released contract was edited. "
            "Released snapshots are immutable; snapshot a new version instead (or delete the "
            "`hash` key to accept a hand-written contract)."
        )
    return contract, version
