"""The profile store's file is attached to the process's in-memory DuckDB for each session
(`profiles.attach`): released after every session (another process opens it at once), even
when a session left a transaction open, and a forked child gets a database of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile
from dlt_contract_ops.profiles import attach
from dlt_contract_ops.profiles.attach import attached
from dlt_contract_ops.profiles.store import ProfileStore, Scope, TableUpdate

SCOPE = Scope("duckdb", "w.duckdb", "shop")


def _update(load_id: str) -> TableUpdate:
    profile = LoadProfile(load_id, 100, {"amount": ColumnProfile("amount", 98, 7, "1", "9")})
    return TableUpdate("orders", [profile], total=100)


def _loads_seen_by_another_process(path: Path) -> list[str]:
    """The store's load ids, read by a new process opening the file read-write (it cannot
    while any process still has the file open)."""
    code = ("import duckdb, sys\n"
            "with duckdb.connect(sys.argv[1]) as con:\n"
            "    print(*[r[0] for r in con.execute("
            "'SELECT load_id FROM loads ORDER BY load_id').fetchall()])\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_file_is_released_after_each_session(tmp_path: Path) -> None:
    path = tmp_path / "profiles.duckdb"
    store = ProfileStore(path)
    store.write(SCOPE, "shop", [_update("1796000000.1")])
    assert _loads_seen_by_another_process(path) == ["1796000000.1"]

    store.write(SCOPE, "shop", [_update("1796000001.1")])
    assert [p.load_id for p in store.history(SCOPE, "orders")] == [
        "1796000000.1", "1796000001.1"]
    assert _loads_seen_by_another_process(path) == ["1796000000.1", "1796000001.1"]
    assert not path.with_name(path.name + ".wal").exists()  # checkpointed when detached


def test_a_session_that_leaves_a_transaction_open_still_releases_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "profiles.duckdb"
    store = ProfileStore(path)
    store.write(SCOPE, "shop", [_update("1796000000.1")])

    def half_done(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("BEGIN TRANSACTION")
        con.execute("DELETE FROM loads")

    store._session(half_done)

    assert _loads_seen_by_another_process(path) == ["1796000000.1"]  # rolled back, closed
    store.write(SCOPE, "shop", [_update("1796000001.1")])  # and this process opens it again
    assert len(store.history(SCOPE, "orders")) == 2


def test_every_session_attaches_to_one_in_memory_database(tmp_path: Path) -> None:
    """Seen from inside DuckDB: a table left in the in-memory database by one session is
    there in every later session, whichever file it attaches; a database opened per file
    (`duckdb.connect(path)`, ~20 ms of CPU each) has no such table."""
    with attached(tmp_path / "first.duckdb") as con:
        con.execute("CREATE OR REPLACE TABLE memory.main.witness AS SELECT 42 AS answer")
    stores = [ProfileStore(tmp_path / f"p{i}.duckdb") for i in range(3)]
    for i, store in enumerate(stores):
        store.write(SCOPE, "shop", [_update(f"179600000{i}.1")])
        assert len(store.history(SCOPE, "orders")) == 1
    # six sessions on three files later, the same in-memory database
    with attached(tmp_path / "last.duckdb") as con:
        assert con.execute("SELECT answer FROM memory.main.witness").fetchall() == [(42,)]
        con.execute("DROP TABLE memory.main.witness")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_a_forked_child_uses_a_database_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "profiles.duckdb"
    store = ProfileStore(path)
    store.write(SCOPE, "shop", [_update("1796000000.1")])  # the parent's database exists

    pid = os.fork()
    if pid == 0:  # the child: writes through its own in-memory database, then exits hard
        code = 1
        try:
            ProfileStore(path).write(SCOPE, "shop", [_update("1796000001.1")])
            code = 0 if attach._host is not None and attach._host[0] == os.getpid() else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)

    assert os.waitstatus_to_exitcode(status) == 0
    assert [p.load_id for p in store.history(SCOPE, "orders")] == [
        "1796000000.1", "1796000001.1"]
