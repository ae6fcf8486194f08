"""Terse builders for contract values in case tables."""

from __future__ import annotations

from typing import Any

from dlt_contract_ops.contracts.model import ColumnContract, Release, ResourceContract, Version


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
) -> ResourceContract:
    return ResourceContract(source, resource, table or resource, columns, keys, grain, "Model")


def release(version: str, *resources: ResourceContract, source: str = "erp") -> Release:
    return Release(source, Version.parse(version), resources)
