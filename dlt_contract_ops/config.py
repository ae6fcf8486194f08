"""Project and per-source settings, resolved through dlt's configuration machinery.

Project-wide settings live in `[contract_ops]`, per-source declarations and overrides in
`[sources.<name>.contract_ops]`. Values come from dlt's provider chain (environment variables
first, then `.dlt/secrets.toml`, then `.dlt/config.toml`), so `SOURCES__GH__CONTRACT_OPS__REF`
overrides the TOML exactly as dlt users expect.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dlt_contract_ops.errors import ConfigError

PROJECT_SECTION = "contract_ops"

PROJECT_KEYS = frozenset(
    {"alert_sinks", "injected_columns", "load_timestamp_column", "removal", "alert_sink", "dedup"}
)
SOURCE_KEYS = frozenset(
    {
        "ref",
        "pipeline_name",
        "destination",
        "dataset_name",
        "injected_columns",
        "load_timestamp_column",
        "removal",
    }
)


@dataclass(frozen=True)
class ProjectSettings:
    """The `[contract_ops]` table."""

    alert_sinks: tuple[str, ...] = ("logging",)
    injected_columns: tuple[str, ...] = ()
    load_timestamp_column: str | None = None
    removal: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceSettings:
    """One `[sources.<name>.contract_ops]` table, merged with the project-wide settings."""

    name: str
    ref: str
    pipeline_name: str | None = None
    destination: str | None = None
    dataset_name: str | None = None
    injected_columns: tuple[str, ...] = ()
    load_timestamp_column: str | None = None
    removal: Mapping[str, Any] = field(default_factory=dict)


@contextlib.contextmanager
def project_context(project_dir: str | os.PathLike[str] | None) -> Iterator[str]:
    """Point dlt's run context (its `.dlt/` settings and local files) at `project_dir`.

    The previous run directory is restored on exit, so a library caller's own dlt context is
    left as it was.
    """
    import dlt  # noqa: F401  (initializes the default run context)
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    target = os.path.abspath(os.fspath(project_dir)) if project_dir is not None else os.getcwd()
    ctx = Container()[PluggableRunContext]
    previous = ctx.context.run_dir
    # Always reload, even when the run dir already names the target: dlt's default run dir
    # is the relative ".", whose TOML files were read in whatever directory was current at
    # the time, and files edited since then would otherwise go unseen.
    ctx.reload(target)
    try:
        yield target
    finally:
        ctx.reload(previous)


def _env_name(key: str) -> str:
    return "__".join(key.upper().split("."))


def _where(key: str) -> str:
    """`key` as a user finds it: the TOML table and key, and the environment variable."""
    section, _, name = key.rpartition(".")
    return f"`{name}` in `[{section}]` (or the environment variable `{_env_name(key)}`)"


def _config_get(key: str) -> Any:
    import dlt

    try:
        return dlt.config.get(key)
    except Exception as exc:  # dlt raises several types for a value it cannot read
        raise ConfigError(f"Cannot read {_where(key)}: {exc}") from exc


def _as_str_tuple(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        # an environment variable holds a list as JSON or as one bare name
        import json

        try:
            value = json.loads(value)
        except ValueError:
            value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            f"{_where(key)} must be a list of strings, e.g. `{key.rpartition('.')[2]} = "
            f'["ingested_by"]`; got {value!r}.'
        )
    return tuple(value)


def _as_opt_str(value: Any, key: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{_where(key)} must be a string, got {value!r}.")
    return value


def _toml_tables() -> list[tuple[str, Mapping[str, Any]]]:
    """(file location, document) of every TOML provider dlt has loaded, config and secrets."""
    import dlt

    docs: list[tuple[str, Mapping[str, Any]]] = []
    for provider in dlt.config.config_providers:
        doc = getattr(provider, "_config_doc", None)
        if isinstance(doc, Mapping):
            where = ", ".join(getattr(provider, "locations", []) or [provider.name])
            docs.append((where, doc))
    return docs


def _unknown_keys(table: Mapping[str, Any], allowed: frozenset[str], where: str) -> list[str]:
    problems = []
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(key, sorted(allowed), n=1)
            hint = f" Did you mean `{close[0]}`?" if close else ""
            problems.append(f"Unknown key `{key}` in {where}.{hint}")
    return problems


def _project_problems() -> list[str]:
    problems: list[str] = []
    for where, doc in _toml_tables():
        project = doc.get(PROJECT_SECTION)
        if isinstance(project, Mapping):
            problems += _unknown_keys(project, PROJECT_KEYS, f"`[{PROJECT_SECTION}]` ({where})")
    return problems


def _source_problems(name: str) -> list[str]:
    problems: list[str] = []
    for where, doc in _toml_tables():
        sources = doc.get("sources")
        table = sources.get(name) if isinstance(sources, Mapping) else None
        sect = table.get(PROJECT_SECTION) if isinstance(table, Mapping) else None
        if isinstance(sect, Mapping):
            label = f"`[sources.{name}.{PROJECT_SECTION}]` ({where})"
            problems += _unknown_keys(sect, SOURCE_KEYS, label)
    return problems


def config_problems() -> list[str]:
    """Unknown keys in `[contract_ops]` and `[sources.*.contract_ops]`, with file names."""
    problems = _project_problems()
    for name in declared_sources():
        problems += _source_problems(name)
    return problems


def _raise_problems(problems: list[str]) -> None:
    if problems:
        raise ConfigError(" ".join(problems))


def declared_sources() -> list[str]:
    """Names of every source that has a `[sources.<name>.contract_ops]` table (in a TOML
    file, or as a `SOURCES__<NAME>__CONTRACT_OPS__REF` environment variable), sorted."""
    names: set[str] = set()
    suffix = f"__{PROJECT_SECTION.upper()}__REF"
    for var in os.environ:
        if var.startswith("SOURCES__") and var.endswith(suffix):
            name = var[len("SOURCES__") : -len(suffix)]
            if name and "__" not in name:
                names.add(name.lower())
    for _location, doc in _toml_tables():
        sources = doc.get("sources")
        if isinstance(sources, Mapping):
            for name, table in sources.items():
                if isinstance(table, Mapping) and isinstance(table.get(PROJECT_SECTION), Mapping):
                    names.add(name)
    return sorted(names)


def _table(key: str) -> Mapping[str, Any]:
    value = _config_get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"`[{key}]` must be a table, got {value!r}.")
    return dict(value)


def load_project_settings() -> ProjectSettings:
    """Read `[contract_ops]` through dlt's provider chain; ConfigError on an unknown key."""
    _raise_problems(_project_problems())
    p = PROJECT_SECTION
    sinks_raw = _config_get(f"{p}.alert_sinks")
    sinks = ("logging",) if sinks_raw is None else _as_str_tuple(sinks_raw, f"{p}.alert_sinks")
    return ProjectSettings(
        alert_sinks=sinks,
        injected_columns=_as_str_tuple(
            _config_get(f"{p}.injected_columns"), f"{p}.injected_columns"
        ),
        load_timestamp_column=_as_opt_str(
            _config_get(f"{p}.load_timestamp_column"), f"{p}.load_timestamp_column"
        ),
        removal=_table(f"{p}.removal"),
    )


def load_source_settings(name: str, project: ProjectSettings) -> SourceSettings:
    """Read `[sources.<name>.contract_ops]`; raise UnknownSourceError when it has no `ref`."""
    from dlt_contract_ops.errors import UnknownSourceError

    base = f"sources.{name}.{PROJECT_SECTION}"
    _raise_problems(_source_problems(name))
    ref = _as_opt_str(_config_get(f"{base}.ref"), f"{base}.ref")
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
            f'{_where(f"{base}.ref")} is "{ref}": write it as `module:attribute`, '
            'e.g. "pipelines.github:github_source".'
        )
    own_injected = _as_str_tuple(
        _config_get(f"{base}.injected_columns"), f"{base}.injected_columns"
    )
    # the source's list adds to the project-wide one: order kept, duplicates dropped
    injected = tuple(dict.fromkeys(project.injected_columns + own_injected))
    ts = _as_opt_str(
        _config_get(f"{base}.load_timestamp_column"), f"{base}.load_timestamp_column"
    )
    removal = {**project.removal, **_table(f"{base}.removal")}
    return SourceSettings(
        name=name,
        ref=ref,
        pipeline_name=_as_opt_str(_config_get(f"{base}.pipeline_name"), f"{base}.pipeline_name"),
        destination=_as_opt_str(_config_get(f"{base}.destination"), f"{base}.destination"),
        dataset_name=_as_opt_str(_config_get(f"{base}.dataset_name"), f"{base}.dataset_name"),
        injected_columns=injected,
        load_timestamp_column=ts or project.load_timestamp_column,
        removal=removal,
    )
