"""dlt-contract-ops: find and report schema drift between dlt models and the warehouse."""

from dlt_contract_ops.core.removal import (
    DEFAULT_BASELINE_THRESHOLD,
    DEFAULT_BASELINE_WINDOW,
    DEFAULT_RECENT_THRESHOLD,
    DEFAULT_RECENT_WINDOW,
)
from dlt_contract_ops.destinations.base import DestinationAdapter
from dlt_contract_ops.findings import Coverage, DriftFinding, ReconcileResult
from dlt_contract_ops.reconcile import detect_removal, reconcile_all, reconcile_source
from dlt_contract_ops.sinks.base import AlertSink, ErrorEvent

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BASELINE_THRESHOLD",
    "DEFAULT_BASELINE_WINDOW",
    "DEFAULT_RECENT_THRESHOLD",
    "DEFAULT_RECENT_WINDOW",
    "AlertSink",
    "Coverage",
    "DestinationAdapter",
    "DriftFinding",
    "ErrorEvent",
    "ReconcileResult",
    "detect_removal",
    "reconcile_all",
    "reconcile_source",
]
