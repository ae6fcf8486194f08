"""Detectors: one module per detector (its runner, `(DetectorRun) -> ReconcileResult`, the I/O
side: queries through the adapter, findings), the registry that validates each entry as it
registers (`registry`), each detector's own settings (`settings`),
the shared sqlglot builders (`queries`) and the built-ins' `Detector` values (`builtin`),
registered through the entry points like a third-party detector. What a detector is and what
it reads (`Detector`, `DetectorRun`, `SourceInput`) is `detection/`, below; the decisions
themselves are the pure functions in `core/`."""
