"""Cancellation: Ctrl-C while a query waits stops the wait at once and cancels the query on the
server, so no backend stays queued behind a lock; `adapter.cancel()` does the same from any
thread. On real PostgreSQL (in a subprocess, with a real SIGINT), MariaDB, DuckDB and SQLite."""

from __future__ import annotations

import _thread
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dlt_contract_ops.errors import DestinationError
from tests.destinations.servers import (
    PG_URL,
    Backend,
    adapter_for,
    count_rows,
    locked,
    make,
    slow_select,
    two_table_dataset,
)

#: attempts (0.1 s apart) before a poll of the server gives up: a guard against hanging,
#: not a performance bound
ATTEMPTS = 600

#: the reconciler's adapter in a process of its own, blocked on a locked table until SIGINT
SCRIPT = textwrap.dedent("""
    import os, signal, sys
    # what an interactive shell gives a CLI; a test runner may start us with SIGINT ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from dlt.common.schema import Schema
    from sqlglot import exp
    from dlt_contract_ops.destinations.connect import open_adapter, resolve_target

    dataset, mode = sys.argv[1], sys.argv[2]
    target = resolve_target("t", "cancel_pipe", "postgres", dataset, os.getcwd())
    adapter = open_adapter(target, Schema("t"), query_timeout=600, lock_timeout=600)

    def count(table):
        return exp.select(exp.func("count", exp.Star())).from_(adapter.table(table))

    try:
        if mode == "run":
            adapter.run(count("orders"), [], "coverage")
        else:
            adapter.run_all([(count("orders"), []), (count("items"), [])], "coverage")
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.stdin.readline()  # stay connected: the test looks at the server, not a hang-up
        adapter.close()
        sys.exit(130)
    print("the query finished", flush=True)
    sys.exit(1)
""")


@pytest.fixture
def dataset(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Backend, str]]:
    """A dataset with tables `orders` and `items` on the backend the parameter names."""
    backend = make(request.param, tmp_path)
    with two_table_dataset(backend) as name:
        yield backend, name


def poll(what: str, check: Callable[[], bool]) -> None:
    for _ in range(ATTEMPTS):
        if check():
            return
        time.sleep(0.1)
    pytest.fail(f"gave up waiting: {what}")


def pg_backends(app: str) -> list[tuple[str, str | None]]:
    """(state, wait_event_type) of every PostgreSQL backend of application `app`."""
    import psycopg2

    con = psycopg2.connect(PG_URL)
    try:
        with con.cursor() as cur:
            cur.execute("SELECT state, wait_event_type FROM pg_stat_activity "
                        "WHERE application_name = %s", (app,))
            return list(cur.fetchall())
    finally:
        con.close()


def _lines(stream: Any) -> queue.Queue[str]:
    out: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [out.put(line) for line in stream], daemon=True).start()
    return out


@pytest.fixture
def child_env(tmp_path: Path) -> tuple[dict[str, str], str]:
    """Environment for the script: credentials tagged with a unique application name."""
    app = f"co_cancel_{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DESTINATION__POSTGRES__CREDENTIALS": f"{PG_URL}?application_name={app}",
        "RUNTIME__DLTHUB_TELEMETRY": "false",
        "DLT_DATA_DIR": str(tmp_path / "child_dlt"),
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]),
                                       os.environ.get("PYTHONPATH", "")]),
    }
    return env, app


@pytest.mark.parametrize("mode", ["run", "run_all"])
@pytest.mark.parametrize("dataset", ["postgres"], indirect=True)
def test_sigint_cancels_the_postgres_backend_waiting_on_a_lock(
    dataset: tuple[Backend, str], child_env: tuple[dict[str, str], str], mode: str,
    tmp_path: Path,
) -> None:
    backend, name = dataset
    env, app = child_env
    waiting = 1 if mode == "run" else 2  # run_all: one pool session per table
    with locked(backend, name, "orders", "items"):
        child = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, name, mode], env=env, cwd=tmp_path,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )
        try:
            out = _lines(child.stdout)
            poll(f"{waiting} backend(s) of the child waiting on the lock",
                 lambda: sum(w == "Lock" for _, w in pg_backends(app)) == waiting
                 or child.poll() is not None)
            assert child.poll() is None, child.communicate()[1]

            child.send_signal(signal.SIGINT)

            assert out.get(timeout=ATTEMPTS * 0.1) == "KeyboardInterrupt\n"
            # the child is still connected and the lock still held: only a server-side
            # cancel can have taken its query out of the lock queue
            poll("no backend of the child waiting on the lock",
                 lambda: not any(w == "Lock" for _, w in pg_backends(app)))
            if mode == "run":
                assert pg_backends(app) == [("idle", "Client")]
            child.stdin.write("\n")  # type: ignore[union-attr]
            child.stdin.flush()  # type: ignore[union-attr]
            assert child.wait(timeout=ATTEMPTS * 0.1) == 130, child.communicate()[1]
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()


def mariadb_waiting(dataset: str) -> list[int]:
    """Ids of MariaDB sessions whose statement on `dataset` waits for a table lock."""
    import pymysql

    con = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="",
                          ssl_disabled=True)
    try:
        with con.cursor() as cur:
            cur.execute("SELECT ID FROM information_schema.PROCESSLIST "
                        "WHERE STATE LIKE %s AND INFO LIKE %s",
                        ("%lock%", f"%{dataset}%"))
            return [int(r[0]) for r in cur.fetchall()]
    finally:
        con.close()


@pytest.mark.parametrize("dataset", ["mariadb"], indirect=True)
def test_ctrl_c_kills_the_mariadb_query_waiting_on_a_lock(dataset: tuple[Backend, str]) -> None:
    """A KeyboardInterrupt raised in the waiting thread (as SIGINT does) cancels the query
    with `KILL QUERY` from a second connection."""
    backend, name = dataset
    seen: list[list[int]] = []

    def interrupt_once_waiting() -> None:
        for _ in range(ATTEMPTS):
            ids = mariadb_waiting(name)
            if ids:
                seen.append(ids)
                break
            time.sleep(0.1)
        _thread.interrupt_main(signal.SIGINT)  # also when never seen: the test must end

    with adapter_for(backend, name, query_timeout=600, lock_timeout=600) as adapter:
        adapter.list_columns()
        with locked(backend, name, "orders"):
            threading.Thread(target=interrupt_once_waiting, daemon=True).start()
            with pytest.raises(KeyboardInterrupt):
                adapter.run(count_rows(adapter), [], "coverage")
            assert seen, "the query never waited on the lock"
            # the lock is still held: the query left the queue because it was killed
            poll("the killed query gone from the lock queue", lambda: not mariadb_waiting(name))
        with pytest.raises(DestinationError, match="was cancelled"):
            adapter.run(count_rows(adapter), [], "coverage")


@pytest.mark.parametrize(
    "dataset", ["postgres", "mariadb", "duckdb", "sqlite", "sqla_postgres"], indirect=True
)
def test_cancel_from_another_thread_stops_the_running_query(
    dataset: tuple[Backend, str],
) -> None:
    """`adapter.cancel()` is thread-safe: the running query stops with an error that says it
    was cancelled (not a timeout), and the adapter refuses later queries."""
    backend, name = dataset
    with adapter_for(backend, name, query_timeout=600, lock_timeout=600) as adapter:
        adapter.list_columns()  # the session is open: the timer cancels a running query
        timer = threading.Timer(0.5, adapter.cancel)
        timer.start()
        try:
            with pytest.raises(DestinationError, match="cancelled") as info:
                adapter.run(slow_select(backend, adapter), [], "coverage")
        finally:
            timer.cancel()
        assert type(info.value) is DestinationError  # not a QueryTimeoutError
        with pytest.raises(DestinationError, match="was cancelled"):
            adapter.run(count_rows(adapter), [], "coverage")


@pytest.mark.parametrize("dataset", ["duckdb", "sqlite"], indirect=True)
def test_ctrl_c_interrupts_an_embedded_database(dataset: tuple[Backend, str]) -> None:
    backend, name = dataset
    with adapter_for(backend, name, query_timeout=600) as adapter:
        adapter.list_columns()
        timer = threading.Timer(0.5, _thread.interrupt_main, (signal.SIGINT,))
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                adapter.run(slow_select(backend, adapter), [], "coverage")
        finally:
            timer.cancel()
    # closed cleanly: the interrupted query came back, nothing holds the file
    if backend.kind == "duckdb":
        assert backend.execute(name, ["SELECT 1"]) == [[(1,)]]
