"""What a finding says, beside its identity: its content and how deep it goes.

A finding's id (`model.identity`) names WHERE the drift is (source, table, detector, columns);
its content says WHAT was found there: each column with its live (and declared) type, each
shifted metric of a column with its category, each broken rule. An acknowledgement covers the
content it was given (`covers`), the alert state notices content that grew (`grew`), and a
deeper coverage drop (`deeper`) pages again. Pure: values in, values out.

>>> from dlt_contract_ops.model.findings import DriftFinding
>>> f = DriftFinding(drift_type="distribution", source="s", resource="r", table="t",
...                  columns=["status"], metrics=[{"column": "status", "metric":
...                  "category_share", "category": "other", "baseline": 0.0,
...                  "current": 0.04, "change": 0.04}])
>>> finding_content(f)
('`status` category_share `other`', 'column `status`')
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt_contract_ops.model.findings import DriftFinding

#: how much deeper (a share, 0..1) a coverage drop must go to page again: ten points
ESCALATE_STEP = 0.10


def _name(value: str) -> str:
    return "`" + value.replace("`", "``") + "`"


def finding_content(finding: DriftFinding) -> tuple[str, ...]:
    """The finding's content as sorted, readable items: `column `x` BIGINT (declared text)`
    per column, `` `status` new_category `refunded` `` per shifted metric, `` `email` rule
    pattern `` per broken rule. Samples, counts and measured values are left out: they move
    on every run."""
    items: set[str] = set()
    expected = finding.expected_types or {}
    for column in finding.columns:
        item = f"column {_name(column)}"
        if finding.column_types.get(column):
            item += f" {finding.column_types[column]}"
        if expected.get(column):
            item += f" (declared {expected[column]})"
        items.add(item)
    for metric in finding.metrics or ():
        item = f"{_name(str(metric.get('column')))} {metric.get('metric')}"
        if metric.get("category") is not None:
            item += f" {_name(str(metric['category']))}"
        items.add(item)
    for violation in finding.violations or ():
        items.add(f"{_name(str(violation.get('column')))} rule {violation.get('rule')}")
    if finding.renamed_from and finding.renamed_to:
        items.add(f"renamed {_name(finding.renamed_from)} to {_name(finding.renamed_to)}")
    return tuple(sorted(items))


def content_digest(content: Iterable[str]) -> str:
    """A short digest of `content` (order does not matter).

    >>> content_digest(["b", "a"]) == content_digest(["a", "b"])
    True
    """
    body = json.dumps(sorted(content), ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def content_summary(finding: DriftFinding) -> str:
    """One line a person reads in the acknowledgements file: the kind, the table and the
    content."""
    return f"{finding.drift_type} drift of {_name(finding.table)}: " + "; ".join(
        finding_content(finding)
    )


def covers(acked: Iterable[str], content: Iterable[str]) -> bool:
    """Whether content acknowledged as `acked` covers `content`: the same, or narrower.

    >>> covers(["a", "b"], ["a"]), covers(["a"], ["a", "b"])
    (True, False)
    """
    return set(content) <= set(acked)


def grew(before: Iterable[str], now: Iterable[str]) -> tuple[str, ...]:
    """The items of `now` that `before` lacks, sorted.

    >>> grew(["a"], ["a", "c", "b"])
    ('b', 'c')
    """
    return tuple(sorted(set(now) - set(before)))


def finding_depth(finding: DriftFinding) -> dict[str, float]:
    """How deep each coverage drop goes (0..1): a dark column's baseline minus recent
    coverage (removal), a column's rise in NULL share (distribution `null_rate`)."""
    depth: dict[str, float] = {}
    for column, cov in (finding.coverage or {}).items():
        if cov.baseline is not None and cov.recent is not None:
            depth[f"column {_name(column)}"] = round(cov.baseline - cov.recent, 6)
    for metric in finding.metrics or ():
        change = metric.get("change")
        if metric.get("metric") == "null_rate" and isinstance(change, int | float) and change > 0:
            depth[f"{_name(str(metric.get('column')))} null_rate"] = round(float(change), 6)
    return depth


def deeper(before: Mapping[str, Any], now: Mapping[str, float],
           step: float = ESCALATE_STEP) -> tuple[str, ...]:
    """The items of `now` whose drop went at least `step` deeper than in `before`.

    >>> deeper({"a": 0.5}, {"a": 0.95, "b": 0.2})
    ('a',)
    """
    return tuple(sorted(
        k for k, v in now.items()
        if isinstance(before.get(k), int | float) and v - float(before[k]) >= step - 1e-9
    ))
