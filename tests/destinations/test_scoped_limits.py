"""A destination whose identifier limit depends on its credentials (dlt's `sqlalchemy`
destination reads it off the URL's dialect; its default is 63 characters, MariaDB allows 64),
with the credentials in the pipeline's own table (`[<pipeline>.destination.sqlalchemy]`) or
the global one: a model field of 64 characters is expected under the name dlt landed it with
(dlt 1.31 shortens it to 63 either way), so it is neither missing nor an "additive" copy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.destinations import scenario
from tests.destinations.servers import Backend, make, unique
from tests.projects import Project

pytestmark = pytest.mark.mariadb

#: 64 characters: MariaDB keeps it whole, a 63-character limit would shorten it
LONG = "a_field_name_of_exactly_sixty_four_characters_for_mariadb_limit_"

SOURCE = scenario.wide_source(LONG)


@pytest.fixture(params=["scoped", "global"])
def loaded(
    request: pytest.FixtureRequest, project: Project, tmp_path: Path
) -> Iterator[tuple[Backend, str]]:
    backend = make("mariadb", tmp_path)
    dataset = unique("co_scoped_limit")
    project.module("wide_mod", SOURCE)
    project.secrets(backend.secrets("wide_pipe" if request.param == "scoped" else None))
    project.source("wide_src", "wide_mod:wide_src", pipeline_name="wide_pipe",
                   destination=backend.destination, dataset_name=dataset)
    try:
        project.python(
            f"""
            import dlt
            from wide_mod import wide_src
            dlt.pipeline("wide_pipe", destination={backend.destination!r},
                         dataset_name={dataset!r}).run(wide_src())
            """
        )
        yield backend, dataset
    finally:
        backend.drop_dataset(dataset)


def test_a_field_at_the_credentials_limit_is_found_under_its_own_name(
    project: Project, loaded: tuple[Backend, str]
) -> None:
    backend, dataset = loaded
    [rows] = backend.execute(dataset, [(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = %s AND table_name = 'wide'", [dataset]
    )])
    [landed] = [name for (name,) in rows if name.startswith("a_field")]
    assert len(landed) <= 64  # within MariaDB's limit, at whatever length dlt chose
    code, doc, stderr = scenario.reconcile_json(project, "-s", "wide_src")
    assert code == 0, stderr
    results = [r for r in doc["results"] if r["source"] == "wide_src"]
    assert results
    assert [(r["detector"], r["error"], r["findings"]) for r in results] == [
        (r["detector"], None, []) for r in results
    ]
