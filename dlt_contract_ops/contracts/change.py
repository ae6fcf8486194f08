"""One difference between two contracts (`Change`): its rule, the column, the values before and
after as people read them; what `contracts.diff` produces and the release check assesses."""

from __future__ import annotations

from dataclasses import dataclass

from dlt_contract_ops.contracts.rules import (
    Perspective,
    Rule,
    Severity,
)

_RULE_ORDER = {rule: i for i, rule in enumerate(Rule)}


@dataclass(frozen=True)
class Change:
    """One difference between two contracts, with its evidence.

    `old`/`new` are the property's values as people read them (None: undeclared or absent);
    `detail` names what moved when a set changed (the categories added, say).
    """

    rule: Rule
    resource: str
    column: str | None = None
    old: str | None = None
    new: str | None = None
    detail: str | None = None

    @property
    def rule_id(self) -> str:
        return self.rule.rule_id

    def severity(self, perspective: Perspective = "consumer") -> Severity:
        return self.rule.severity(perspective)

    @property
    def subject(self) -> str:
        """`resource.column`, or the resource for a resource-level change."""
        return f"{self.resource}.{self.column}" if self.column is not None else self.resource

    @property
    def evidence(self) -> str:
        """What moved, e.g. `USD → USD_cents` or `+unknown`."""
        if self.detail is not None:
            return self.detail
        return f"{_show(self.old)} → {_show(self.new)}"

    @property
    def message(self) -> str:
        return f"{self.rule.title}: {self.evidence}"

    @property
    def sort_key(self) -> tuple[str, str, int]:
        return (self.resource, self.column or "", _RULE_ORDER[self.rule])


def _show(value: str | None) -> str:
    return "(none)" if value is None else value
