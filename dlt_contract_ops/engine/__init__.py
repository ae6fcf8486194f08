"""The run: the public entry points (`reconcile`), the sweep and each source's context
(`context`), one source's detectors (`detector_runs`), and `validate` (`validation`)."""
