"""Project and per-source settings, resolved by dlt from its provider chain.

Project-wide settings live in `[contract_ops]`, per-source declarations and overrides in
`[sources.<name>.contract_ops]`. dlt's `resolve_configuration` reads them (environment
variables first, then `secrets.toml`, then `config.toml`), so `SOURCES__GH__CONTRACT_OPS__REF`
overrides the TOML exactly as dlt users expect. A value counts only in its own table: dlt's
lookup would otherwise walk up and read, say, the `[destination]` table as a source's
`destination`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlt_contract_ops.core.distribution import DistributionRule
from dlt_contract_ops.errors import ConfigError, UnknownSourceError
from dlt_contract_ops.settings.distribution import distribution_rule
from dlt_contract_ops.settings.removal import RemovalSettings as RemovalSettings
from dlt_contract_ops.settings.resolve import _resolve
from dlt_contract_ops.settings.specs import (
    DedupSpec,
    ProjectSpec,
    RemovalSpec,
    SourceSpec,
)
from dlt_contract_ops.settings.values import (
    FRACTION,
    WHOLE,
    _seconds,
    as_bindings,
    as_names,
    as_text,
    where,
)
from dlt_contract_ops.statefile import project_key, state_dir

PROJECT_SECTION = "contract_ops"
#: the tables of the project settings that must be tables (`alert_sink = ["webhook"]`, a
#: near miss of `alert_sinks`, is refused, not read as no sink options)
PROJECT_TABLES = tuple(
    f"{PROJECT_SECTION}{sub}" for sub in
    ("", ".removal", ".dedup", ".distribution", ".alert_sink")
)
DEFAULT_REALERT_AFTER = 24 * 3600.0
DEFAULT_QUERY_TIMEOUT = 300.0
DEFAULT_LOCK_TIMEOUT = 30.0
#: seconds a source's import and build may take (`bounded_build`)
DEFAULT_SOURCE_BUILD_TIMEOUT = 120.0
DEFAULT_RENAME_MIN_CONFIDENCE = 0.6
#: the additive sample query reads rows this recent, at most this many (the newest)
DEFAULT_SAMPLE_WINDOW = 30 * 86400.0
DEFAULT_SAMPLE_ROWS = 10_000
#: load profiles older than this are pruned from the profile store
DEFAULT_PROFILE_RETENTION = 90 * 86400.0


@dataclass(frozen=True)
class DedupSettings:
    """The `[contract_ops.dedup]` table."""

    enabled: bool = True
    realert_after: float = DEFAULT_REALERT_AFTER
    state_file: Path | None = None  # None: the default file in dlt's data dir
    #: `[contract_ops] lock_timeout`: how long a run waits for the state file's lock
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT


@dataclass(frozen=True)
class ProjectSettings:
    """The `[contract_ops]` table."""

    alert_sinks: tuple[str, ...] = ("logging",)
    injected_columns: tuple[str, ...] = ()
    load_timestamp_column: str | None = None
    removal: RemovalSettings = field(default_factory=RemovalSettings)
    dedup: DedupSettings = field(default_factory=DedupSettings)
    query_timeout: float = DEFAULT_QUERY_TIMEOUT
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    rename_min_confidence: float = DEFAULT_RENAME_MIN_CONFIDENCE
    sample_window: float = DEFAULT_SAMPLE_WINDOW
    sample_rows: int = DEFAULT_SAMPLE_ROWS
    profile_store: Path | None = None  # None: `<dlt data dir>/contract_ops/profiles.duckdb`
    profile_retention: float = DEFAULT_PROFILE_RETENTION
    distribution: DistributionRule = field(default_factory=DistributionRule)
    #: a reconcile reads a source's expected columns from the source cache while its code is
    #: unchanged (`source_cache`); False: every run imports and calls the source
    source_cache: bool = True
    #: seconds a source's import and build may take before it is an error on that source
    source_build_timeout: float = DEFAULT_SOURCE_BUILD_TIMEOUT


@dataclass(frozen=True)
class SourceSettings:
    """One `[sources.<name>.contract_ops]` table, merged with the project-wide settings."""

    name: str
    ref: str
    pipeline_name: str | None = None
    #: `source_name`: the source this table declares for one more of its pipelines
    source_name: str | None = None
    destination: str | None = None
    dataset_name: str | None = None
    injected_columns: tuple[str, ...] = ()
    load_timestamp_column: str | None = None
    removal: RemovalSettings = field(default_factory=RemovalSettings)
    #: from the project settings: how far back and how many rows the sample query reads
    sample_window: float = DEFAULT_SAMPLE_WINDOW
    sample_rows: int = DEFAULT_SAMPLE_ROWS
    #: from the project settings: the load profile store
    profile_store: Path | None = None
    profile_retention: float = DEFAULT_PROFILE_RETENTION
    #: `[contract_ops.distribution]` under `[sources.<X>.contract_ops.distribution]`
    distribution: DistributionRule = field(default_factory=DistributionRule)
    #: from the project settings: `[contract_ops.rename] min_confidence`
    rename_min_confidence: float = DEFAULT_RENAME_MIN_CONFIDENCE
    #: `[sources.<X>.contract_ops.models]`: (resource, "module:Class") bound by configuration
    models: tuple[tuple[str, str], ...] = ()


#: dlt-ops names its load-time column here; a project that set it has that column in every
#: table, so it is read when ours (`[contract_ops] load_timestamp_column`) is not set
PEER_LOAD_TIMESTAMP_KEY = "dlt_ops.load_timestamp_column"


def _peer_load_timestamp_column() -> str | None:
    """`[dlt_ops] load_timestamp_column` (or `DLT_OPS__LOAD_TIMESTAMP_COLUMN`), through dlt's
    own providers; None when unset."""
    import dlt

    value: Any = dlt.config.get(PEER_LOAD_TIMESTAMP_KEY)
    return as_text(value, PEER_LOAD_TIMESTAMP_KEY) if value is not None else None


def _removal(spec: RemovalSpec, base: RemovalSettings, section: str) -> RemovalSettings:
    return base.overridden(dict(spec), lambda key: where(f"{section}.{key}"))


def lock_timeout_setting() -> float:
    """`[contract_ops] lock_timeout` alone, in seconds (inside a project context), for a
    command that needs no other setting (`ack`, `unack`); ConfigError on a bad value."""
    import dlt

    key = f"{PROJECT_SECTION}.lock_timeout"
    return _seconds(dlt.config.get(key), key, DEFAULT_LOCK_TIMEOUT)


def load_project_settings(*, check_keys: bool = True) -> ProjectSettings:
    """Read `[contract_ops]` (inside a project context); ConfigError on any bad key or value.

    `check_keys=False` skips the unknown-key check (`validate` lists those itself, and still
    wants the values read). Read once per project context (and environment).
    """
    from dlt_contract_ops.settings.files import memoized

    return memoized(("project", check_keys), lambda: _load_project_settings(check_keys))


def _load_project_settings(check_keys: bool) -> ProjectSettings:
    import dlt

    from dlt_contract_ops.settings.problems import not_a_table, raise_problems, table_problems

    for section in PROJECT_TABLES:
        raise_problems([m for m in [not_a_table(section)] if m])
    if check_keys:
        raise_problems(table_problems(PROJECT_SECTION))
    p = PROJECT_SECTION
    spec = _resolve(ProjectSpec(), (p,))
    sinks = (
        ("logging",) if spec.alert_sinks is None
        else as_names(spec.alert_sinks, f"{p}.alert_sinks")
    )
    d: DedupSpec = spec.dedup
    realert = _seconds(d.realert_after, f"{p}.dedup.realert_after", DEFAULT_REALERT_AFTER)
    run_dir = dlt.current.run_context().run_dir
    state_file = as_text(d.state_file, f"{p}.dedup.state_file")
    state = Path(run_dir, os.path.expanduser(state_file)) if state_file else None
    profile_store = as_text(spec.profile_store, f"{p}.profile_store")
    lock_timeout = _seconds(spec.lock_timeout, f"{p}.lock_timeout", DEFAULT_LOCK_TIMEOUT)
    return ProjectSettings(
        alert_sinks=sinks,
        injected_columns=as_names(spec.injected_columns, f"{p}.injected_columns"),
        load_timestamp_column=(
            as_text(spec.load_timestamp_column, f"{p}.load_timestamp_column")
            or _peer_load_timestamp_column()
        ),
        removal=_removal(spec.removal, RemovalSettings(), f"{p}.removal"),
        dedup=DedupSettings(
            enabled=True if d.enabled is None else bool(d.enabled),
            realert_after=realert,
            state_file=state,
            lock_timeout=lock_timeout,
        ),
        query_timeout=_seconds(spec.query_timeout, f"{p}.query_timeout", DEFAULT_QUERY_TIMEOUT),
        lock_timeout=lock_timeout,
        rename_min_confidence=(
            DEFAULT_RENAME_MIN_CONFIDENCE if spec.rename.min_confidence is None
            else FRACTION.read(spec.rename.min_confidence, where(f"{p}.rename.min_confidence"))
        ),
        sample_window=_seconds(spec.sample_window, f"{p}.sample_window", DEFAULT_SAMPLE_WINDOW),
        sample_rows=_whole(spec.sample_rows, f"{p}.sample_rows", DEFAULT_SAMPLE_ROWS),
        profile_store=(
            Path(run_dir, os.path.expanduser(profile_store)) if profile_store else None
        ),
        profile_retention=_seconds(
            spec.profile_retention, f"{p}.profile_retention", DEFAULT_PROFILE_RETENTION
        ),
        distribution=distribution_rule(spec.distribution, DistributionRule(),
                                       f"{p}.distribution"),
        source_cache=True if spec.source_cache is None else bool(spec.source_cache),
        source_build_timeout=_seconds(
            spec.source_build_timeout, f"{p}.source_build_timeout", DEFAULT_SOURCE_BUILD_TIMEOUT
        ),
    )


def _whole(value: Any, key: str, default: int) -> int:
    return default if value is None else WHOLE.read(value, where(key))


def source_section(name: str) -> str:
    return f"sources.{name}.{PROJECT_SECTION}"


def load_source_settings(
    name: str, project: ProjectSettings, *, check_keys: bool = True
) -> SourceSettings:
    """Read `[sources.<name>.contract_ops]`; UnknownSourceError when it has no `ref`.
    `check_keys=False` skips the unknown-key check (as for `load_project_settings`). Read
    once per project context (and environment) for the same `project`."""
    from dlt_contract_ops.settings.files import memoized

    # the memo keeps `project` alive with the entry, so its id names it for the context
    kept: tuple[ProjectSettings, SourceSettings] = memoized(
        ("source", name, check_keys, id(project)),
        lambda: (project, _load_source_settings(name, project, check_keys)),
    )
    return kept[1]


def _load_source_settings(
    name: str, project: ProjectSettings, check_keys: bool
) -> SourceSettings:
    from dlt_contract_ops.settings.problems import not_a_table, raise_problems, table_problems

    base = source_section(name)
    for section in (base, f"{base}.removal", f"{base}.distribution"):
        raise_problems([m for m in [not_a_table(section)] if m])
    if check_keys:
        raise_problems(table_problems(base))
    spec = _resolve(SourceSpec(), ("sources", name, PROJECT_SECTION))

    def text(key: str) -> str | None:
        return as_text(getattr(spec, key), f"{base}.{key}")

    ref = text("ref")
    if ref is None:
        if name in declared_sources():
            raise ConfigError(
                f"`[{base}]` has no `ref`: set it to the source as `module:attribute`, "
                'e.g. `ref = "pipelines.github:github_source"`.'
            )
        raise UnknownSourceError(name, declared_sources())
    module, _, attr = ref.partition(":")
    if not module.strip() or not attr.strip():
        raise ConfigError(
            f'{where(f"{base}.ref")} is "{ref}": write it as `module:attribute`, '
            'e.g. "pipelines.github:github_source".'
        )
    own = as_names(spec.injected_columns, f"{base}.injected_columns")
    return SourceSettings(
        name=name,
        ref=ref,
        pipeline_name=text("pipeline_name"),
        source_name=text("source_name"),
        destination=text("destination"),
        dataset_name=text("dataset_name"),
        # the source's list adds to the project-wide one: order kept, duplicates dropped
        injected_columns=tuple(dict.fromkeys(project.injected_columns + own)),
        load_timestamp_column=text("load_timestamp_column") or project.load_timestamp_column,
        removal=_removal(spec.removal, project.removal, f"{base}.removal"),
        sample_window=project.sample_window,
        sample_rows=project.sample_rows,
        profile_store=project.profile_store,
        profile_retention=project.profile_retention,
        distribution=distribution_rule(spec.distribution, project.distribution,
                                       f"{base}.distribution"),
        rename_min_confidence=project.rename_min_confidence,
        models=as_bindings(spec.models, f"{base}.models"),
    )


def declared_sources() -> list[str]:
    """Names of every source that has a `[sources.<name>.contract_ops]` table (in a TOML
    file, or as a `SOURCES__<NAME>__CONTRACT_OPS__REF` environment variable), sorted."""
    from dlt_contract_ops.settings.files import toml_files

    names: set[str] = set()
    suffix = f"__{PROJECT_SECTION.upper()}__REF"
    for var in os.environ:
        if var.startswith("SOURCES__") and var.endswith(suffix):
            name = var[len("SOURCES__") : -len(suffix)]
            if name and "__" not in name:
                names.add(name.lower())
    for f in toml_files():
        sources = f.doc.get("sources")
        if isinstance(sources, Mapping):
            for name, table in sources.items():
                if isinstance(table, Mapping) and isinstance(table.get(PROJECT_SECTION), Mapping):
                    names.add(name)
    return sorted(names)


def default_state_file(project_dir: str | os.PathLike[str], data_dir: str | None = None) -> Path:
    """`<data dir>/contract_ops/alert_state/<project name>-<hash of its path>.json` (`data_dir`
    None: the current run context's)."""
    return state_dir(data_dir) / "alert_state" / f"{project_key(project_dir)}.json"
