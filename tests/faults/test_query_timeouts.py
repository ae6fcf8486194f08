"""Hangs: a query blocked by another session's lock, or simply slow, ends in a
`QueryTimeoutError` that names the table, within a few times the configured timeout, on real
PostgreSQL, MariaDB, DuckDB and SQLite. The session stays usable afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from dlt_contract_ops.errors import QueryTimeoutError
from tests.destinations.servers import (
    Backend,
    adapter_for,
    count_rows,
    locked,
    make,
    slow_select,
    two_table_dataset,
)


@pytest.fixture
def dataset(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Backend, str]]:
    """A dataset with tables `orders` and `items` on the backend the parameter names."""
    backend = make(request.param, tmp_path)
    with two_table_dataset(backend) as name:
        yield backend, name


def _timed_out(adapter: Any, query: exp.Expression, kind: str = "coverage"
               ) -> QueryTimeoutError:
    """The error the query ends in; which timeout fired is in its `reason` (the outcome
    the tests assert, not the clock)."""
    with pytest.raises(QueryTimeoutError) as info:
        adapter.run(query, [], kind)
    return info.value


@pytest.mark.parametrize("dataset", ["postgres", "mariadb", "sqla_postgres"], indirect=True)
def test_a_lock_held_elsewhere_ends_in_a_lock_timeout_naming_the_table(
    dataset: tuple[Backend, str],
) -> None:
    backend, name = dataset
    with adapter_for(backend, name, query_timeout=120, lock_timeout=1) as adapter:
        assert adapter.run(count_rows(adapter), [], "coverage") == [(1,)]  # session open
        with locked(backend, name, "orders"):
            error = _timed_out(adapter, count_rows(adapter))
        assert error.reason == "lock timeout"
        assert error.table == "orders"
        message = str(error)
        assert message.startswith("coverage query on table `orders`")
        assert f"dataset `{name}`" in message
        assert "another session holds a lock on it" in message
        assert "`[contract_ops] lock_timeout`" in message
        # the session goes on: the next query runs once the lock is gone
        assert adapter.run(count_rows(adapter), [], "coverage") == [(1,)]


@pytest.mark.parametrize("dataset", ["postgres", "mariadb", "sqla_postgres"], indirect=True)
def test_waiting_on_a_lock_is_bounded_by_query_timeout_too(
    dataset: tuple[Backend, str],
) -> None:
    backend, name = dataset
    with adapter_for(backend, name, query_timeout=1, lock_timeout=120) as adapter:
        adapter.list_columns()
        with locked(backend, name, "orders"):
            error = _timed_out(adapter, count_rows(adapter), "sample")
        assert (error.reason, error.table) == ("statement timeout", "orders")
        assert str(error).startswith("sample query on table `orders`")
        assert "did not finish within 1s (statement timeout)" in str(error)
        assert "raise `[contract_ops] query_timeout` or find the blocker" in str(error)


@pytest.mark.parametrize(
    "dataset", ["postgres", "mariadb", "duckdb", "sqlite", "sqla_postgres"], indirect=True
)
def test_a_slow_select_is_bounded_by_query_timeout(dataset: tuple[Backend, str]) -> None:
    backend, name = dataset
    with adapter_for(backend, name, query_timeout=1) as adapter:
        adapter.list_columns()
        error = _timed_out(adapter, slow_select(backend, adapter))
        assert (error.reason, error.table, error.seconds) == ("statement timeout", "orders", 1)
        assert str(error).startswith("coverage query on table `orders`")
        assert adapter.run(count_rows(adapter), [], "coverage") == [(1,)]


def test_postgres_timeouts_survive_the_reset_after_a_failed_query(tmp_path: Path) -> None:
    """dlt's client runs RESET ALL after a failed query: startup options stay in force."""
    backend = make("postgres", tmp_path)
    setting = exp.select(
        *(exp.func("current_setting", exp.Literal.string(s))
          for s in ("statement_timeout", "lock_timeout", "default_transaction_read_only"))
    )
    with adapter_for(backend, "public", query_timeout=2.5, lock_timeout=0.25) as adapter:
        assert adapter.run(setting, [], "metadata") == [("2500ms", "250ms", "on")]
        with pytest.raises(QueryTimeoutError):
            adapter.run(exp.select(exp.func("pg_sleep", exp.Literal.number(600))), [], "sample")
        assert adapter.run(setting, [], "metadata") == [("2500ms", "250ms", "on")]


def test_mariadb_sessions_carry_the_timeouts(tmp_path: Path) -> None:
    backend = make("mariadb", tmp_path)
    variables = sqlglot.parse_one(
        "SELECT @@SESSION.max_statement_time, @@SESSION.lock_wait_timeout, "
        "@@SESSION.innodb_lock_wait_timeout, @@SESSION.tx_read_only",
        read="mysql",
    )
    with adapter_for(backend, "test", query_timeout=2.5, lock_timeout=1.5) as adapter:
        [(statement, lock, innodb, read_only)] = adapter.run(variables, [], "metadata")
    assert (float(statement), int(lock), int(innodb), int(read_only)) == (2.5, 2, 2, 1)


@pytest.mark.parametrize("dataset", ["postgres"], indirect=True)
def test_pool_sessions_time_out_per_query(dataset: tuple[Backend, str]) -> None:
    """Each coverage query of a pooled batch gets its own timeout error, naming its table;
    the batch's other queries still answer."""
    backend, name = dataset
    with adapter_for(backend, name, query_timeout=120, lock_timeout=1) as adapter:
        adapter.list_columns()
        batch = [(count_rows(adapter, "orders"), []), (count_rows(adapter, "items"), []),
                 (exp.select(exp.Literal.number(1)), [])]
        with locked(backend, name, "orders", "items"):
            outcomes = adapter.run_all(batch, "coverage")
    assert adapter.pool_sessions == 3
    assert outcomes[2] == [(1,)]
    for outcome, table in zip(outcomes[:2], ("orders", "items"), strict=True):
        assert isinstance(outcome, QueryTimeoutError)
        assert (outcome.reason, outcome.table) == ("lock timeout", table)
        assert str(outcome).startswith(f"coverage query on table `{table}`")


@pytest.mark.parametrize("dataset", ["sqlite"], indirect=True)
def test_sqlite_waits_for_a_lock_at_most_lock_timeout(dataset: tuple[Backend, str]) -> None:
    """SQLite's busy timeout is the lock timeout. dlt keeps datasets in WAL mode, where a
    reader never waits for a writer, so this pins the setting rather than provoking a wait."""
    backend, name = dataset
    with adapter_for(backend, name, lock_timeout=1.5) as adapter:
        adapter.list_columns()
        # the test reads the setting through dlt's client, past the renderer (PRAGMA)
        assert adapter.sql_client.execute_sql("PRAGMA busy_timeout") == [(1500,)]


@pytest.mark.parametrize("dataset", ["duckdb", "sqlite"], indirect=True)
def test_a_batch_keeps_every_outcome_in_order_around_a_refused_and_a_slow_query(
    dataset: tuple[Backend, str],
) -> None:
    """The base `run_all` renders each query while the one before it runs: a query the
    renderer refuses, and one that runs out of time, each end in their own error, in their
    place, and the queries after them still answer (the stop of the slow one reaches no other
    query)."""
    from dlt_contract_ops.errors import UnsafeQueryError

    backend, name = dataset
    with adapter_for(backend, name, query_timeout=1) as adapter:
        adapter.list_columns()
        batch = [
            (count_rows(adapter, "orders"), []),
            (exp.delete(adapter.table("orders")), []),
            (slow_select(backend, adapter), []),
            (count_rows(adapter, "items"), []),
            (count_rows(adapter, "orders"), []),
        ]
        before = adapter.queries["coverage"]
        outcomes = adapter.run_all(batch, "coverage")
    assert [type(o).__name__ for o in outcomes] == [
        "list", "UnsafeQueryError", "QueryTimeoutError", "list", "list"]
    assert isinstance(outcomes[1], UnsafeQueryError)
    assert isinstance(outcomes[2], QueryTimeoutError)
    assert (outcomes[2].reason, outcomes[2].table) == ("statement timeout", "orders")
    assert outcomes[0] == outcomes[3] == outcomes[4] == [(1,)]
    assert adapter.queries["coverage"] - before == 4  # the refused one never reached it
