"""Load profiles: per-load metrics of each root table, kept in a local store.

`model` (the values), `query` (the profile and category queries), `store` (the local DuckDB
file), `sweep` (profile a source's new loads), `compare` (the pure distribution rule),
`service` (what the commands call).
"""
