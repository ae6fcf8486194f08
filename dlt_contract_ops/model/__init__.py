"""The values: findings, results, a finding's one id and the ingest gate's report on a batch.
Frozen, JSON-serialisable, and importing nothing else of the package
(`tests/unit/test_layout.py`)."""
