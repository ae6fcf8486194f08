"""One `--all` sweep over sources on different destinations (DuckDB and PostgreSQL), each
resolving its own credentials from the dlt config chain: secrets.toml tables scoped to each
source's pipeline, with no destination-wide credentials to fall back on."""

from __future__ import annotations

from pathlib import Path

from tests.destinations import scenario
from tests.destinations.servers import make, unique
from tests.projects import Project


def test_all_sweeps_duckdb_and_postgres_each_with_its_own_credentials(
    project: Project, tmp_path: Path
) -> None:
    duck, pg = make("duckdb", tmp_path), make("postgres", tmp_path)
    duck_ds, pg_ds = unique("co_multi_duck"), unique("co_multi_pg")
    scenario.setup(project, duck, duck_ds, source="lake", pipeline="lake_pipe", scoped=True)
    scenario.setup(project, pg, pg_ds, source="warehouse", pipeline="wh_pipe", scoped=True)
    secrets = (project.root / ".dlt" / "secrets.toml").read_text()
    assert "[destination." not in secrets  # only pipeline-scoped tables
    try:
        scenario.load(project, duck_ds, duck, pipeline="lake_pipe", n=5)
        scenario.load(project, pg_ds, pg, pipeline="wh_pipe", n=5)
        duck.execute(duck_ds, [f"ALTER TABLE {duck.q(duck_ds, 'events')} ADD COLUMN lake_only INT"])
        pg.execute(pg_ds, [f"ALTER TABLE {pg.q(pg_ds, 'events')} ADD COLUMN wh_only INT",
                           f"UPDATE {pg.q(pg_ds, 'events')} SET wh_only = id"])
        code, doc, stderr = scenario.reconcile_json(project, "--all", "--dry-run")
    finally:
        pg.drop_dataset(pg_ds)

    assert code == 0, stderr
    additive = {r["source"]: r for r in doc["results"] if r["detector"] == "additive"}
    assert set(additive) == {"lake", "warehouse"}
    assert (additive["lake"]["destination"], additive["lake"]["dataset"]) == ("duckdb", duck_ds)
    assert (additive["warehouse"]["destination"], additive["warehouse"]["dataset"]) == (
        "postgres", pg_ds
    )
    assert [f["columns"] for f in additive["lake"]["findings"]] == [["lake_only"]]
    [wh] = additive["warehouse"]["findings"]
    assert wh["columns"] == ["wh_only"]
    assert sorted(wh["samples"]["wh_only"]) == [0, 1, 2, 3, 4]
    assert all(r["error"] is None for r in doc["results"])
