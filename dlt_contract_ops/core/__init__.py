"""Pure core: column specs and detectors. Imports no driver, no click, no network."""
