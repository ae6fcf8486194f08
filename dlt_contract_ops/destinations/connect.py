"""Open a read-only adapter for a source's destination from dlt's configuration chain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dlt_contract_ops.destinations.base import SqlClientAdapter
from dlt_contract_ops.errors import ConfigError, DestinationError, UnsupportedDestinationError
from dlt_contract_ops.registry import DESTINATION_GROUP, closest, load, registered


@dataclass(frozen=True)
class Target:
    """Where a source's data lives, as resolved for this run."""

    pipeline_name: str
    destination: Any  # dlt Destination factory
    destination_type: str  # short name: "duckdb", "postgres", ...
    dataset_name: str


def short_type(destination: Any) -> str:
    return str(destination.destination_type).rsplit(".", 1)[-1]


def resolve_target(
    source: str,
    pipeline_name: str,
    destination: str | None,
    dataset_name: str | None,
    project_dir: str,
) -> Target:
    """Destination and dataset from config, else from the pipeline's local state."""
    from dlt.common.destination import Destination

    if destination and dataset_name:
        factory = Destination.from_reference(destination)
        if factory is None:  # only for an empty reference, which the guard above excludes
            raise ConfigError(f"Source `{source}`: `destination` is empty.")
        spec_fields = getattr(factory.spec, "__dataclass_fields__", {})
        extra = {k: v for k, v in (("pipeline_name", pipeline_name), ("local_dir", project_dir))
                 if k in spec_fields}
        if extra:
            factory = Destination.from_reference(destination, **extra)
        return Target(pipeline_name, factory, short_type(factory), dataset_name)

    import dlt
    from dlt.pipeline.exceptions import CannotRestorePipelineException

    try:
        pipeline = dlt.attach(pipeline_name)
    except CannotRestorePipelineException as exc:
        missing = " and ".join(
            f"`{k}`" for k, v in (("destination", destination), ("dataset_name", dataset_name))
            if not v
        )
        raise ConfigError(
            f"Source `{source}`: {missing} not configured and pipeline `{pipeline_name}` has no "
            f"local state here. Set {missing} in `[sources.{source}.contract_ops]` or run the "
            "pipeline on this machine once."
        ) from exc
    factory = Destination.from_reference(destination) if destination else pipeline.destination
    if factory is None:
        raise ConfigError(
            f"Source `{source}`: pipeline `{pipeline_name}` has no destination; set "
            f"`destination` in `[sources.{source}.contract_ops]`."
        )
    dataset = dataset_name or pipeline.dataset_name
    return Target(pipeline_name, factory, short_type(factory), dataset)


#: extras of dlt-contract-ops that install a destination's driver
EXTRAS = {"postgres": "postgres", "sqlalchemy": "sqlalchemy", "bigquery": "bigquery",
          "snowflake": "snowflake"}


def adapter_class(destination_type: str) -> type[SqlClientAdapter]:
    """The adapter registered for `destination_type`; a clear refusal for a core-tier one.

    >>> adapter_class("duckdb").__name__
    'DuckDBAdapter'
    """
    names = sorted(registered(DESTINATION_GROUP))
    try:
        cls = load(DESTINATION_GROUP, destination_type)
    except KeyError:
        hint = closest(destination_type, names)
        raise UnsupportedDestinationError(
            f"Destination `{destination_type}` is core tier: dlt loads it, but no reconciler "
            f"adapter is registered for it (registered: {', '.join(names) or 'none'})."
            + (f" Did you mean `{hint}`?" if hint else "")
            + " Install a package that registers one in the entry-point group "
            f"`{DESTINATION_GROUP}`, or write one (docs/destinations.md)."
        ) from None
    except Exception as exc:
        extra = EXTRAS.get(destination_type)
        fix = (f"pip install 'dlt-contract-ops[{extra}]'" if extra
               else "reinstall the package that registers it")
        raise UnsupportedDestinationError(
            f"The adapter for destination `{destination_type}` failed to load: {exc}. "
            f"Fix: `{fix}`."
        ) from exc
    return cls  # type: ignore[no-any-return]


def open_adapter(target: Target, schema: Any) -> SqlClientAdapter:
    """A read-only adapter bound to the target dataset, credentials from dlt's config chain."""
    from dlt.common.configuration.exceptions import ConfigFieldMissingException
    from dlt.common.configuration.resolve import inject_section
    from dlt.common.configuration.specs.config_section_context import ConfigSectionContext
    from dlt.common.exceptions import MissingDependencyException
    from dlt.dataset.utils import get_destination_clients

    cls = adapter_class(target.destination_type)
    try:
        with inject_section(ConfigSectionContext(pipeline_name=target.pipeline_name, sections=())):
            job_client, _ = get_destination_clients(
                schema, destination=target.destination, destination_dataset_name=target.dataset_name
            )
    except ConfigFieldMissingException as exc:
        raise DestinationError(
            f"Credentials for destination `{target.destination_type}` (pipeline "
            f"`{target.pipeline_name}`) are not configured: {exc}"
        ) from exc
    except MissingDependencyException as exc:
        raise DestinationError(
            f"Destination `{target.destination_type}` (pipeline `{target.pipeline_name}`) "
            f"needs its driver: `pip install 'dlt[{target.destination_type}]'` "
            f"(or `pip install 'dlt-contract-ops[{target.destination_type}]'`). {exc}"
        ) from exc
    except Exception as exc:
        raise DestinationError(
            f"Cannot set up destination `{target.destination_type}` for pipeline "
            f"`{target.pipeline_name}`: {exc}"
        ) from exc
    return cls.from_job_client(job_client)
