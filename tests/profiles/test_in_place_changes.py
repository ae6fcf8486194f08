"""Removal from profiles after rows change in place equals a full scan, on DuckDB and PostgreSQL.

A repeat sweep used to notice a rewrite only when the table's row count changed, so an
`UPDATE` of a recent load's values, or rows re-stamped onto an existing recent load id, left
the profiles stale: removal reported a column dark that the warehouse (and its own
`reproduce`) showed filled, or missed one that went dark. The recent window is read again on
every sweep (in the one profile query per table); the baseline comes from the store. A `merge`
table whose upserts overwrite rows of earlier loads gets a note, not silence.

Each case sweeps with one profile store (the incremental way) and compares with
`from_profiles = false` (one coverage aggregate over both windows) at the same `now`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from tests.profiles import test_removal_from_profiles_duckdb as duck
from tests.profiles.test_removal_from_profiles_duckdb import seen
from tests.profiles.test_removal_from_profiles_postgres import PgShop, pg_shop  # noqa: F401 (fixture)
from tests.projects import Project


class Shop(Protocol):
    orders: str

    def declare(self, **settings: Any) -> None: ...
    def load(self, *batches: dict[str, Any]) -> None: ...
    def load_baseline(self, *batches: dict[str, Any]) -> None: ...
    def sql(self, statement: str, params: tuple[Any, ...] | None = None) -> Any: ...
    def backdate_loads(self) -> list[str]: ...


class DuckShop:
    """The DuckDB side of `PgShop` (the same source, dlt's default DuckDB file)."""

    orders = "orders"

    def __init__(self, project: Project) -> None:
        self.project = project

    def declare(self, **settings: Any) -> None:
        duck.declare(self.project, **settings)

    def load(self, *batches: dict[str, Any]) -> None:
        duck.load(self.project, *batches)

    def load_baseline(self, *batches: dict[str, Any]) -> None:
        duck.load_baseline(self.project, *batches)

    def sql(self, statement: str, params: tuple[Any, ...] | None = None) -> Any:
        import duckdb

        con = duckdb.connect(str(self.project.root / duck.DB))
        try:
            con.execute(f"USE shop_rm_pipe.{duck.DATASET}")
            cur = con.execute(statement.replace("%s", "?"), list(params or ()))
            return cur.fetchall() if cur.description else []
        finally:
            con.close()

    def backdate_loads(self) -> list[str]:
        return duck.backdate_loads(self.project)


@pytest.fixture(params=["duckdb", pytest.param("postgres", marks=pytest.mark.postgres)])
def shop(request: pytest.FixtureRequest, project: Project, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Shop, Project]]:
    monkeypatch.setenv("CONTRACT_OPS__PROFILE_STORE", str(tmp_path / "incremental.duckdb"))
    if request.param == "duckdb":
        yield DuckShop(project), project
        return
    pg = request.getfixturevalue("pg_shop")
    yield pg, project


def result(project: Project, **removal: Any) -> ReconcileResult:
    [out] = run(["shop"], detectors=("removal",), dry_run=True, project_dir=project.root,
                removal=removal or None)
    assert out.error is None, out.error
    return out


def both(project: Project, now: datetime) -> tuple[list[DriftFinding], list[DriftFinding]]:
    """The sweep from profiles and the full scan, at one `now`."""
    return (result(project, now=now).findings,
            result(project, from_profiles=False, now=now).findings)


def test_an_update_in_the_recent_window_is_read_again(shop: tuple[Shop, Project]) -> None:
    s, project = shop
    s.declare()
    s.load_baseline(*[{"batch": b} for b in range(4)])
    s.backdate_loads()
    assert result(project).findings == []
    s.load({"batch": 4, "dark": ["note"]})
    [dark] = result(project).findings
    assert dark.columns == ["note"]

    # by hand, the recent rows get their note back (same rows: the row count stays)
    s.sql(f"UPDATE {s.orders} SET note = 'x' WHERE note IS NULL")
    for _ in range(2):  # the sweep right after the change, and the one after it
        now = datetime.now(timezone.utc)
        profiled, full = both(project, now)
        assert full == []
        assert seen(profiled) == seen(full)


def test_a_recent_load_re_stamped_with_dark_rows_is_found(shop: tuple[Shop, Project]) -> None:
    s, project = shop
    s.declare()
    s.load_baseline(*[{"batch": b} for b in range(4)])
    s.backdate_loads()
    s.load({"batch": 4})
    assert result(project).findings == []  # the recent load is profiled: notes filled
    s.load({"batch": 5, "dark": ["note"]})
    ids = [r[0] for r in s.sql(f"SELECT DISTINCT _dlt_load_id FROM {s.orders} ORDER BY 1")]
    kept, newest = ids[-2], ids[-1]
    # a fix-up job replaces the recent load's rows with the newest load's, under the recent
    # load's id: the row count and the set of load ids are those the last sweep saw
    s.sql(f"DELETE FROM {s.orders} WHERE _dlt_load_id = %s", (kept,))
    s.sql(f"UPDATE {s.orders} SET _dlt_load_id = %s WHERE _dlt_load_id = %s", (kept, newest))

    now = datetime.now(timezone.utc)
    profiled, full = both(project, now)
    assert [f.columns for f in full] == [["note"]]
    assert seen(profiled) == seen(full)


def test_a_merge_that_overwrites_earlier_loads_says_so(shop: tuple[Shop, Project]) -> None:
    s, project = shop
    s.declare()
    s.load_baseline(*[{"batch": b, "disposition": "merge"} for b in range(4)])
    s.backdate_loads()
    first = result(project)
    assert first.findings == []
    assert not any("overwr" in n for n in first.notes)
    # the next load upserts the keys of the oldest two loads (0..59 and 1000..1059), with no
    # note: their rows move to the new load, the baseline loses them
    s.load({"batch": 0, "disposition": "merge", "dark": ["note"], "n": 60},
           {"batch": 1, "disposition": "merge", "dark": ["note"], "n": 60})
    now = datetime.now(timezone.utc)
    swept = result(project, now=now)
    full = result(project, from_profiles=False, now=now)
    assert seen(swept.findings) == seen(full.findings)
    [note] = [n for n in swept.notes if "overwr" in n]
    assert "`orders`" in note
    assert "merge" in note
    assert "2 earlier load(s) lost 120 row(s)" in note
    # the next sweep, with nothing overwritten since, says nothing more
    again = result(project, now=now)
    assert not any("overwr" in n for n in again.notes)
