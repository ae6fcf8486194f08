"""The ingest gate: reject a breaking batch before any trusted row changes."""
