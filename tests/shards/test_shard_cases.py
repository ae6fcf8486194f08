"""The shard assignment (`core.shard`) as case tables: pure, stable across processes and
versions, child tables with their root, every pair in exactly one shard."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest

from dlt_contract_ops.core.columns import ExpectedTable
from dlt_contract_ops.core.shard import Shard, shard_of


@pytest.mark.parametrize(("text", "shard"), [
    ("1/1", Shard(1, 1)),
    ("2/3", Shard(2, 3)),
    ("3/3", Shard(3, 3)),
    (" 7 / 7 ", Shard(7, 7)),
    ("12/40", Shard(12, 40)),
])
def test_parses_i_of_n(text: str, shard: Shard) -> None:
    assert Shard.parse(text) == shard
    assert Shard.parse(str(shard)) == shard


@pytest.mark.parametrize(("text", "says"), [
    ("0/3", "`0/3` does not exist"),
    ("4/3", "`4/3` does not exist"),
    ("1/0", "`1/0` does not exist"),
    ("a/b", "`a/b` is not I/N"),
    ("3", "`3` is not I/N"),
    ("-1/3", "`-1/3` is not I/N"),
    ("1/3/5", "`1/3/5` is not I/N"),
    ("", "`` is not I/N"),
])
def test_refuses_what_is_not_a_shard(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=r"e\.g\. `2/3`") as caught:
        Shard.parse(text)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


#: pinned: a change of the hash moves tables between shards of a running deployment
@pytest.mark.parametrize(("source", "table", "count", "shard"), [
    ("shop", "orders", 3, 2),
    ("shop", "orders", 7, 3),
    ("shop", "refunds", 3, 1),
    ("app", "users", 7, 5),
    ("shop", None, 3, 2),
    ("app", None, 7, 4),
    ("shop", "orders", 1, 1),
])
def test_the_assignment_is_pinned(source: str, table: str | None, count: int,
                                  shard: int) -> None:
    assert shard_of(source, table, count) == shard


def test_the_same_in_another_process() -> None:
    """sha256, not Python's `hash` (salted per process by PYTHONHASHSEED)."""
    pairs = [("shop", f"t{i}") for i in range(50)]
    here = [shard_of(s, t, 7) for s, t in pairs]
    code = ("from dlt_contract_ops.core.shard import shard_of\n"
            f"print([shard_of(s, t, 7) for s, t in {pairs!r}])")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": "123"})
    assert there.stdout.strip() == str(here)


@pytest.mark.parametrize("count", [1, 2, 3, 7, 16])
def test_every_table_is_in_exactly_one_shard(count: int) -> None:
    tables = [ExpectedTable("r", f"table_{i}", ()) for i in range(300)]
    owners = Counter(t.table for i in range(1, count + 1)
                     for t in Shard(i, count).tables("src", tables))
    assert set(owners) == {t.table for t in tables}
    assert set(owners.values()) == {1}
    assert sum(Shard(i, count).owns_source("src") for i in range(1, count + 1)) == 1


def test_shards_are_about_even() -> None:
    sizes = Counter(shard_of("src", f"table_{i}", 7) for i in range(7000))
    assert sorted(sizes) == list(range(1, 8))
    assert all(800 < n < 1200 for n in sizes.values()), sizes


def test_a_child_table_goes_with_its_root() -> None:
    roots = [ExpectedTable("r", f"t{i}", ()) for i in range(40)]
    children = [ExpectedTable("r", f"{r.table}__items", (), parent=r.table, root=r.table)
                for r in roots]
    grandchildren = [ExpectedTable("r", f"{c.table}__tags", (), parent=c.table, root=c.root)
                     for c in children]
    for i in range(1, 4):
        shard = Shard(i, 3)
        kept = {t.table for t in shard.tables("src", roots)}
        assert {t.root for t in shard.tables("src", [*children, *grandchildren])} == kept


def test_the_source_name_decides_too() -> None:
    """The same table name in two sources is two pairs, each placed on its own."""
    placed = {(s, shard_of(s, "events", 16)) for s in ("a", "b", "c", "d", "e", "f")}
    assert len({shard for _, shard in placed}) > 1
