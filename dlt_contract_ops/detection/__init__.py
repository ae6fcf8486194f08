"""What a detector is and what it reads: the contract between the sweep and the detectors.

`detector` (`Detector`, the one runner signature, `DetectorRun`), `needs` (what a detector
declares it reads of the load profiles), `source_input` (the frozen `SourceInput` of one
source: everything a runner may read, filled by the sweep before the runners run, with
`SharedProfiles`, the slot of its load profiles that `profiles.shared` fills) and `rows`
(where a per-table query reads a child table's rows).

Below `detectors/` and `profiles/`, above `sources/`, `destinations/`, `sinks/` and
`settings/`: it imports no detector, no profile code and no engine.
"""
