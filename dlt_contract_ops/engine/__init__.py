"""The run: the public entry points (`reconcile`), the sweep that fills each source's input
(`context`), one source's detectors (`detector_runs`), `profile` (`profile_history`) and
`validate` (`validation`)."""
