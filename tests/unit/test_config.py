"""Project and source settings read through dlt's provider chain, and their errors."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from dlt_contract_ops.core.removal import (
    DEFAULT_BASELINE_THRESHOLD,
    DEFAULT_BASELINE_WINDOW,
    DEFAULT_RECENT_THRESHOLD,
    DEFAULT_RECENT_WINDOW,
)
from dlt_contract_ops.errors import ConfigError, UnknownSourceError
from dlt_contract_ops.settings import (
    DedupSettings,
    ProjectSettings,
    RemovalSettings,
    SourceSettings,
    declared_sources,
    load_project_settings,
    load_source_settings,
    parse_duration,
    project_context,
)
from tests.conftest import PROFILES_MIN_ROWS
from tests.projects import Project


@pytest.fixture(autouse=True)
def _product_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read the settings as a project sets them: not the suite's own setting."""
    monkeypatch.delenv(PROFILES_MIN_ROWS)


def _load(project: Project, source: str | None = None) -> tuple[ProjectSettings, SourceSettings]:
    with project_context(project.root):
        settings = load_project_settings()
        return settings, load_source_settings(source or "gh", settings)


def test_defaults(project: Project) -> None:
    project.source("gh", "pipes.gh:gh_source", destination=None)
    settings, source = _load(project)
    assert settings == ProjectSettings()
    assert settings.alert_sinks == ("logging",)
    assert settings.removal == RemovalSettings(
        recent_window=DEFAULT_RECENT_WINDOW,
        baseline_window=DEFAULT_BASELINE_WINDOW,
        baseline_threshold=DEFAULT_BASELINE_THRESHOLD,
        recent_threshold=DEFAULT_RECENT_THRESHOLD,
    )
    assert settings.dedup == DedupSettings(enabled=True, realert_after=24 * 3600.0)
    assert settings.dedup.state_file is None  # the default file in dlt's data dir
    assert (settings.query_timeout, settings.lock_timeout) == (300.0, 30.0)
    assert source == SourceSettings(name="gh", ref="pipes.gh:gh_source")
    assert source.removal == settings.removal


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


def test_removal_dedup_and_timeout_tables(project: Project) -> None:
    project.config(
        """
        [contract_ops]
        query_timeout = "2m"
        lock_timeout = 5

        [contract_ops.removal]
        recent_window = "1h30m"
        baseline_window = "P2D"
        baseline_threshold = 0.5
        recent_threshold = "0.05"
        profiles_min_rows = 500000

        [contract_ops.dedup]
        enabled = false
        realert_after = "PT2H"
        state_file = "state/alerts.json"
        """
    )
    project.source("gh", "pipes.gh:gh_source")
    project.config('[sources.gh.contract_ops.removal]\nrecent_window = "6h"\n')
    settings, source = _load(project)
    assert settings.removal == RemovalSettings(
        recent_window=timedelta(minutes=90),
        baseline_window=timedelta(days=2),
        baseline_threshold=0.5,
        recent_threshold=0.05,
        profiles_min_rows=500_000,
    )
    assert settings.dedup == DedupSettings(
        enabled=False,
        realert_after=7200.0,
        state_file=project.root / "state" / "alerts.json",  # relative to the project
        lock_timeout=5.0,  # the project's lock_timeout: the state file's lock waits as long
    )
    assert (settings.query_timeout, settings.lock_timeout) == (120.0, 5.0)
    # the source's removal table overrides only the keys it sets
    assert source.removal == RemovalSettings(
        recent_window=timedelta(hours=6),
        baseline_window=timedelta(days=2),
        baseline_threshold=0.5,
        recent_threshold=0.05,
        profiles_min_rows=500_000,
    )


def test_removal_settings_from_the_environment(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.config('[contract_ops.removal]\nrecent_window = "6h"\n')
    project.source("gh", "pipes.gh:gh_source")
    monkeypatch.setenv("CONTRACT_OPS__REMOVAL__RECENT_WINDOW", "2h")
    monkeypatch.setenv("SOURCES__GH__CONTRACT_OPS__REMOVAL__BASELINE_THRESHOLD", "0.4")
    settings, source = _load(project)
    assert settings.removal.recent_window == timedelta(hours=2)
    assert source.removal.baseline_threshold == 0.4


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


#: a declared source, for cases about the project-wide tables
GH = '[sources.gh.contract_ops]\nref = "a:b"\n'


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
        # the removal, dedup and timeout tables
        ('[contract_ops.removal]\nrecent_windw = "6h"\n' + GH,
         r"Unknown key `recent_windw` in `\[contract_ops\.removal\]` \(.*config\.toml\)\. "
         r"Did you mean `recent_window`\?"),
        ('[sources.gh.contract_ops]\nref = "a:b"\n[sources.gh.contract_ops.removal]\nx = 1\n',
         r"Unknown key `x` in `\[sources\.gh\.contract_ops\.removal\]`"),
        ('[contract_ops.dedup]\nrealert_afer = "2h"\n' + GH,
         r"Unknown key `realert_afer` in `\[contract_ops\.dedup\]`.*`realert_after`"),
        ('[contract_ops.removal]\nrecent_window = "6 hours"\n' + GH,
         r"`recent_window` in `\[contract_ops\.removal\]` \(.*config\.toml\).* = '6 hours' "
         r"is not a positive duration: write e\.g\. .*\"6h\""),
        ('[contract_ops.removal]\nbaseline_window = "P1M"\n' + GH,
         r"`baseline_window` .* = 'P1M' is not a positive duration"),
        ('[contract_ops.removal]\nbaseline_threshold = "high"\n' + GH,
         r"`baseline_threshold` in `\[contract_ops\.removal\]`.* = 'high' must be a fraction"),
        ('[sources.gh.contract_ops]\nref = "a:b"\n[sources.gh.contract_ops.removal]\n'
         'recent_threshold = 1.5\n',
         r"`recent_threshold` in `\[sources\.gh\.contract_ops\.removal\]`.* must be a fraction"),
        ('[contract_ops.removal]\nrecent_threshold = true\n' + GH,
         r"`recent_threshold` .* must be a fraction"),
        ('[contract_ops.dedup]\nrealert_after = "nan"\n' + GH,
         r"`realert_after` in `\[contract_ops\.dedup\]`.* is not a positive duration"),
        ('[contract_ops]\nquery_timeout = "soon"\n' + GH,
         r"`query_timeout` in `\[contract_ops\]`.* is not a positive duration"),
        ('[contract_ops]\nlock_timeout = 0\n' + GH,
         r"`lock_timeout` in `\[contract_ops\]`.* is not a positive duration"),
        ('[contract_ops]\ndedup = 3\n' + GH,
         r"`\[contract_ops\.dedup\]` must be a table"),
        ('[sources.gh.contract_ops]\nref = "a:b"\nremoval = "strict"\n',
         r"`\[sources\.gh\.contract_ops\.removal\]` must be a table"),
        ('contract_ops = 5\n' + GH,
         r"`\[contract_ops\]` must be a table: .*config\.toml sets it to 5"),
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


def test_unknown_key_messages_name_only_the_file_that_sets_the_key(project: Project) -> None:
    project.source("gh", "pipes.gh:gh_source")
    project.secrets('[contract_ops]\ninjected_colums = ["x"]\n')
    with pytest.raises(ConfigError) as info:
        _load(project)
    # one file, the one that exists and holds the key: not config.toml, not dlt's global dir
    assert str(info.value) == (
        "Unknown key `injected_colums` in `[contract_ops]` (.dlt/secrets.toml). "
        "Did you mean `injected_columns`?"
    )


def test_check_keys_false_reads_the_values_despite_an_unknown_key(project: Project) -> None:
    """`validate` lists unknown keys itself and still wants every value checked."""
    project.config('[contract_ops]\nalert_sinks = []\nalertsinks = ["x"]\n')
    project.config('[contract_ops.removal]\nrecent_window = "2h"\nrecent_windw = "1h"\n')
    project.source("gh", "pipes.gh:gh_source")
    project.config('[sources.gh.contract_ops.removal]\nbaseline_window = "1d"\ntypo = 1\n')
    with project_context(project.root):
        with pytest.raises(ConfigError, match="alertsinks"):
            load_project_settings()
        settings = load_project_settings(check_keys=False)
        assert settings.alert_sinks == ()
        assert settings.removal.recent_window == timedelta(hours=2)
        with pytest.raises(ConfigError, match="typo"):
            load_source_settings("gh", settings)
        source = load_source_settings("gh", settings, check_keys=False)
        assert source.removal.baseline_window == timedelta(days=1)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (90, 90.0),
        ("90", 90.0),
        ("1.5", 1.5),
        ("90s", 90.0),
        ("15m", 900.0),
        ("6h", 21600.0),
        ("6 h", 21600.0),
        ("1h30m", 5400.0),
        ("7d", 604800.0),
        ("1w", 604800.0),
        ("2w3d", 17 * 86400.0),
        ("PT6H", 21600.0),
        ("pt1h30m", 5400.0),
        ("P1DT12H", 129600.0),
        ("P2W", 14 * 86400.0),
        (timedelta(minutes=5), 300.0),
    ],
)
def test_duration_grammar_accepts(value: object, seconds: float) -> None:
    assert parse_duration(value, "k").total_seconds() == seconds


@pytest.mark.parametrize(
    "value",
    [
        "6 hours",  # prose: the grammar takes unit letters, not words
        "6hrs",
        "abc",
        "",
        "0",
        0,
        "-5m",
        -1,
        "1h 30x",
        "P1M",  # months and years depend on the calendar
        "P1Y",
        "1y",
        "P",
        "PT",
        "nan",
        "inf",
        "1e20",  # past timedelta's range
        True,
        None,
        ["6h"],
    ],
)
def test_duration_grammar_refuses(value: object) -> None:
    with pytest.raises(ConfigError, match=r"^`k` = .* is not a positive duration: write e\.g\."):
        parse_duration(value, "k")


def test_duration_zero_only_where_allowed() -> None:
    assert parse_duration("0", "k", allow_zero=True) == timedelta(0)
    with pytest.raises(ConfigError, match="is not a non-negative duration"):
        parse_duration("-1s", "k", allow_zero=True)


def test_project_context_refuses_a_missing_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with (
        pytest.raises(ConfigError, match=r"Project directory `.*nope` does not exist"),
        project_context(missing),
    ):
        pass


@pytest.mark.parametrize("file", ["config.toml", "secrets.toml"])
def test_project_context_names_a_broken_toml_file(project: Project, file: str) -> None:
    (project.root / ".dlt" / file).write_text('[contract_ops]\nalert_sinks = ["a" "b"]\n')
    with pytest.raises(ConfigError) as info, project_context(project.root):
        pass
    message = str(info.value)
    assert f"`{project.root / '.dlt' / file}` is not valid TOML" in message
    assert "(at line 2, column 20)" in message
    assert "\n" not in message


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
