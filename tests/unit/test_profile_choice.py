"""`served_by`: profiles or a scan per table, as a case table (pure)."""

from __future__ import annotations

import pytest

from dlt_contract_ops.core.profile_choice import Served, served_by

ROW_GROUP = 122_880

CASES: list[tuple[str, int | None, int | None, int | None, bool, Served]] = [
    # name, estimated rows, profiles_min_rows, destination's block, distribution runs, served
    ("small table, DuckDB default", 2_000, None, ROW_GROUP, False, "scan"),
    ("one row short of a row group", ROW_GROUP - 1, None, ROW_GROUP, False, "scan"),
    ("a whole row group", ROW_GROUP, None, ROW_GROUP, False, "profiles"),
    ("large table", 200_000, None, ROW_GROUP, False, "profiles"),
    ("empty table", 0, None, ROW_GROUP, False, "scan"),
    ("unknown size", None, None, ROW_GROUP, False, "profiles"),
    ("unknown size, threshold set", None, 10**9, None, False, "profiles"),
    ("0 profiles every table", 2_000, 0, ROW_GROUP, False, "profiles"),
    ("a set threshold above the block", 200_000, 10**6, ROW_GROUP, False, "scan"),
    ("no block declared (PostgreSQL), unset", 2_000, None, None, False, "profiles"),
    ("no block declared, threshold set", 2_000, 5_000, None, False, "scan"),
    ("distribution reads the profiles anyway", 2_000, None, ROW_GROUP, True, "profiles"),
]


@pytest.mark.parametrize(("name", "rows", "min_rows", "prune", "needed", "served"), CASES,
                         ids=[c[0] for c in CASES])
def test_served_by(name: str, rows: int | None, min_rows: int | None, prune: int | None,
                   needed: bool, served: Served) -> None:
    assert served_by(rows, min_rows=min_rows, prune_rows=prune, profiles_needed=needed) == served
