"""`profile` answers every mistake and failure in one line: a wrong source, table or column
(with a did-you-mean) exits 2; a valid request the destination cannot answer (a missing
dataset, an unreachable server, a query past its lock timeout) exits 1 naming what failed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from dlt_contract_ops.commands import main
from dlt_contract_ops.commands.common import EXIT_SOURCE_ERROR, EXIT_USAGE
from tests.conftest import require_server
from tests.profiles.conftest import SOURCE, load
from tests.profiles.test_distribution_postgres import DSN, PG_HOST, PG_PORT, _drop
from tests.projects import Project


def _profile(project: Project, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["profile", *args, "--project-dir", str(project.root)])
    return result.exit_code, result.stdout, result.stderr


def _one_line(stderr: str, *needles: str) -> str:
    assert "Traceback" not in stderr
    [line] = stderr.splitlines()
    assert line.startswith("Error: ")
    for needle in needles:
        assert needle in line, line
    return line


@pytest.fixture
def loaded(shop: Project) -> Project:
    load(shop, {"batch": 0}, {"batch": 1})
    return shop


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("-s", "shpo"), ("Unknown source `shpo`", "Did you mean `shop`?")),
        (("-s", "shop", "--table", "ordrs"), ("table `ordrs`", "Did you mean `orders`?")),
        (("-s", "shop", "--table", "nosuch"), ("table `nosuch`", "orders")),
        (("-s", "shop", "--column", "stauts"), ("column `stauts`", "Did you mean `status`?")),
        (("-s", "shop", "--table", "orders", "--column", "nosuch"),
         ("column `nosuch`", "amount, code, id, note, region, status")),
    ],
)
def test_a_wrong_name_is_one_line_exit_2(
    loaded: Project, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    code, out, err = _profile(loaded, *args)
    assert (code, out) == (EXIT_USAGE, "")
    _one_line(err, *needles)


def test_rebuild_of_a_wrong_source_is_one_line_exit_2(shop: Project) -> None:
    result = CliRunner().invoke(main, ["profiles", "rebuild", "-s", "shpo", "--project-dir",
                                       str(shop.root)])
    assert result.exit_code == EXIT_USAGE
    _one_line(result.stderr, "Unknown source `shpo`", "Did you mean `shop`?")


def test_a_right_name_still_prints_the_history(loaded: Project) -> None:
    code, out, err = _profile(loaded, "-s", "shop", "--table", "orders", "--column", "status")
    assert code == 0, err
    assert "Table: orders  |  loads: 2" in out


def test_a_missing_dataset_is_one_line_exit_1(shop: Project) -> None:
    load(shop, {"batch": 0}, dataset="elsewhere")  # the database is there, the dataset not
    code, _, err = _profile(shop, "-s", "shop")
    assert code == EXIT_SOURCE_ERROR
    _one_line(err, "Dataset `shop_data`", "has no tables")


def test_a_missing_database_file_is_one_line_exit_1(shop: Project) -> None:
    code, _, err = _profile(shop, "-s", "shop")  # nothing was ever loaded
    assert code == EXIT_SOURCE_ERROR
    _one_line(err, "Cannot connect to destination `duckdb`", "shop_pipe.duckdb")


@pytest.fixture
def pg_project(project: Project) -> Iterator[tuple[Project, str]]:
    require_server(PG_HOST, PG_PORT, "PostgreSQL")
    dataset = f"co_profmsg_{uuid.uuid4().hex[:10]}"
    project.module("shop_mod", SOURCE)
    project.config('[contract_ops]\nalert_sinks = []\nlock_timeout = "1s"\n')
    project.secrets(f'[destination.postgres]\ncredentials = "{DSN}"\n')
    project.source("shop", "shop_mod:shop", pipeline_name="shop_pipe", destination="postgres",
                   dataset_name=dataset)
    try:
        yield project, dataset
    finally:
        _drop(dataset)


@pytest.mark.postgres
def test_an_unreachable_destination_is_one_line_exit_1(project: Project) -> None:
    project.module("shop_mod", SOURCE)
    project.config("[contract_ops]\nalert_sinks = []\n")
    # port 1 on the loopback: nothing listens, the connection is refused at once
    project.secrets(
        '[destination.postgres]\ncredentials = "postgresql://postgres:x@127.0.0.1:1/test"\n')
    project.source("shop", "shop_mod:shop", pipeline_name="shop_pipe", destination="postgres",
                   dataset_name="shop_data")
    code, _, err = _profile(project, "-s", "shop")
    assert code == EXIT_SOURCE_ERROR
    _one_line(err, "Cannot connect to destination `postgres`", "127.0.0.1")


@pytest.mark.postgres
def test_a_query_past_its_lock_timeout_is_one_line_exit_1_naming_the_table(
    pg_project: tuple[Project, str],
) -> None:
    import psycopg2

    project, dataset = pg_project
    load(project, {"batch": 0}, destination="postgres", dataset=dataset)
    blocker = psycopg2.connect(DSN)  # not autocommit: the lock lasts the transaction
    try:
        with blocker.cursor() as cur:
            cur.execute(f'LOCK TABLE "{dataset}"."orders" IN ACCESS EXCLUSIVE MODE')
        code, _, err = _profile(project, "-s", "shop")
    finally:
        blocker.rollback()
        blocker.close()
    assert code == EXIT_SOURCE_ERROR
    _one_line(err, "`orders`", "lock timeout")
