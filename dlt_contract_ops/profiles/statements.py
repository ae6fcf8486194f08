"""The profile store's statements (`profiles.store`): constants with bound parameters. The
store file is ours, so they are not routed through the destination renderer."""

from __future__ import annotations

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    "CREATE TABLE IF NOT EXISTS loads (destination VARCHAR, location VARCHAR, dataset VARCHAR,"
    " tbl VARCHAR, load_id VARCHAR, load_time DOUBLE, source VARCHAR, n_rows BIGINT,"
    " detailed BOOLEAN DEFAULT TRUE,"
    " PRIMARY KEY (destination, location, dataset, tbl, load_id))",
    "CREATE TABLE IF NOT EXISTS columns (destination VARCHAR, location VARCHAR,"
    " dataset VARCHAR, tbl VARCHAR, load_id VARCHAR, col VARCHAR, non_null BIGINT,"
    " distinct_count BIGINT, min_value VARCHAR, max_value VARCHAR, has_categories BOOLEAN,"
    " complete BOOLEAN, PRIMARY KEY (destination, location, dataset, tbl, load_id, col))",
    "CREATE TABLE IF NOT EXISTS categories (destination VARCHAR, location VARCHAR,"
    " dataset VARCHAR, tbl VARCHAR, load_id VARCHAR, col VARCHAR, value VARCHAR, n BIGINT)",
    "CREATE TABLE IF NOT EXISTS totals (destination VARCHAR, location VARCHAR,"
    " dataset VARCHAR, tbl VARCHAR, source VARCHAR, n_rows BIGINT,"
    " PRIMARY KEY (destination, location, dataset, tbl))",
)
#: older schema versions and the statements that bring a store from them to the next one
MIGRATIONS = {
    "1": ("ALTER TABLE loads ADD COLUMN detailed BOOLEAN DEFAULT TRUE",),  # v1 loads: detailed
    "2": (),  # `totals` (created above): a table without one is profiled afresh once
}
TABLES = ("categories", "columns", "loads")
KEY = ("destination", "location", "dataset", "tbl", "load_id")
#: each table's columns and types, in order: what a bulk insert reads from its NDJSON file
LAYOUT: dict[str, tuple[tuple[str, str], ...]] = {
    "loads": (*((k, "VARCHAR") for k in KEY), ("load_time", "DOUBLE"),
              ("source", "VARCHAR"), ("n_rows", "BIGINT"), ("detailed", "BOOLEAN")),
    "columns": (*((k, "VARCHAR") for k in KEY), ("col", "VARCHAR"), ("non_null", "BIGINT"),
                ("distinct_count", "BIGINT"), ("min_value", "VARCHAR"),
                ("max_value", "VARCHAR"), ("has_categories", "BOOLEAN"),
                ("complete", "BOOLEAN")),
    "categories": (*((k, "VARCHAR") for k in KEY), ("col", "VARCHAR"), ("value", "VARCHAR"),
                   ("n", "BIGINT")),
    "totals": (*((k, "VARCHAR") for k in KEY[:-1]), ("source", "VARCHAR"),
               ("n_rows", "BIGINT")),
}
#: replace the totals of the tables staged in `fresh_totals` (one statement)
DELETE_TOTALS = "DELETE FROM totals USING fresh_totals WHERE " + " AND ".join(  # noqa: S608
    f"totals.{k} = fresh_totals.{k}" for k in KEY[:-1])
#: per table: delete every row of the loads listed in a staged `doomed` table (one statement)
DELETE_LOADS = {
    name: f"DELETE FROM {name} USING doomed WHERE "  # noqa: S608 (constants only)
    + " AND ".join(f"{name}.{k} = doomed.{k}" for k in KEY)
    for name in TABLES
}
#: `ProfileStore.read`: the scope's three values, then the tables (a list), then for the
#: columns and categories the thin tables (a list) and the load id their loads come whole from
WHERE = "destination = ? AND location = ? AND dataset = ? AND list_contains(?, tbl)"
WHOLE = " AND (NOT list_contains(?, tbl) OR load_id >= ?)"
READ = {
    "totals": f"SELECT tbl, n_rows FROM totals WHERE {WHERE}",  # noqa: S608 (constants)
    "loads": f"SELECT tbl, load_id, n_rows, detailed FROM loads WHERE {WHERE}"  # noqa: S608
             " ORDER BY tbl, load_id",
    "columns": "SELECT tbl, load_id, col, non_null, distinct_count, min_value, max_value,"  # noqa: S608
               f" has_categories, complete FROM columns WHERE {WHERE}{WHOLE}",
    "categories": f"SELECT tbl, load_id, col, value, n FROM categories WHERE {WHERE}"  # noqa: S608
                  f"{WHOLE}",
    # `counts`: then the columns (a list) and the first and last load id
    "counts": f"SELECT tbl, load_id, col, non_null FROM columns WHERE {WHERE}"  # noqa: S608
              " AND list_contains(?, col) AND load_id >= ? AND load_id <= ?",
    # the thin tables' columns summed over their loads from one load id up to another
    "sums": "SELECT tbl, col, SUM(non_null), COUNT(*) FROM columns"  # noqa: S608
            f" WHERE {WHERE} AND load_id >= ? AND load_id < ? GROUP BY tbl, col",
}
DELETE_TABLE = {
    name: f"DELETE FROM {name} WHERE destination = ? AND location = ?"  # noqa: S608 (constants)
    " AND dataset = ? AND tbl = ?"
    for name in TABLES
}
