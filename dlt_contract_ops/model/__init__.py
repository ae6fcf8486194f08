"""The values: findings, results and a finding's one id. Frozen, JSON-serialisable, and
importing nothing else of the package (`tests/unit/test_layout.py`)."""
