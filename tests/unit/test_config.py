"""Project and source settings read through dlt's provider chain, and their errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dlt_contract_ops.errors import ConfigError, UnknownSourceError
from dlt_contract_ops.settings import (
    ProjectSettings,
    SourceSettings,
    declared_sources,
    load_project_settings,
    load_source_settings,
    project_context,
)
from tests.projects import Project


def _load(project: Project, source: str | None = None) -> tuple[ProjectSettings, SourceSettings]:
    with project_context(project.root):
        settings = load_project_settings()
        return settings, load_source_settings(source or "gh", settings)


def test_defaults(project: Project) -> None:
    project.source("gh", "pipes.gh:gh_source", destination=None)
    settings, source = _load(project)
    assert settings == ProjectSettings()
    assert settings.alert_sinks == ("logging",)
    assert source == SourceSettings(name="gh", ref="pipes.gh:gh_source")


def test_full_tables(project: Project) -> None:
    project.config(
        """
        [contract_ops]
        alert_sinks = []
        injected_columns = ["ingested_by", "tenant_id"]
        load_timestamp_column = "loaded_at"
        """
    )
    project.source(
        "gh",
        "pipes.gh:gh_source",
        pipeline_name="gh_pipe",
        dataset_name="gh_raw",
        injected_columns=["tenant_id", "region"],
        load_timestamp_column="ingested_at",
    )
    settings, source = _load(project)
    assert settings.alert_sinks == ()  # an empty list disables emission on purpose
    # the source's list adds to the project-wide one, order kept, no duplicates
    assert source.injected_columns == ("ingested_by", "tenant_id", "region")
    # the source's own load timestamp column overrides the project-wide one
    assert source.load_timestamp_column == "ingested_at"
    assert (source.pipeline_name, source.destination, source.dataset_name) == (
        "gh_pipe",
        "duckdb",
        "gh_raw",
    )


def test_project_load_timestamp_column_is_inherited(project: Project) -> None:
    project.config('[contract_ops]\nload_timestamp_column = "loaded_at"\n')
    project.source("gh", "pipes.gh:gh_source")
    _, source = _load(project)
    assert source.load_timestamp_column == "loaded_at"


def test_environment_overrides_toml(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.config('[contract_ops]\ninjected_columns = ["ingested_by"]\n')
    project.source("gh", "pipes.gh:gh_source", dataset_name="from_toml")
    monkeypatch.setenv("SOURCES__GH__CONTRACT_OPS__REF", "other.module:other_source")
    monkeypatch.setenv("SOURCES__GH__CONTRACT_OPS__DATASET_NAME", "from_env")
    monkeypatch.setenv("CONTRACT_OPS__INJECTED_COLUMNS", '["a", "b"]')
    monkeypatch.setenv("CONTRACT_OPS__LOAD_TIMESTAMP_COLUMN", "stamped_at")
    settings, source = _load(project)
    assert source.ref == "other.module:other_source"
    assert source.dataset_name == "from_env"
    assert settings.injected_columns == ("a", "b")
    assert source.load_timestamp_column == "stamped_at"


def test_environment_single_name_list(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.source("gh", "pipes.gh:gh_source")
    monkeypatch.setenv("SOURCES__GH__CONTRACT_OPS__INJECTED_COLUMNS", "tenant_id")
    _, source = _load(project)
    assert source.injected_columns == ("tenant_id",)


def test_source_settings_in_secrets_toml(project: Project) -> None:
    project.secrets('[sources.gh.contract_ops]\nref = "pipes.gh:gh_source"\n')
    _, source = _load(project)
    assert source.ref == "pipes.gh:gh_source"


def test_declared_sources(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.source("zeta", "pipes.z:z")
    project.source("alpha", "pipes.a:a")
    project.config("[sources.not_ours]\napi_url = 'https://example.com'\n")
    monkeypatch.setenv("SOURCES__ENVONLY__CONTRACT_OPS__REF", "pipes.e:e")
    with project_context(project.root):
        assert declared_sources() == ["alpha", "envonly", "zeta"]


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        # a ref without a colon
        ('[sources.gh.contract_ops]\nref = "pipes.gh.gh_source"\n',
         r'`ref` in `\[sources\.gh\.contract_ops\]`.*"pipes\.gh\.gh_source".*module:attribute'),
        ('[sources.gh.contract_ops]\nref = "pipes.gh:"\n', r"module:attribute"),
        ('[sources.gh.contract_ops]\nref = ":gh_source"\n', r"module:attribute"),
        # a declared table without ref
        ('[sources.gh.contract_ops]\ndataset_name = "x"\n',
         r"`\[sources\.gh\.contract_ops\]` has no `ref`"),
        # wrong types
        ('[sources.gh.contract_ops]\nref = 5\n',
         r"`ref` in `\[sources\.gh\.contract_ops\]`.*string"),
        ('[sources.gh.contract_ops]\nref = "a:b"\ninjected_columns = 5\n',
         r"`injected_columns` in `\[sources\.gh\.contract_ops\]`.*list of strings"),
        ('[sources.gh.contract_ops]\nref = "a:b"\ninjected_columns = ["a", 1]\n',
         r"SOURCES__GH__CONTRACT_OPS__INJECTED_COLUMNS.*list of strings"),
        ('[sources.gh.contract_ops]\nref = "a:b"\npipeline_name = ["p"]\n',
         r"`pipeline_name` in `\[sources\.gh\.contract_ops\]`.*string"),
        ('[contract_ops]\nload_timestamp_column = 7\n[sources.gh.contract_ops]\nref = "a:b"\n',
         r"`load_timestamp_column` in `\[contract_ops\]`.*string"),
        ('[contract_ops]\nalert_sinks = {logging = true}\n[sources.gh.contract_ops]\nref = "a:b"\n',
         r"`alert_sinks` in `\[contract_ops\]`.*list of strings"),
        ('[contract_ops]\nremoval = "strict"\n[sources.gh.contract_ops]\nref = "a:b"\n',
         r"`\[contract_ops\.removal\]` must be a table"),
        # unknown keys, with the closest known key and the file
        ('[contract_ops]\ninjected_colums = ["x"]\n[sources.gh.contract_ops]\nref = "a:b"\n',
         r"Unknown key `injected_colums` in `\[contract_ops\]` \(.*config\.toml.*\)\. "
         r"Did you mean `injected_columns`\?"),
        ('[sources.gh.contract_ops]\nref = "a:b"\ndatset_name = "x"\n',
         r"Unknown key `datset_name` in `\[sources\.gh\.contract_ops\]` .*"
         r"Did you mean `dataset_name`\?"),
        ('[sources.gh.contract_ops]\nref = "a:b"\nloadtimestamp = "x"\n',
         r"Did you mean `load_timestamp_column`\?"),
    ],
)
def test_config_errors(project: Project, toml: str, message: str) -> None:
    project.config(toml)
    with pytest.raises(ConfigError, match=message):
        _load(project)


def test_unknown_key_without_a_close_match_has_no_hint(project: Project) -> None:
    project.config('[sources.gh.contract_ops]\nref = "a:b"\nzzz = 1\n')
    with pytest.raises(ConfigError) as info:
        _load(project)
    assert "Unknown key `zzz`" in str(info.value)
    assert "Did you mean" not in str(info.value)


def test_unknown_key_of_another_source_does_not_block_this_one(project: Project) -> None:
    project.source("gh", "pipes.gh:gh_source")
    project.config('[sources.other.contract_ops]\nref = "a:b"\ntypo_key = 1\n')
    _, source = _load(project)
    assert source.ref == "pipes.gh:gh_source"


def test_unknown_source_names_the_declared_ones(project: Project) -> None:
    project.source("gh", "pipes.gh:gh_source")
    project.source("shop", "pipes.shop:shop")
    with pytest.raises(UnknownSourceError) as info:
        _load(project, "nope")
    text = str(info.value)
    assert "Unknown source `nope`" in text
    assert "[sources.nope.contract_ops]" in text
    assert re.search(r"Declared sources: gh, shop\.", text)


def test_project_context_restores_the_previous_run_dir(project: Project) -> None:
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    before = Container()[PluggableRunContext].context.run_dir
    with project_context(project.root) as pdir:
        assert Container()[PluggableRunContext].context.run_dir == pdir == str(project.root)
    assert Container()[PluggableRunContext].context.run_dir == before


def test_current_directory_and_edited_files_are_read_afresh(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    with project_context(None):
        assert declared_sources() == []
    project.source("gh", "pipes.gh:gh_source")
    monkeypatch.chdir(project.root)
    with project_context(None):
        assert declared_sources() == ["gh"]
    # a long-lived process sees config edited between runs
    project.source("shop", "pipes.shop:shop")
    with project_context(None):
        assert declared_sources() == ["gh", "shop"]
