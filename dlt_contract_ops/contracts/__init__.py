"""Semantic contracts: declare what columns mean, snapshot releases, diff them, gate CI.

The core (`rules`, `model`, `diff`, `gate`, `canonical`, `waivers`, `extract`, `semantics`,
`render`, `ci`) is pure: no file or network I/O, no click. `store` reads and writes snapshot
files, `service` wires discovery to the core, `cli` is the `contract` command group.
"""

from dlt_contract_ops.contracts.diff import Change, diff_releases, diff_resources
from dlt_contract_ops.contracts.gate import Assessment, Finding, GateReport, Waiver, assess
from dlt_contract_ops.contracts.model import ColumnContract, Release, ResourceContract, Version
from dlt_contract_ops.contracts.rules import Bump, Perspective, Rule, Severity
from dlt_contract_ops.contracts.semantics import Semantics, TableSemantics

__all__ = [
    "Assessment",
    "Bump",
    "Change",
    "ColumnContract",
    "Finding",
    "GateReport",
    "Perspective",
    "Release",
    "ResourceContract",
    "Rule",
    "Semantics",
    "Severity",
    "TableSemantics",
    "Version",
    "Waiver",
    "assess",
    "diff_releases",
    "diff_resources",
]
