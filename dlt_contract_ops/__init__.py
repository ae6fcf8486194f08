"""dlt-contract-ops: find and report schema drift between dlt models and the warehouse."""

from dlt_contract_ops.findings import Coverage, DriftFinding, ReconcileResult
from dlt_contract_ops.reconcile import reconcile_all, reconcile_source
from dlt_contract_ops.sinks.base import AlertSink, ErrorEvent

__version__ = "0.1.0"

__all__ = [
    "AlertSink",
    "Coverage",
    "DriftFinding",
    "ErrorEvent",
    "ReconcileResult",
    "reconcile_all",
    "reconcile_source",
]
