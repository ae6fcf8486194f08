"""The distribution detector's noise floor: a newest load of fewer than `min_rows` rows
(`[contract_ops.distribution]`, per source `[sources.<X>.contract_ops.distribution]`, default
100) is not judged, a note says so. A 12-row table's category shares swing on every load:
one row is 8 points of a share. Real dlt loads into DuckDB and PostgreSQL; a bad value is
one line, exit 2, in `validate` and `reconcile`, before anything is swept or alerted."""

from __future__ import annotations

import pytest

from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.model.findings import ReconcileResult
from tests.profiles.conftest import load
from tests.profiles.test_distribution_postgres import PgShop, pg_shop  # noqa: F401 (fixture)
from tests.projects import Project

#: six steady loads of 12 rows, then one with a fourth of its `status` values `other`
SMALL = [{"batch": b, "n": 12} for b in range(6)]
DRIFTED = {"batch": 6, "n": 12, "drift": ["other", "region"]}
NOTE = ("table `orders`: the newest load has 12 row(s), fewer than `min_rows` (100): too few "
        "for distribution drift to be judged")


def _sweep(project: Project) -> ReconcileResult:
    [result] = run(["shop"], detectors=("distribution",), dry_run=True, project_dir=project.root)
    assert result.error is None, result.error
    return result


def test_a_small_table_gets_a_note_not_a_finding(shop: Project) -> None:
    load(shop, *SMALL, DRIFTED)
    result = _sweep(shop)
    assert result.findings == []
    assert NOTE in result.notes

    # judged once the floor is under the loads' size: the same loads drifted
    shop.config("[contract_ops.distribution]\nmin_rows = 10\n")
    [finding] = _sweep(shop).findings
    assert "status" in finding.columns


def test_a_source_sets_its_own_floor(shop: Project) -> None:
    load(shop, *SMALL, DRIFTED)
    shop.config("[contract_ops.distribution]\nmin_rows = 500\n")
    shop.config("[sources.shop.contract_ops.distribution]\nmin_rows = 12\n")
    [finding] = _sweep(shop).findings  # 12 is not under 12: judged
    assert "status" in finding.columns
    proc = shop.cli("validate")  # both tables are known and their values read
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_big_enough_load_is_judged_as_before(shop: Project) -> None:
    load(shop, *[{"batch": b} for b in range(6)], {"batch": 6, "drift": ["other"]})
    result = _sweep(shop)  # 100 rows a load: not under the default floor
    [finding] = result.findings
    assert finding.columns == ["status"]
    assert not any("min_rows" in n for n in result.notes)


@pytest.mark.postgres
def test_a_small_table_on_postgres_gets_a_note(
    pg_shop: PgShop,  # noqa: F811 (the fixture)
) -> None:
    pg_shop.load_baseline(*SMALL)
    pg_shop.load(DRIFTED)
    result = pg_shop.sweep()
    assert result.findings == []
    assert NOTE in result.notes
    pg_shop.project.config("[contract_ops.distribution]\nmin_rows = 12\n")
    [finding] = pg_shop.reconcile()
    assert "status" in finding["columns"]


@pytest.mark.parametrize(("table", "value", "meant"), [
    ("contract_ops.distribution", "0", "Did you mean `min_rows = 1` (every load is judged)?"),
    ("contract_ops.distribution", "-5", "Did you mean `min_rows = 1` (every load is judged)?"),
    ("contract_ops.distribution", "100.0", "Did you mean `min_rows = 100`?"),
    ("contract_ops.distribution", '"1_000 rows"', "Did you mean `min_rows = 1000`?"),
    ("contract_ops.distribution", "2.5", None),
    ("contract_ops.distribution", "true", None),
    ("sources.shop.contract_ops.distribution", '"many"', None),
    ("sources.shop.contract_ops.distribution", "0", "Did you mean `min_rows = 1`"),
])
@pytest.mark.parametrize("command", ["validate", "reconcile"])
def test_a_bad_min_rows_is_one_line_and_exit_2(
    shop: Project, table: str, value: str, meant: str | None, command: str,
) -> None:
    load(shop, *SMALL)
    shop.config(f"[{table}]\nmin_rows = {value}\n")
    args = [] if command == "validate" else ["-s", "shop", "--include-distribution"]
    proc = shop.cli(command, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    output = proc.stdout + proc.stderr
    [line] = [ln for ln in output.splitlines() if "min_rows" in ln]
    assert f"`[{table}]`" in line
    assert "must be a whole number >= 1" in line
    assert (meant in line) if meant else ("Did you mean" not in line)
    assert "Traceback" not in output
    if command == "reconcile":  # the project's table or the source's: refused before
        assert "Source: shop" not in proc.stdout  # anything was swept or alerted
