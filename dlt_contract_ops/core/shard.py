"""Shards: a stable 1/N of a sweep's (source, table) pairs, so N orchestrator tasks share one
sweep (`reconcile --all --shard 2/3`, `run(shard="2/3")`).

A root table's shard is a stable hash (sha256 of its source and table name, never Python's
salted `hash`) mod N; a child table (`users__labels`) goes with its root table, and a rename
stays inside its table, so every finding is made by exactly one shard and the union of the N
shards' findings is one unsharded sweep's. What concerns a source as a whole (it cannot be
built, its dataset is missing, its notes) is reported by one shard too: the shard of the
source name (`Shard.owns_source`).

Pure: names in, shard numbers out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from dlt_contract_ops.core.columns import ExpectedTable

__all__ = ["Shard", "shard_of"]

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def _bucket(key: list[str], count: int) -> int:
    digest = hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard_of(source: str, table: str | None, count: int) -> int:
    """The shard (1..count) of root table `table` of `source`; `table` None: the shard that
    reports what concerns the source as a whole. The same names give the same shard in every
    process, on every machine, in every version that keeps this function.

    >>> shard_of("shop", "orders", 3), shard_of("shop", "orders", 1)
    (2, 1)
    >>> shard_of("shop", None, 3)
    2
    """
    return _bucket([source] if table is None else [source, table], count)


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based, as `--shard 2/3` spells it)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise ValueError(
                f"shard `{self.index}/{self.count}` does not exist: give I/N with N at least 1 "
                "and I from 1 to N, e.g. `2/3`."
            )

    @classmethod
    def parse(cls, text: str | Shard) -> Shard:
        """`"2/3"` as a Shard; ValueError saying what a shard looks like otherwise.

        >>> Shard.parse("2/3"), str(Shard.parse(" 1 / 7 "))
        (Shard(index=2, count=3), '1/7')
        """
        if isinstance(text, Shard):
            return text
        found = _SPEC.fullmatch(text)
        if found is None:
            raise ValueError(
                f"shard `{text}` is not I/N: give this task's shard and the number of shards, "
                "e.g. `2/3` (the second of three)."
            )
        return cls(int(found[1]), int(found[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def whole(self) -> bool:
        """The only shard (1/1): the whole sweep."""
        return self.count == 1

    def owns(self, source: str, table: str) -> bool:
        """Root table `table` of `source` is this shard's."""
        return shard_of(source, table, self.count) == self.index

    def owns_source(self, source: str) -> bool:
        """This shard reports what concerns `source` as a whole (its build, its dataset)."""
        return shard_of(source, None, self.count) == self.index

    def source_owner(self, source: str) -> Shard:
        """The shard that reports what concerns `source` as a whole."""
        return Shard(shard_of(source, None, self.count), self.count)

    def tables(
        self, source: str, tables: Iterable[ExpectedTable]
    ) -> tuple[ExpectedTable, ...]:
        """`tables` of `source` that are this shard's: a root table by its own name, a child
        table by its root's.

        >>> from dlt_contract_ops.core.columns import ExpectedTable
        >>> users = ExpectedTable("users", "users", ())
        >>> labels = ExpectedTable("users", "users__labels", (), parent="users", root="users")
        >>> [[t.table for t in Shard(i, 2).tables("app", [users, labels])] for i in (1, 2)]
        [[], ['users', 'users__labels']]
        """
        return tuple(t for t in tables if self.owns(source, t.root or t.table))
