"""The settings tables, each declared once (`settings.declare`): `DedupSettings`,
`ProjectSettings` and `SourceSettings` say which keys their table holds, with their types,
defaults and how a value given for one is read. Their dlt specs are made from them
(`settings.specs`); `settings.project` resolves and reads them.

This module sits below the specs and the unknown-key check (which read the keys declared
here), so it imports neither.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

from dlt_contract_ops.core.distribution import DistributionRule
from dlt_contract_ops.settings.declare import BOOL, INT, Key, key, table
from dlt_contract_ops.settings.distribution import read_min_rows
from dlt_contract_ops.settings.removal import RemovalSettings, removal_keys
from dlt_contract_ops.settings.values import (
    FRACTION,
    NON_NEGATIVE,
    WHOLE,
    _duration,
    as_bindings,
    as_names,
    as_sink_names,
    as_text,
    flag,
    seconds,
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


def _path(value: Any, key: str) -> Path | None:
    """A file setting: relative to the project's folder, `~` expanded; None when empty."""
    import dlt

    text = as_text(value, key)
    return Path(dlt.current.run_context().run_dir, os.path.expanduser(text)) if text else None


#: `[contract_ops.distribution]`: the fields of `core.distribution.DistributionRule` (their
#: types and defaults, the `DEFAULT_*` there), read so
DISTRIBUTION_TABLE = {
    "baseline_loads": Key(WHOLE.at, INT),
    "baseline_window": Key(_duration),
    "min_baseline_loads": Key(WHOLE.at, INT),
    "max_categories": Key(WHOLE.at, INT),
    "threshold": Key(NON_NEGATIVE.at),
    "min_change": Key(FRACTION.at),
    "min_rows": Key(read_min_rows),
}


@dataclass(frozen=True)
class DedupSettings:
    """The `[contract_ops.dedup]` table."""

    enabled: bool = key(True, flag, hint=BOOL)
    realert_after: float = key(DEFAULT_REALERT_AFTER, seconds)
    #: None: the default file in dlt's data dir
    state_file: Path | None = key(None, _path)  # noqa: RUF009 (a field: `declare.key`)
    #: `[contract_ops] lock_timeout`: how long a run waits for the state file's lock
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT


@dataclass(frozen=True)
class ProjectSettings:
    """The `[contract_ops]` table."""

    alert_sinks: tuple[str, ...] = key(("logging",), as_sink_names)
    injected_columns: tuple[str, ...] = key((), as_names)
    #: unset: `[dlt_ops] load_timestamp_column` (`PEER_LOAD_TIMESTAMP_KEY`)
    load_timestamp_column: str | None = key(None, as_text)
    removal: RemovalSettings = table(RemovalSettings, removal_keys())  # noqa: RUF009 (a field)
    dedup: DedupSettings = table(DedupSettings)  # noqa: RUF009 (a field: `declare.table`)
    query_timeout: float = key(DEFAULT_QUERY_TIMEOUT, seconds)
    lock_timeout: float = key(DEFAULT_LOCK_TIMEOUT, seconds)
    #: `[contract_ops.rename] min_confidence`
    rename_min_confidence: float = key(
        DEFAULT_RENAME_MIN_CONFIDENCE, FRACTION.at, at=("rename", "min_confidence")
    )
    sample_window: float = key(DEFAULT_SAMPLE_WINDOW, seconds)
    sample_rows: int = key(DEFAULT_SAMPLE_ROWS, WHOLE.at, hint=INT)
    #: None: `<dlt data dir>/contract_ops/profiles.duckdb`
    profile_store: Path | None = key(None, _path)  # noqa: RUF009 (a field: `declare.key`)
    profile_retention: float = key(DEFAULT_PROFILE_RETENTION, seconds)
    distribution: DistributionRule = table(  # noqa: RUF009 (a field: `declare.table`)
        DistributionRule, DISTRIBUTION_TABLE
    )
    #: a reconcile reads a source's expected columns from the source cache while its code is
    #: unchanged (`source_cache`); False: every run imports and calls the source
    source_cache: bool = key(True, flag, hint=BOOL)
    #: seconds a source's import and build may take before it is an error on that source
    source_build_timeout: float = key(DEFAULT_SOURCE_BUILD_TIMEOUT, seconds)


#: a field of `SourceSettings` that is no key of its table: the project settings' value
#: (`from_project`)
_FROM_PROJECT = {"from_project": True}


@dataclass(frozen=True)
class SourceSettings:
    """One `[sources.<name>.contract_ops]` table, merged with the project-wide settings."""

    name: str
    ref: str = key(read=as_text)
    pipeline_name: str | None = key(None, as_text)
    #: `source_name`: the source this table declares for one more of its pipelines (`-s
    #: <source_name>` selects every table of it); unset: the table's own name
    source_name: str | None = key(None, as_text)
    destination: str | None = key(None, as_text)
    dataset_name: str | None = key(None, as_text)
    #: added to the project's list
    injected_columns: tuple[str, ...] = key((), as_names)
    #: unset: the project's
    load_timestamp_column: str | None = key(None, as_text)
    #: over the project's, key by key
    removal: RemovalSettings = table(RemovalSettings, removal_keys())  # noqa: RUF009 (a field)
    #: from the project settings: how far back and how many rows the sample query reads
    sample_window: float = field(default=DEFAULT_SAMPLE_WINDOW, metadata=_FROM_PROJECT)
    sample_rows: int = field(default=DEFAULT_SAMPLE_ROWS, metadata=_FROM_PROJECT)
    #: from the project settings: the load profile store
    profile_store: Path | None = field(default=None, metadata=_FROM_PROJECT)
    profile_retention: float = field(default=DEFAULT_PROFILE_RETENTION, metadata=_FROM_PROJECT)
    #: `[sources.<X>.contract_ops.distribution]`: over the project's, key by key
    distribution: DistributionRule = table(  # noqa: RUF009 (a field: `declare.table`)
        DistributionRule, DISTRIBUTION_TABLE
    )
    #: from the project settings: `[contract_ops.rename] min_confidence`
    rename_min_confidence: float = field(
        default=DEFAULT_RENAME_MIN_CONFIDENCE, metadata=_FROM_PROJECT
    )
    #: `[sources.<X>.contract_ops.models]`: (resource, "module:Class") bound by configuration
    models: tuple[tuple[str, str], ...] = key(
        (), as_bindings, hint=Optional[dict[str, Any]]  # noqa: UP045 (dlt's hint)
    )


def from_project(project: ProjectSettings) -> dict[str, Any]:
    """The values a source takes from the project settings, by field of `SourceSettings`."""
    return {f.name: getattr(project, f.name) for f in fields(SourceSettings)
            if f.metadata.get("from_project")}
