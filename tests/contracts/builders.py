"""Terse builders for contract values in case tables."""

from __future__ import annotations

from typing import Any

from dlt_contract_ops.contracts.model import (
    ColumnContract,
    DltHints,
    Release,
    ResourceContract,
    Version,
)


def col(
    name: str, type_: str | None = "bigint", nullable: bool = False, **props: Any
) -> ColumnContract:
    """A column; `props` are the semantic properties (unit=..., categories=(...), ...)."""
    if "categories" in props and props["categories"] is not None:
        props["categories"] = tuple(sorted(props["categories"]))
    return ColumnContract(name, type_, nullable, **props)


def res(
    *columns: ColumnContract,
    resource: str = "orders",
    table: str | None = None,
    keys: tuple[str, ...] | None = None,
    grain: str | None = None,
    source: str = "erp",
    **extra: Any,
) -> ResourceContract:
    """A resource; `extra` are the other fields (owner=..., format_version=...) and dlt's
    hints by name (primary_key=("id",), partition=(...))."""
    hints = {k: extra.pop(k) for k in list(extra) if k in DltHints.__dataclass_fields__}
    return ResourceContract(source, resource, table or resource, columns, keys, grain, "Model",
                            hints=DltHints(**hints), **extra)


def member(path: str, **props: Any) -> ColumnContract:
    """A declaration on values inside a json column, at `path` (`[]`, `weight`, ...)."""
    if "categories" in props and props["categories"] is not None:
        props["categories"] = tuple(sorted(props["categories"]))
    return ColumnContract(path, None, True, **props)


def release(version: str, *resources: ResourceContract, source: str = "erp") -> Release:
    return Release(source, Version.parse(version), resources)
