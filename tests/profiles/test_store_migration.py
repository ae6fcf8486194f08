"""A profile store written by schema version 1, 2 or 3 is migrated in place, losing nothing."""

from __future__ import annotations

from pathlib import Path

import duckdb

from dlt_contract_ops.profiles.store import SCHEMA_VERSION, ProfileStore, Scope

V1 = (
    "CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    "INSERT INTO meta VALUES ('schema_version', '1')",
    "CREATE TABLE loads (destination VARCHAR, location VARCHAR, dataset VARCHAR, tbl VARCHAR,"
    " load_id VARCHAR, load_time DOUBLE, source VARCHAR, n_rows BIGINT,"
    " PRIMARY KEY (destination, location, dataset, tbl, load_id))",
    "CREATE TABLE columns (destination VARCHAR, location VARCHAR, dataset VARCHAR, tbl VARCHAR,"
    " load_id VARCHAR, col VARCHAR, non_null BIGINT, distinct_count BIGINT, min_value VARCHAR,"
    " max_value VARCHAR, has_categories BOOLEAN, complete BOOLEAN,"
    " PRIMARY KEY (destination, location, dataset, tbl, load_id, col))",
    "CREATE TABLE categories (destination VARCHAR, location VARCHAR, dataset VARCHAR,"
    " tbl VARCHAR, load_id VARCHAR, col VARCHAR, value VARCHAR, n BIGINT)",
    "INSERT INTO loads VALUES ('duckdb', 'w.duckdb', 'shop', 'orders', '1796000000.1',"
    " 1796000000.1, 'shop', 100)",
    "INSERT INTO columns VALUES ('duckdb', 'w.duckdb', 'shop', 'orders', '1796000000.1',"
    " 'status', 98, 3, NULL, NULL, TRUE, TRUE)",
    "INSERT INTO categories VALUES ('duckdb', 'w.duckdb', 'shop', 'orders', '1796000000.1',"
    " 'status', 'paid', 60)",
)


def test_a_version_1_store_is_migrated_and_keeps_its_profiles(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:
        for statement in V1:
            con.execute(statement)

    [profile] = ProfileStore(path).history(Scope("duckdb", "w.duckdb", "shop"), "orders")

    assert profile.detailed  # version 1 profiled every load in detail
    assert (profile.load_id, profile.rows) == ("1796000000.1", 100)
    status = profile.columns["status"]
    assert (status.non_null, status.distinct, status.categories) == (98, 3, {"paid": 60})
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("SELECT value FROM meta").fetchall() == [(SCHEMA_VERSION,)]
        assert con.execute("SELECT count(*) FROM totals").fetchall() == [(0,)]
    assert SCHEMA_VERSION == "4"


def test_a_version_2_store_gains_row_totals_and_keeps_its_profiles(tmp_path: Path) -> None:
    path = tmp_path / "v2.duckdb"
    with duckdb.connect(str(path)) as con:
        for statement in V1:
            con.execute(statement)
        con.execute("ALTER TABLE loads ADD COLUMN detailed BOOLEAN DEFAULT TRUE")
        con.execute("UPDATE loads SET detailed = FALSE")
        con.execute("UPDATE meta SET value = '2'")

    store = ProfileStore(path)
    stored = store.read(Scope("duckdb", "w.duckdb", "shop"), ["orders"])

    [profile] = stored.histories["orders"]
    assert (profile.load_id, profile.rows, profile.detailed) == ("1796000000.1", 100, False)
    assert stored.totals == {}  # never counted: the next sweep profiles the table afresh
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("SELECT value FROM meta").fetchall() == [("4",)]


def test_a_version_3_store_loses_the_columns_key_and_keeps_its_profiles(tmp_path: Path) -> None:
    path = tmp_path / "v3.duckdb"
    scope = Scope("duckdb", "w.duckdb", "shop")
    with duckdb.connect(str(path)) as con:
        for statement in V1:
            con.execute(statement)
        con.execute("ALTER TABLE loads ADD COLUMN detailed BOOLEAN DEFAULT TRUE")
        con.execute("CREATE TABLE totals (destination VARCHAR, location VARCHAR,"
                    " dataset VARCHAR, tbl VARCHAR, source VARCHAR, n_rows BIGINT,"
                    " PRIMARY KEY (destination, location, dataset, tbl))")
        con.execute("INSERT INTO totals VALUES ('duckdb', 'w.duckdb', 'shop', 'orders',"
                    " 'shop', 100)")
        con.execute("UPDATE meta SET value = '3'")

    stored = ProfileStore(path).read(scope, ["orders"])

    [profile] = stored.histories["orders"]
    status = profile.columns["status"]
    assert (profile.rows, status.non_null, status.categories) == (100, 98, {"paid": 60})
    assert stored.totals == {"orders": 100}
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("SELECT value FROM meta").fetchall() == [("4",)]
        keys = con.execute("SELECT table_name FROM duckdb_constraints()"
                           " WHERE constraint_type = 'PRIMARY KEY'").fetchall()
        assert ("columns",) not in keys
        assert ("loads",) in keys
        assert con.execute("SELECT count(*) FROM columns").fetchall() == [(1,)]
