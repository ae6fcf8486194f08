"""The profile store's statements (`profiles.store`): constants with bound parameters. The
store file is ours, so they are not routed through the destination renderer."""

from __future__ import annotations

from collections.abc import Iterable

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    "CREATE TABLE IF NOT EXISTS loads (destination VARCHAR, location VARCHAR, dataset VARCHAR,"
    " tbl VARCHAR, load_id VARCHAR, load_time DOUBLE, source VARCHAR, n_rows BIGINT,"
    " detailed BOOLEAN DEFAULT TRUE,"
    " PRIMARY KEY (destination, location, dataset, tbl, load_id))",
    "CREATE TABLE IF NOT EXISTS columns (destination VARCHAR, location VARCHAR,"
    " dataset VARCHAR, tbl VARCHAR, load_id VARCHAR, col VARCHAR, non_null BIGINT,"
    " distinct_count BIGINT, min_value VARCHAR, max_value VARCHAR, has_categories BOOLEAN,"
    " complete BOOLEAN)",
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
    # v3 `columns` had a primary key: its index cost the first sweep of an hourly table more
    # than writing the rows (each write deletes a load's rows before it inserts them)
    "3": ("CREATE TABLE columns_v4 AS SELECT * FROM columns",
          "DROP TABLE columns",
          "ALTER TABLE columns_v4 RENAME TO columns"),
}
TABLES = ("categories", "columns", "loads")
KEY = ("destination", "location", "dataset", "tbl", "load_id")
#: the staged totals' columns and types, in order (`fresh_totals`)
TOTALS: tuple[tuple[str, str], ...] = (*((k, "VARCHAR") for k in KEY[:-1]),
                                       ("source", "VARCHAR"), ("n_rows", "BIGINT"))
#: `ProfileStore.write`'s new loads, staged one record per load (`profiles.staging`): the
#: load's own values, then its columns' values as parallel lists (`col`...) and its
#: categories' (`cat_*`); each store table is filled from it by one INSERT
STAGED_LOADS: tuple[tuple[str, str], ...] = (
    ("tbl", "VARCHAR"), ("load_id", "VARCHAR"), ("load_time", "DOUBLE"), ("n_rows", "BIGINT"),
    ("detailed", "BOOLEAN"), ("col", "VARCHAR[]"), ("non_null", "BIGINT[]"),
    ("distinct_count", "BIGINT[]"), ("min_value", "VARCHAR[]"), ("max_value", "VARCHAR[]"),
    ("has_categories", "BOOLEAN[]"), ("complete", "BOOLEAN[]"), ("cat_col", "VARCHAR[]"),
    ("cat_value", "VARCHAR[]"), ("cat_n", "BIGINT[]"),
)
#: per store table: its rows from the staged loads (parameters: destination, location,
#: dataset, then for `loads` the source). Parallel lists unnest side by side; a list left
#: out (NULL) unnests as NULLs beside the others.
FROM_STAGED = {
    "loads": "INSERT INTO loads (destination, location, dataset, tbl, load_id, load_time,"
             " source, n_rows, detailed) SELECT ?, ?, ?, tbl, load_id, load_time, ?, n_rows,"
             " detailed FROM staged_loads",
    "columns": "INSERT INTO columns (destination, location, dataset, tbl, load_id, col,"
               " non_null, distinct_count, min_value, max_value, has_categories, complete)"
               " SELECT ?, ?, ?, tbl, load_id, unnest(col), unnest(non_null),"
               " unnest(distinct_count), unnest(min_value), unnest(max_value),"
               " unnest(has_categories), unnest(complete) FROM staged_loads",
    "categories": "INSERT INTO categories (destination, location, dataset, tbl, load_id, col,"
                  " value, n) SELECT ?, ?, ?, tbl, load_id, unnest(cat_col),"
                  " unnest(cat_value), unnest(cat_n) FROM staged_loads"
                  " WHERE cat_col IS NOT NULL",
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
#: a list of names bound as ONE parameter, its JSON text (`names`): DuckDB's Python client
#: converts a bound list element by element, and with pandas not installed each element
#: tries to import it (0.1 s for 2,000 table names)
NAMES = "from_json(?, '[\"VARCHAR\"]')"
WHERE = f"destination = ? AND location = ? AND dataset = ? AND list_contains({NAMES}, tbl)"
WHOLE = f" AND (NOT list_contains({NAMES}, tbl) OR load_id >= ?)"
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
              f" AND list_contains({NAMES}, col) AND load_id >= ? AND load_id <= ?",
    # the thin tables' columns summed over their loads from one load id up to another
    "sums": "SELECT tbl, col, SUM(non_null), COUNT(*) FROM columns"  # noqa: S608
            f" WHERE {WHERE} AND load_id >= ? AND load_id < ? GROUP BY tbl, col",
}
#: per store table: delete every row of the tables staged in `afresh` (one statement)
DELETE_TABLES = {
    name: f"DELETE FROM {name} USING afresh WHERE "  # noqa: S608 (constants only)
    + " AND ".join(f"{name}.{k} = afresh.{k}" for k in KEY[:-1])
    for name in TABLES
}


def names(values: Iterable[str]) -> str:
    """`values` (names) as the one parameter `NAMES` reads.

    >>> names(("orders", "items"))
    '["orders", "items"]'
    """
    import json

    return json.dumps(list(values))
