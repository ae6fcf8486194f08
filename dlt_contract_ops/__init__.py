"""dlt-contract-ops: find and report schema drift between dlt models and the warehouse.

The public names resolve on first use (PEP 562), so `import dlt_contract_ops` and
`dlt-contract-ops --help` load neither pydantic, sqlglot, dlt nor any database driver; those
arrive with the first attribute that needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt_contract_ops.contracts.semantics import Semantics, TableSemantics
    from dlt_contract_ops.core.ingest import GatePolicy
    from dlt_contract_ops.core.removal import (
        DEFAULT_BASELINE_THRESHOLD,
        DEFAULT_BASELINE_WINDOW,
        DEFAULT_RECENT_THRESHOLD,
        DEFAULT_RECENT_WINDOW,
    )
    from dlt_contract_ops.destinations.base import DestinationAdapter
    from dlt_contract_ops.detection.detector import Detector, DetectorRun
    from dlt_contract_ops.engine.reconcile import detect_removal, reconcile_all, reconcile_source
    from dlt_contract_ops.errors import GateBusyError, GateRejected
    from dlt_contract_ops.ingest.run import gated_run
    from dlt_contract_ops.model.findings import Coverage, DriftFinding, ReconcileResult
    from dlt_contract_ops.model.gate import GateReport
    from dlt_contract_ops.settings.detectors import Duration
    from dlt_contract_ops.sinks.base import AlertSink, ErrorEvent

from dlt_contract_ops.version import __version__ as __version__  # re-export

__all__ = [
    "DEFAULT_BASELINE_THRESHOLD",
    "DEFAULT_BASELINE_WINDOW",
    "DEFAULT_RECENT_THRESHOLD",
    "DEFAULT_RECENT_WINDOW",
    "AlertSink",
    "Coverage",
    "DestinationAdapter",
    "Detector",
    "DetectorRun",
    "DriftFinding",
    "Duration",
    "ErrorEvent",
    "GateBusyError",
    "GatePolicy",
    "GateRejected",
    "GateReport",
    "ReconcileResult",
    "Semantics",
    "TableSemantics",
    "detect_removal",
    "gated_run",
    "reconcile_all",
    "reconcile_source",
]

#: public name -> the module that defines it; imported when the name is first read
_LAZY: dict[str, str] = {
    "DEFAULT_BASELINE_THRESHOLD": "dlt_contract_ops.core.removal",
    "DEFAULT_BASELINE_WINDOW": "dlt_contract_ops.core.removal",
    "DEFAULT_RECENT_THRESHOLD": "dlt_contract_ops.core.removal",
    "DEFAULT_RECENT_WINDOW": "dlt_contract_ops.core.removal",
    "AlertSink": "dlt_contract_ops.sinks.base",
    "Coverage": "dlt_contract_ops.model.findings",
    "DestinationAdapter": "dlt_contract_ops.destinations.base",
    "Detector": "dlt_contract_ops.detection.detector",
    "DetectorRun": "dlt_contract_ops.detection.detector",
    "Duration": "dlt_contract_ops.settings.detectors",
    "DriftFinding": "dlt_contract_ops.model.findings",
    "ErrorEvent": "dlt_contract_ops.sinks.base",
    "GateBusyError": "dlt_contract_ops.errors",
    "GatePolicy": "dlt_contract_ops.core.ingest",
    "GateRejected": "dlt_contract_ops.errors",
    "GateReport": "dlt_contract_ops.model.gate",
    "gated_run": "dlt_contract_ops.ingest.run",
    "ReconcileResult": "dlt_contract_ops.model.findings",
    "Semantics": "dlt_contract_ops.contracts.semantics",
    "TableSemantics": "dlt_contract_ops.contracts.semantics",
    "detect_removal": "dlt_contract_ops.engine.reconcile",
    "reconcile_all": "dlt_contract_ops.engine.reconcile",
    "reconcile_source": "dlt_contract_ops.engine.reconcile",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later reads skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
