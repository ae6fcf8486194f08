"""What the ingest gate decided about one batch: a pydantic report, JSON in one call."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ShapeChange = Literal["added", "missing", "retyped"]


class Difference(BaseModel):
    """One column where the batch differs from the contract.

    >>> Difference(table="orders", column="currency", change="added", observed_type="text",
    ...            nullable=True, approved=True).label
    'orders.currency'
    """

    model_config = ConfigDict(frozen=True)

    table: str
    column: str
    change: ShapeChange
    #: dlt data types (`text`, `bigint`, `date`, ...); None on the side that has no column
    observed_type: str | None = None
    expected_type: str | None = None
    #: as dlt would create the column (added: what the batch sent; missing: the contract's)
    nullable: bool = True
    approved: bool = False
    #: on an added column: the missing column of a compatible type it probably renames
    renamed_from: str | None = None

    @property
    def label(self) -> str:
        return f"{self.table}.{self.column}"


class GateReport(BaseModel):
    """The gate's decision on one batch, and where things are."""

    model_config = ConfigDict(frozen=True)

    pipeline: str
    action: Literal["loaded", "rejected"]
    differences: list[Difference] = Field(default_factory=list)
    reason: str
    #: dlt's stored schema version after the run (unchanged by a rejection)
    schema_version: int | None = None
    #: dlt's LoadInfo as a dict, when loaded
    load_info: dict[str, Any] | None = None
    #: local folder holding the rejected batch's files and `diff.json`, when rejected
    quarantine: str | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def admissible(self) -> bool:
        return all(d.approved for d in self.differences)


def reason_of(differences: list[Difference]) -> str:
    """One line naming every changed column, grouped by change.

    >>> reason_of([Difference(table="o", column="order_date", change="missing",
    ...                       expected_type="date", nullable=False),
    ...            Difference(table="o", column="sale_date", change="added",
    ...                       observed_type="date", renamed_from="order_date")])
    'missing: o.order_date; added: o.sale_date (renamed from order_date?)'
    """
    if not differences:
        return "no differences: the batch matches the contract"
    parts = []
    for change in ("missing", "retyped", "added"):
        items = []
        for d in differences:
            if d.change != change:
                continue
            text = d.label
            if change == "retyped":
                text += f" ({d.observed_type}, expected {d.expected_type})"
            if d.renamed_from:
                text += f" (renamed from {d.renamed_from}?)"
            if d.approved:
                text += " (approved)"
            items.append(text)
        if items:
            parts.append(f"{change}: {', '.join(items)}")
    return "; ".join(parts)
