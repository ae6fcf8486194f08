"""Detector runners: the I/O side of each detector (queries through the adapter, findings,
emission), one module per detector, each `(DetectorRun) -> ReconcileResult`; `builtin` holds their
`Detector` values, registered through the `dlt_contract_ops.detectors` entry points. The
decisions themselves are the pure functions in `dlt_contract_ops.core`."""
