"""One way to go from a declared source name to what the commands need: its settings, the
built source (models, naming), and where its data lives. Shared by reconcile, validate and
the contract commands, so a source resolves the same way everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings.project import (
    ProjectSettings,
    SourceSettings,
    load_source_settings,
)

if TYPE_CHECKING:
    from dlt_contract_ops.destinations.connect import Target
    from dlt_contract_ops.destinations.protocol import DestinationAdapter
    from dlt_contract_ops.sources.discovery import BuiltSource


@dataclass(frozen=True)
class ResolvedSource:
    """A declared source: its settings merged with the project's, and the built source."""

    settings: SourceSettings
    built: BuiltSource

    @property
    def name(self) -> str:
        return self.settings.name


def resolve_source(
    name: str, project: ProjectSettings, project_dir: str, *, cached: bool = False
) -> ResolvedSource:
    """Settings of `name` and its source built once (imported and called).

    `cached`: from the source cache when the source's code has not changed since it was
    cached (`source_cache`; a reconcile), else built and cached. The models and the dlt
    object of a cached source are built on first access. A build is bounded by
    `source_build_timeout` (SourceBuildTimeoutError).
    """
    settings = load_source_settings(name, project)
    if cached and project.source_cache:
        from dlt_contract_ops.sources.cache import cached_source

        built = cached_source(name, settings.ref, project_dir, project.source_build_timeout,
                              settings.pipeline_name, bound=settings.models)
        return ResolvedSource(settings, built)
    from dlt_contract_ops.sources.discovery import build_source

    timeout = project.source_build_timeout
    built = build_source(name, settings.ref, project_dir, timeout=timeout, bound=settings.models)
    return ResolvedSource(settings, built)


def resolve_target_of(
    settings: SourceSettings, project_dir: str, built: BuiltSource | None = None
) -> Target:
    """Destination and dataset of a source: configured, else the pipeline's local state.

    Without a configured `pipeline_name`, and without `destination` and `dataset_name`, a
    source whose name no local pipeline has is looked up by its schema among the local
    pipelines (`built` gives the schema name and tables): `onboarding.pipeline_of`.
    """
    from dlt_contract_ops.destinations.connect import resolve_target

    pipeline_name = settings.pipeline_name
    if pipeline_name is None:
        from dlt_contract_ops.sources.onboarding import pipeline_of

        pipeline_name = pipeline_of(settings, built)
    return resolve_target(
        settings.name,
        pipeline_name,
        settings.destination,
        settings.dataset_name,
        project_dir,
    )


def resolve_target_checked(
    settings: SourceSettings, project_dir: str, built: BuiltSource | None = None
) -> Target:
    """`resolve_target_of`, with a destination dlt cannot resolve (`destination = "duckdbb"`)
    as the configuration error it is (exit 2): the setting, the closest dlt destination."""
    from dlt.common.destination.exceptions import (
        InvalidDestinationReference,
        UnknownDestinationModule,
    )

    try:
        return resolve_target_of(settings, project_dir, built)
    except (UnknownDestinationModule, InvalidDestinationReference):
        raise ConfigError(unknown_destination_message(settings)) from None


def bind_destination(
    settings: SourceSettings, built: BuiltSource, project: ProjectSettings, project_dir: str,
    *, connect: bool = False,
) -> tuple[Target, BuiltSource, DestinationAdapter]:
    """Where the source's data lives, the source named for that destination, and an adapter
    on it that has not connected yet (`connect`, a sweep: whose connection is opening): the
    one way `reconcile` and `validate` resolve a destination, its configuration and
    credentials from dlt's chain included, so `validate` refuses what a sweep would
    (CredentialsMissingError, an unknown destination)."""
    import copy

    from dlt.common.schema import Schema

    from dlt_contract_ops.destinations.connect import open_adapter

    schema = Schema(built.schema_name)
    # the convention the source writes with; a copy, as dlt's client sets its `max_length`
    schema.naming = copy.copy(built.naming)
    # `built` lets a source without `pipeline_name` be matched to its local pipeline
    target = resolve_target_checked(settings, project_dir, built)
    adapter = open_adapter(
        target, schema, query_timeout=project.query_timeout, lock_timeout=project.lock_timeout,
        connect=connect,
    )
    # dlt shortens identifiers to the destination's limit (PostgreSQL: 63 characters) with
    # the capabilities its normalizer asks of the destination, without its configuration
    # (`Pipeline._get_destination_capabilities`): those of the adapter's client are adjusted
    # to the connection (sqlalchemy on MariaDB: 64, where the load shortened to 63), so they
    # are not the ones the data was named with
    try:
        named = built.for_destination(target.destination.capabilities())
    except BaseException:
        adapter.close()  # not the caller's yet
        raise
    return target, named, adapter


def unknown_destination_message(settings: SourceSettings) -> str:
    """What to say about a destination reference dlt cannot resolve."""
    import dlt.destinations

    from dlt_contract_ops.errors import did_you_mean
    from dlt_contract_ops.settings.project import source_section
    from dlt_contract_ops.settings.values import where

    known = sorted(n for n in dlt.destinations.__all__ if n != "destination")
    ref = settings.destination
    if not ref:  # from the pipeline's state: nothing in this project to fix but the source's
        return (
            f"The destination of pipeline `{settings.pipeline_name or settings.name}` (source "
            f"`{settings.name}`) is not one dlt knows: set `destination` in "
            f"`[{source_section(settings.name)}]` to one of {', '.join(known)}."
        )
    return (
        f"Destination `{ref}` of source `{settings.name}` is not a destination dlt knows "
        f"({where(f'{source_section(settings.name)}.destination')})."
        + did_you_mean(ref, known)
        + f" Use a dlt destination ({', '.join(known)}), or give a named destination its "
        f'type in `[destination.{ref}]` (`destination_type = "duckdb"`).'
    )
