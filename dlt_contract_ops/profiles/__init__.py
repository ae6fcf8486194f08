"""Load profiles: per-load metrics of each root table, kept in a local store.

`model` (the values), `query` (the profile and category queries), `store` (the local DuckDB
file), `sweep` (profile a source's new loads), `shared` (a source's profiles once a run, for
every detector that declared a need: `SourceProfiles`, `shared_profiles`), `service` (what
`profiles rebuild` calls, the rows `profile` shows).
"""
