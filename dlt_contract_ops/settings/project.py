"""Project and per-source settings, resolved by dlt from its provider chain.

Project-wide settings live in `[contract_ops]`, per-source declarations and overrides in
`[sources.<name>.contract_ops]`. dlt's `resolve_configuration` reads them (environment
variables first, then `secrets.toml`, then `config.toml`), so `SOURCES__GH__CONTRACT_OPS__REF`
overrides the TOML exactly as dlt users expect. A value counts only in its own table: dlt's
lookup would otherwise walk up and read, say, the `[destination]` table as a source's
`destination`.

Each table is declared once, in `settings.tables` (`DedupSettings`, `ProjectSettings`,
`SourceSettings`: their keys, types, defaults and how a value is read); their dlt specs are
made from them (`settings.specs`), and this module resolves and reads them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import ConfigError, UnknownSourceError
from dlt_contract_ops.settings.declare import keys_of, read_keys
from dlt_contract_ops.settings.removal import RemovalSettings as RemovalSettings
from dlt_contract_ops.settings.resolve import _resolve

# the tables, declared where specs are made from them; imported from here as always
from dlt_contract_ops.settings.tables import DEFAULT_LOCK_TIMEOUT, from_project
from dlt_contract_ops.settings.tables import DEFAULT_REALERT_AFTER as DEFAULT_REALERT_AFTER
from dlt_contract_ops.settings.tables import (
    DEFAULT_SOURCE_BUILD_TIMEOUT as DEFAULT_SOURCE_BUILD_TIMEOUT,
)
from dlt_contract_ops.settings.tables import DedupSettings as DedupSettings
from dlt_contract_ops.settings.tables import ProjectSettings as ProjectSettings
from dlt_contract_ops.settings.tables import SourceSettings as SourceSettings
from dlt_contract_ops.settings.values import _seconds, as_text, where
from dlt_contract_ops.statefile import project_key, state_dir

PROJECT_SECTION = "contract_ops"
#: dlt-ops names its load-time column here; a project that set it has that column in every
#: table, so it is read when ours (`[contract_ops] load_timestamp_column`) is not set
PEER_LOAD_TIMESTAMP_KEY = "dlt_ops.load_timestamp_column"


def _peer_load_timestamp_column() -> str | None:
    """`[dlt_ops] load_timestamp_column` (or `DLT_OPS__LOAD_TIMESTAMP_COLUMN`), through dlt's
    own providers; None when unset."""
    import dlt

    value: Any = dlt.config.get(PEER_LOAD_TIMESTAMP_KEY)
    return as_text(value, PEER_LOAD_TIMESTAMP_KEY) if value is not None else None


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
    from dlt_contract_ops.settings.problems import (
        not_a_table,
        raise_problems,
        table_problems,
        tables_of,
        unread_table_variables,
    )
    from dlt_contract_ops.settings.specs import ProjectSpec

    for section in tables_of(PROJECT_SECTION):
        raise_problems([m for m in [not_a_table(section)] if m])
    raise_problems(unread_table_variables())
    if check_keys:
        raise_problems(table_problems(PROJECT_SECTION))
    spec = _resolve(ProjectSpec(), (PROJECT_SECTION,))
    base = ProjectSettings()
    read = replace(base, **read_keys(keys_of(ProjectSettings), spec, PROJECT_SECTION, base))
    return replace(
        read,
        load_timestamp_column=read.load_timestamp_column or _peer_load_timestamp_column(),
        dedup=replace(read.dedup, lock_timeout=read.lock_timeout),
    )


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


def check_source_tables(project: ProjectSettings, names: Sequence[str]) -> None:
    """Each of `names`' own tables read before anything is swept (memoized for the run, so
    the sweep reads them again for free): a bad value (`min_rows = 0` in a source's
    distribution table, a removal window that is no duration) is exit 2 before any source is
    alerted. A source that is not declared stays an error of its own block."""
    for name in names:
        try:
            load_source_settings(name, project)
        except UnknownSourceError:
            continue


def _load_source_settings(
    name: str, project: ProjectSettings, check_keys: bool
) -> SourceSettings:
    from dlt_contract_ops.settings.problems import (
        not_a_table,
        raise_problems,
        table_problems,
        tables_of,
    )
    from dlt_contract_ops.settings.specs import SourceSpec

    base = source_section(name)
    for section in tables_of(base):
        raise_problems([m for m in [not_a_table(section)] if m])
    if check_keys:
        raise_problems(table_problems(base))
    spec = _resolve(SourceSpec(), ("sources", name, PROJECT_SECTION))
    keys = keys_of(SourceSettings)
    ref = read_keys({"ref": keys.pop("ref")}, spec, base, project).get("ref")
    if ref is None:
        if name in declared_sources():
            raise ConfigError(
                f"`[{base}]` has no `ref`: set it to the source as `module:attribute`, "
                'e.g. `ref = "pipelines.github:github_source"`.'
            )
        raise UnknownSourceError(name, declared_sources(), source_groups())
    module, _, attr = ref.partition(":")
    if not module.strip() or not attr.strip():
        raise ConfigError(
            f'{where(f"{base}.ref")} is "{ref}": write it as `module:attribute`, '
            'e.g. "pipelines.github:github_source".'
        )
    own = read_keys(keys, spec, base, project)
    return SourceSettings(**{
        **from_project(project), **own, "name": name, "ref": ref,
        # the source's list adds to the project-wide one: order kept, duplicates dropped
        "injected_columns": tuple(
            dict.fromkeys(project.injected_columns + own.get("injected_columns", ()))
        ),
        "load_timestamp_column": (
            own.get("load_timestamp_column") or project.load_timestamp_column
        ),
    })


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


def source_groups() -> dict[str, list[str]]:
    """Each `source_name` that `-s` selects by, with the declared tables it groups (the same
    dlt source loaded by other pipelines), in declared order: a table's own name is no group.
    Read as `declared_sources` reads the tables (the files and the environment, which wins as
    in dlt's own resolution), not by resolving each table's settings: a sweep resolves them
    once.

    >>> source_groups()  # doctest: +SKIP
    {'app': ['app_one', 'app_two']}
    """
    from dlt_contract_ops.settings.files import toml_files

    declared = declared_sources()
    owner: dict[str, str] = {}
    for f in toml_files():
        sources = f.doc.get("sources")
        for table, section in (sources.items() if isinstance(sources, Mapping) else ()):
            ops = section.get(PROJECT_SECTION) if isinstance(section, Mapping) else None
            if isinstance(ops, Mapping) and isinstance(ops.get("source_name"), str):
                owner.setdefault(table, ops["source_name"])
    for table in declared:
        env = os.environ.get(f"SOURCES__{table.upper()}__{PROJECT_SECTION.upper()}__SOURCE_NAME")
        if env:
            owner[table] = env
    group: dict[str, list[str]] = {}
    for table in declared:
        if owner.get(table) and owner[table] != table:
            group.setdefault(owner[table], []).append(table)
    return group


def default_state_file(project_dir: str | os.PathLike[str], data_dir: str | None = None) -> Path:
    """`<data dir>/contract_ops/alert_state/<project name>-<hash of its path>.json` (`data_dir`
    None: the current run context's)."""
    return state_dir(data_dir) / "alert_state" / f"{project_key(project_dir)}.json"
