"""The DestinationAdapter protocol: everything the reconciler calls on an adapter.

An adapter registered in the `dlt_contract_ops.destinations` entry-point group is checked
against `MEMBERS` (the protocol's own members) and its declared `Capabilities` when it loads
(`destinations.connect.adapter_class`), so a missing member or a wrong declaration is an
error naming the entry point and its distribution, not an AttributeError mid-run.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from sqlglot import exp

from dlt_contract_ops.core.columns import LiveTable
from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.timeouts import Timeouts

__all__ = [
    "MEMBERS", "Capabilities", "DestinationAdapter", "FileAdapter", "OpensEarly", "QueryKind",
    "protocol_problems",
]

#: "schema": dlt's stored schema in the dataset (`_dlt_version`), read when a modelled table
#: is absent, to tell one dropped from one never loaded (`sources/loaded.py`)
QueryKind = Literal["metadata", "sample", "coverage", "partition", "profile", "loads", "schema"]


@runtime_checkable
class DestinationAdapter(Protocol):
    """What the reconciler needs from a destination. Implement it to add one.

    `SqlClientAdapter` implements all of it over a dlt SQL client; subclass it unless the
    destination has none.
    """

    #: the dlt destination type, and the entry-point name
    name: ClassVar[str]
    #: what the destination can do: dialect, approximate distinct, regex, read-only
    #: session, pool size, ... (`capabilities.py`); callers ask it, never probe the adapter
    capabilities: ClassVar[Capabilities]

    @classmethod
    def from_job_client(
        cls, job_client: Any, *, timeouts: Timeouts = ...
    ) -> DestinationAdapter:
        """Build on dlt's job client for the dataset: read-only session, `timeouts` applied."""
        ...

    @property
    def dataset(self) -> str:
        """The dataset name as dlt's schema knows it."""
        ...

    @property
    def location(self) -> str:
        """Where the data lives (host/port/database or file), no secrets: two datasets of the
        same name on different servers must not share a metadata cache entry."""
        ...

    @property
    def queries(self) -> Mapping[str, int]:
        """Queries run so far, per `QueryKind` (the query budget tests and `make bench`)."""
        ...

    @property
    def query_seconds(self) -> Mapping[str, float]:
        """Seconds spent in queries so far, per `QueryKind`."""
        ...

    def list_columns(self) -> dict[str, LiveTable]:
        """Every table of the dataset with its columns, in ONE metadata query."""
        ...

    def run(
        self, query: exp.Expression, params: Sequence[Any], kind: QueryKind, *,
        owned: bool = False,
    ) -> list[tuple[Any, ...]]:
        """Run a read-only query (rendered through the one renderer) with bound parameters.
        Raises `QueryTimeoutError` when it runs out of time; a KeyboardInterrupt while it runs
        cancels it on the server before propagating. `owned`: the caller built `query` for
        this run alone, so it may be rendered in place instead of copied."""
        ...

    def run_all(
        self, batch: Sequence[tuple[exp.Expression, Sequence[Any]]], kind: QueryKind, *,
        owned: bool = False,
    ) -> list[list[tuple[Any, ...]] | Exception]:
        """Run independent queries; each result, or the exception it raised, in order."""
        ...

    def partition_column(self, table: str) -> str | None:
        """The column the destination partitions `table` on, if any."""
        ...

    def table(self, name: str) -> exp.Table:
        """A fully qualified, quoted reference to `name` in the dataset."""
        ...

    def reproduce(self, query: exp.Expression, params: Sequence[Any]) -> str:
        """The query as text a user pastes into the destination's console."""
        ...

    def type_mapper(self) -> Any:
        """dlt's type mapper for the destination: reads live types back as dlt data types."""
        ...

    def cancel(self) -> None:
        """Stop the running query on the server and refuse later ones. Thread-safe, idempotent,
        callable from a signal handler; the adapter is done afterwards (close it)."""
        ...

    def close(self) -> None:
        """Close the connection (idempotent)."""
        ...


@runtime_checkable
class FileAdapter(DestinationAdapter, Protocol):
    """An adapter whose tables are folders of files: what `Capabilities.over_files` promises."""

    #: after `list_columns`: what kept a table from being read in full, or is worth a note
    read_problems: tuple[Any, ...]
    #: the data files the queries scanned (path -> scans)
    files_read: Mapping[str, int]

    def table_folder(self, name: str) -> str:
        """Where `name`'s files are (a URL for a remote bucket)."""
        ...


@runtime_checkable
class OpensEarly(DestinationAdapter, Protocol):
    """An adapter whose connection can start opening before its first query: what
    `Capabilities.opens_early` promises."""

    def open_soon(self) -> None:
        """Start opening the connection on the adapter's own thread and return at once; its
        outcome, an error included, is the first query's."""
        ...


def _members(protocol: type) -> tuple[str, ...]:
    """A protocol's own members in the order it declares them (attributes, then methods)."""
    names = [n for n in inspect.get_annotations(protocol) if not n.startswith("_")]
    names += [n for n in protocol.__dict__ if not n.startswith("_") and n not in names]
    return tuple(names)


#: every member of the protocol, as `adapter_class` checks a loaded adapter class
MEMBERS: tuple[str, ...] = _members(DestinationAdapter)
#: what a declared capability adds to the members a class must have
_PROMISED: dict[str, tuple[str, ...]] = {
    "over_files": _members(FileAdapter),
    "opens_early": ("open_soon",),
}


def _declared(cls: type, members: tuple[str, ...] = MEMBERS) -> set[str]:
    """Members a class has, including instance attributes it only annotates."""
    names = {n for n in members if hasattr(cls, n)}
    for klass in cls.__mro__:
        names.update(n for n in getattr(klass, "__annotations__", {}) if n in members)
    return names


def capability_problems(cls: type) -> list[str]:
    """What is wrong with `cls.capabilities`: not a `Capabilities`, a dialect sqlglot does
    not know, no word on how the session is read-only, a pool of no session, or a promise
    (`over_files`) the class does not keep."""
    caps = getattr(cls, "capabilities", None)
    if caps is None:
        if "capabilities" not in _declared(cls):
            return []  # reported as a missing member
        return ["`capabilities` is annotated but not set: declare `capabilities = "
                "Capabilities(dialect=..., read_only=...)` on the class"]
    if not isinstance(caps, Capabilities):
        return [f"`capabilities` is a `{type(caps).__name__}`, not a "
                "`dlt_contract_ops.destinations.capabilities.Capabilities`"]
    from sqlglot.dialects.dialect import Dialect

    problems = []
    try:
        Dialect.get_or_raise(caps.dialect)
    except ValueError:
        problems.append(f"`capabilities.dialect` `{caps.dialect}` is not a sqlglot dialect")
    if not caps.read_only.strip():
        problems.append("`capabilities.read_only` is empty: say how the session is read-only")
    if caps.pool_size < 1:
        problems.append(f"`capabilities.pool_size` is {caps.pool_size}: at least 1")
    for flag, needs in _PROMISED.items():
        if getattr(caps, flag):
            have = _declared(cls, needs)
            problems += [f"`capabilities.{flag}` without `{m}`" for m in needs if m not in have]
    return problems


def protocol_problems(cls: object) -> list[str]:
    """What keeps `cls` from being a DestinationAdapter class: missing members (in protocol
    order), a wrong `capabilities` declaration, and a `from_job_client` that cannot take
    `timeouts=`. Empty when it conforms.

    >>> protocol_problems(int)[0]
    'missing `name`'
    """
    if not isinstance(cls, type):
        return [f"the entry point names a `{type(cls).__name__}` object, not a class"]
    have = _declared(cls)
    problems = [f"missing `{m}`" for m in MEMBERS if m not in have]
    problems += capability_problems(cls)
    factory = getattr(cls, "from_job_client", None)
    if factory is not None:
        try:
            params = inspect.signature(factory).parameters
        except (TypeError, ValueError):  # a C callable: construction will tell
            return problems
        takes = "timeouts" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
        if not takes:
            problems.append("`from_job_client` does not accept the keyword `timeouts`")
    return problems
