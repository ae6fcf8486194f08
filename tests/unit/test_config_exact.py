"""A source's own key wins even when a higher-priority provider holds a table of that name
higher up: `[destination.duckdb]` in secrets.toml must not hide a source's `destination`."""

from __future__ import annotations

from dlt_contract_ops.settings import load_project_settings, load_source_settings, project_context
from tests.projects import Project


def test_source_destination_beside_a_destination_table_in_secrets(project: Project) -> None:
    project.secrets('[destination.duckdb]\ncredentials = "warehouse.duckdb"\n')
    project.source("gh", "pipes.gh:gh_source", destination="duckdb", dataset_name="gh_raw")
    with project_context(project.root):
        source = load_source_settings("gh", load_project_settings())
    assert (source.destination, source.dataset_name) == ("duckdb", "gh_raw")


def test_a_walked_up_value_alone_is_not_taken(project: Project) -> None:
    """`dataset_name` at the root of config.toml belongs to no source."""
    project.config('dataset_name = "root_level"\n')
    project.source("gh", "pipes.gh:gh_source", destination=None)
    with project_context(project.root):
        source = load_source_settings("gh", load_project_settings())
    assert source.dataset_name is None
    assert source.destination is None
