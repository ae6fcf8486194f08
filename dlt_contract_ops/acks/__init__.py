"""acks: see docs/architecture.md."""
