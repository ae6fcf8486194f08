"""Semantic contracts: declare what columns mean, snapshot releases, diff them, check them in CI.

The core (`rules`, `model`, `change`, `diff`, `release`, `canonical`, `waivers`, `extract`,
`annotations`, `declarations`, `semantics`, `units`, `timezones`, `constraints`, `lint`,
`verify`, `odcs`, `odcs_types`, `odcs_read`) is pure: no file or network I/O, no click.
`store` reads and writes snapshot and export files, `verify_queries` builds the verification
queries, `service` wires discovery to the core, `export` builds ODCS documents; the reports
are rendered in `output/contract*.py` and `commands/contract.py` is the `contract` group
(tests/unit/test_layout.py holds each module to its layer).

Names are exported lazily so that `dlt-contract-ops --help`, which imports `commands.contract`,
loads nothing of the feature but its click layer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt_contract_ops.contracts.change import Change
    from dlt_contract_ops.contracts.diff import diff_releases, diff_resources
    from dlt_contract_ops.contracts.model import (
        ColumnContract,
        Release,
        ResourceContract,
        Version,
    )
    from dlt_contract_ops.contracts.release import (
        Assessment,
        Finding,
        ReleaseReport,
        Waiver,
        assess,
    )
    from dlt_contract_ops.contracts.rules import Bump, Perspective, Rule, Severity
    from dlt_contract_ops.contracts.semantics import Semantics, TableSemantics

_EXPORTS = {
    "Assessment": "release",
    "Bump": "rules",
    "Change": "change",
    "ColumnContract": "model",
    "Finding": "release",
    "Perspective": "rules",
    "Release": "model",
    "ReleaseReport": "release",
    "ResourceContract": "model",
    "Rule": "rules",
    "Semantics": "semantics",
    "Severity": "rules",
    "TableSemantics": "semantics",
    "Version": "model",
    "Waiver": "release",
    "assess": "release",
    "diff_releases": "diff",
    "diff_resources": "diff",
}

__all__ = [
    "Assessment",
    "Bump",
    "Change",
    "ColumnContract",
    "Finding",
    "Perspective",
    "Release",
    "ReleaseReport",
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


#: names 0.1.0 exported under another name: still importable, with a DeprecationWarning
_RENAMED = {"GateReport": "ReleaseReport"}  # "gate" now means the ingest gate only


def __getattr__(name: str) -> Any:
    if name in _RENAMED:
        import warnings

        warnings.warn(f"`{__name__}.{name}` is now `{_RENAMED[name]}`", DeprecationWarning,
                      stacklevel=2)
        return __getattr__(_RENAMED[name])
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
