"""The DestinationAdapter protocol: everything the reconciler calls on an adapter.

An adapter registered in the `dlt_contract_ops.destinations` entry-point group is checked
against `MEMBERS` when it loads (`destinations.connect.adapter_class`), so a missing member is
an error naming the entry point and its distribution, not an AttributeError mid-run.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from sqlglot import exp

from dlt_contract_ops.core.columns import LiveTable
from dlt_contract_ops.destinations.timeouts import Timeouts

__all__ = ["MEMBERS", "DestinationAdapter", "QueryKind", "protocol_problems"]

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
    #: the sqlglot dialect every query renders in
    dialect: ClassVar[str]

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


#: every member of the protocol, as `adapter_class` checks a loaded adapter class
MEMBERS: tuple[str, ...] = (
    "name",
    "dialect",
    "from_job_client",
    "dataset",
    "location",
    "queries",
    "query_seconds",
    "list_columns",
    "run",
    "run_all",
    "partition_column",
    "table",
    "reproduce",
    "type_mapper",
    "cancel",
    "close",
)


def _declared(cls: type) -> set[str]:
    """Members a class has, including instance attributes it only annotates."""
    names = {n for n in MEMBERS if hasattr(cls, n)}
    for klass in cls.__mro__:
        names.update(n for n in getattr(klass, "__annotations__", {}) if n in MEMBERS)
    return names


def protocol_problems(cls: object) -> list[str]:
    """What keeps `cls` from being a DestinationAdapter class: missing members (in protocol
    order), and a `from_job_client` that cannot take `timeouts=`. Empty when it conforms.

    >>> protocol_problems(int)[0]
    'missing `name`'
    """
    if not isinstance(cls, type):
        return [f"the entry point names a `{type(cls).__name__}` object, not a class"]
    have = _declared(cls)
    problems = [f"missing `{m}`" for m in MEMBERS if m not in have]
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
