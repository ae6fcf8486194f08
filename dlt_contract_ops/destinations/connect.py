"""Open a read-only, time-bounded adapter for a source's destination from dlt's
configuration chain; find and check the adapter class registered for a destination."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any, cast

from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.protocol import (
    DestinationAdapter,
    OpensEarly,
    protocol_problems,
)
from dlt_contract_ops.destinations.timeouts import (
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_QUERY_TIMEOUT,
    Timeouts,
)
from dlt_contract_ops.errors import (
    ConfigError,
    CredentialsMissingError,
    DestinationError,
    NotLoadedError,
    UnsupportedDestinationError,
    did_you_mean,
)
from dlt_contract_ops.registry import (
    DESTINATION_GROUP,
    distribution,
    entry_point,
    registered,
)


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

    from dlt.pipeline.exceptions import CannotRestorePipelineException

    from dlt_contract_ops.sources.onboarding import attached

    try:
        pipeline = attached(pipeline_name)  # once a run (`onboarding.attach_scope`)
    except CannotRestorePipelineException as exc:
        missing = " and ".join(
            f"`{k}`" for k, v in (("destination", destination), ("dataset_name", dataset_name))
            if not v
        )
        raise NotLoadedError(
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


def adapter_class(destination_type: str) -> type[DestinationAdapter]:
    """The adapter registered for `destination_type`, checked against the DestinationAdapter
    protocol; a clear refusal for a core-tier destination or an incomplete adapter.

    >>> adapter_class("duckdb").__name__
    'DuckDBAdapter'
    """
    return checked_adapter_class(*_registered_class(destination_type))


def _registered_class(destination_type: str) -> tuple[Any, EntryPoint]:
    """The class registered for `destination_type`, not yet checked, and its entry point."""
    names = sorted(registered(DESTINATION_GROUP))
    try:
        ep = entry_point(DESTINATION_GROUP, destination_type)
    except KeyError:
        raise UnsupportedDestinationError(
            f"Destination `{destination_type}` is core tier: dlt loads it, but no reconciler "
            f"adapter is registered for it (registered: {', '.join(names) or 'none'})."
            + did_you_mean(destination_type, names)
            + " Install a package that registers one in the entry-point group "
            f"`{DESTINATION_GROUP}`, or write one (docs/destinations.md)."
        ) from None
    try:
        cls = ep.load()
    except Exception as exc:
        extra = EXTRAS.get(destination_type)
        fix = (f"pip install 'dlt-contract-ops[{extra}]'" if extra
               else "reinstall the package that registers it")
        raise UnsupportedDestinationError(
            f"The adapter for destination `{destination_type}` failed to load: {exc}. "
            f"Fix: `{fix}`."
        ) from exc
    return cls, ep


def checked_adapter_class(cls: Any, ep: EntryPoint) -> type[DestinationAdapter]:
    """`cls`, loaded from entry point `ep`, if it implements the DestinationAdapter protocol;
    otherwise an error naming every missing member, the entry point and its distribution."""
    problems = protocol_problems(cls)
    if not problems:
        return cls  # type: ignore[no-any-return]
    dist = distribution(ep)
    source = f"distribution `{dist}`" if dist else "an unknown distribution"
    fix = f"upgrade or uninstall `{dist.split()[0]}`" if dist else "uninstall the plugin"
    raise UnsupportedDestinationError(
        f"The destination adapter registered as `{ep.name}` in the entry-point group "
        f"`{DESTINATION_GROUP}` (`{ep.value}`, from {source}) does not implement the "
        f"DestinationAdapter protocol: {'; '.join(problems)}. Add what is missing (subclassing "
        "`dlt_contract_ops.destinations.base.SqlClientAdapter` provides every member; "
        f"docs/destinations.md, \"Writing an adapter\"), or {fix}."
    )


def open_adapter(
    target: Target,
    schema: Any,
    *,
    query_timeout: float = DEFAULT_QUERY_TIMEOUT,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    connect: bool = False,
) -> DestinationAdapter:
    """A read-only adapter bound to the target dataset, credentials from dlt's config chain.
    `connect`: its connection starts opening on its own thread before this returns (where
    the adapter can: `open_soon`), while the adapter's class is checked against the
    protocol (which loads its SQL dialect); a failure to connect is the first query's.

    Each query may run `query_timeout` seconds and wait `lock_timeout` seconds for a lock;
    past either it raises `QueryTimeoutError`. A KeyboardInterrupt while a query runs
    cancels it on the server; `adapter.cancel()` does the same from any thread.
    """
    timeouts = Timeouts(query=query_timeout, lock=lock_timeout)
    from dlt.common.configuration.exceptions import ConfigFieldMissingException
    from dlt.common.configuration.resolve import inject_section
    from dlt.common.configuration.specs.config_section_context import ConfigSectionContext
    from dlt.common.exceptions import MissingDependencyException
    from dlt.dataset.utils import get_destination_clients

    cls, ep = _registered_class(target.destination_type)
    caps = getattr(cls, "capabilities", None)  # not checked yet: see below
    early = connect and isinstance(caps, Capabilities) and caps.opens_early
    if not early:
        cls = checked_adapter_class(cls, ep)
    try:
        with inject_section(ConfigSectionContext(pipeline_name=target.pipeline_name, sections=())):
            job_client, _ = get_destination_clients(
                schema, destination=target.destination, destination_dataset_name=target.dataset_name
            )
    except ConfigFieldMissingException as exc:
        from dlt_contract_ops.settings.missing import missing_config_message

        # the user's to set: a usage error (exit 2), never an alert; one line (dlt's own
        # text lists every provider it tried, some thirty lines)
        summary = missing_config_message(
            f"Destination `{target.destination_type}` of pipeline `{target.pipeline_name}` is "
            "not configured", exc
        )
        raise CredentialsMissingError(
            f"{summary} (Values passed in the pipeline's code, such as `credentials=` or "
            "`bucket_url=`, are not seen: dlt-contract-ops reads dlt's configuration.)"
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
    if not early:
        return cast("DestinationAdapter", cls.from_job_client(job_client, timeouts=timeouts))
    # the connection opens on the adapter's thread while the class is checked (which loads
    # its SQL dialect): a cold run's start overlaps the two
    try:
        adapter = cls.from_job_client(job_client, timeouts=timeouts)
    except Exception:
        checked_adapter_class(cls, ep)  # one that does not implement the protocol says so
        raise
    try:
        if hasattr(cls, "open_soon"):  # else the check says the promise is not kept
            cast("OpensEarly", adapter).open_soon()
        checked_adapter_class(cls, ep)
    except BaseException:
        with contextlib.suppress(Exception):  # the check's word is the one to raise
            adapter.close()
        raise
    return cast("DestinationAdapter", adapter)
