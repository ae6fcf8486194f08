"""Alert sinks: where findings and reconciler errors are routed."""

from dlt_contract_ops.sinks.base import AlertSink, ErrorEvent

__all__ = ["AlertSink", "ErrorEvent"]
