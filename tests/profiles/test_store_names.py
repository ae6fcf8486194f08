"""The profile store binds a list of table or column names as ONE value (its JSON text), not
element by element: DuckDB's Python client converts a bound list per element, and with pandas
not installed each element tries to import it, so a read of 2,000 tables cost 0.1 s a query.
Odd names are data: each comes back as it went in."""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dlt_contract_ops.core.load_profile import ColumnProfile, LoadProfile
from dlt_contract_ops.profiles.store import ProfileStore, Scope, TableUpdate, Thin

SCOPE = Scope("duckdb", "w.duckdb", "shop")
ODD = ["orders", 'we"ird', "back\\slash", "uni\u00e9\u4e2d", "line\nbreak", "[a, b]", "null",
       "tab\there", " lead"]
LOADS = ("1796000000.1", "1796003600.2", "1796007200.3")


class _Counting(importlib.abc.MetaPathFinder):
    """Counts the attempts to import modules not installed here, lets every import go on."""

    def __init__(self) -> None:
        self.missing = 0

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if "." not in name and name not in sys.modules:
            self.missing += 1
        return


@contextmanager
def _imports() -> Iterator[_Counting]:
    finder = _Counting()
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)


def _store(path: Path, tables: list[str]) -> ProfileStore:
    store = ProfileStore(path)
    store.write(SCOPE, "shop", [
        TableUpdate(t, [LoadProfile(i, 10, {"id": ColumnProfile("id", 10 - n)}, False)
                        for n, i in enumerate(LOADS)], total=30)
        for t in tables])
    return store


def test_odd_table_names_come_back_as_they_went_in(tmp_path: Path) -> None:
    store = _store(tmp_path / "p.duckdb", ODD)

    stored = store.read(SCOPE, ODD, Thin(frozenset(ODD[:3]), LOADS[0], LOADS[2]))

    assert set(stored.histories) == set(ODD)
    assert all([p.load_id for p in stored.histories[t]] == list(LOADS) for t in ODD)
    assert stored.totals == dict.fromkeys(ODD, 30)
    assert {t: s.non_null for t, s in stored.sums.items()} == {t: {"id": 19} for t in ODD[:3]}
    counted = store.counts(SCOPE, {t: (["id"], list(LOADS)) for t in ODD})
    assert counted == {t: {i: {"id": 10 - n} for n, i in enumerate(LOADS)} for t in ODD}


def test_a_read_binds_as_many_values_for_two_thousand_tables_as_for_two(tmp_path: Path) -> None:
    many = [f"table_{n:04d}" for n in range(2000)]
    store = _store(tmp_path / "p.duckdb", many)
    attempts = []
    for tables in (many[:2], many):
        thin = Thin(frozenset(tables), LOADS[0], LOADS[2])
        with _imports() as finder:
            stored = store.read(SCOPE, tables, thin)
            store.counts(SCOPE, {t: (["id"], list(LOADS)) for t in tables})
        assert len(stored.histories) == len(tables)
        attempts.append(finder.missing)

    assert attempts[1] == attempts[0]
