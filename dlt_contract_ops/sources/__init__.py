"""sources: see docs/architecture.md."""
