"""Benchmark harness for dlt-contract-ops: `python -m bench` (or `make bench`).

Builds a synthetic DuckDB warehouse through a real dlt source with generated Pydantic
models, then times the reconciler against the raw-SQL floor (the same queries issued
directly on a DuckDB connection) and, with `--peer`, against dlt-ops 0.1.0.
"""
