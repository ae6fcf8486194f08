"""Detector runners: the I/O side of each detector (queries through the adapter, findings,
emission), one module per detector, registered in `dlt_contract_ops.detectors`. The
decisions themselves are the pure functions in `dlt_contract_ops.core`."""
