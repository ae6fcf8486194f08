"""Queries on an adapter's session: a query prepared for the driver, a job queued on the
session, and the queue `SqlClientAdapter.run_all` keeps, two deep (the running query and the
next one behind it), so the session goes from one statement straight to the next."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlglot import exp

from dlt_contract_ops.destinations.protocol import QueryKind
from dlt_contract_ops.destinations.shapes import ShapedQuery

Rows = list[tuple[Any, ...]]
#: what an adapter runs: a tree, or a table's query of a shape
Query = exp.Expression | ShapedQuery


@dataclass(frozen=True)
class PreparedQuery:
    """A query rendered for the driver: the tree errors name tables from, its text, values.
    `naming`: the tree, or how to build it (a shaped query's, built only if an error needs
    it: most queries never fail)."""

    naming: exp.Expression | Callable[[], exp.Expression]
    sql: str
    values: list[Any]
    kind: QueryKind

    @property
    def named(self) -> exp.Expression:
        """The tree errors name tables from."""
        return self.naming if isinstance(self.naming, exp.Expression) else self.naming()


@dataclass
class Running:
    """A job queued on the session: its future yields (rows, seconds it ran); `began` gets
    the monotonic time the session thread started it."""

    job: PreparedQuery
    future: Future[tuple[Sequence[Sequence[Any]] | None, float]]
    began: list[float] = field(default_factory=list)


def withdraw(queued: Running | None, future: Future[Any]) -> list[Future[Any]]:
    """Withdraw `queued` unless the session has started it; what is left to wait for."""
    if queued is None or queued.future.cancel():
        return [future]
    return [future, queued.future]


class Queue(Protocol):
    """What `run_queued` asks of an adapter (a `SqlClientAdapter` is one)."""

    def prepared(
        self, query: Query, params: Sequence[Any], kind: QueryKind,
        owned: bool,
    ) -> PreparedQuery: ...

    def _start(self, job: PreparedQuery) -> Running: ...

    def _collect(self, running: Running, queued: Running | None = None) -> Rows: ...


def run_queued(
    queue: Queue, batch: Sequence[tuple[Query, Sequence[Any]]],
    kind: QueryKind, *, owned: bool = False,
) -> list[Rows | Exception]:
    """`SqlClientAdapter.run_all`: each query's rows or exception, in order, the next one
    queued behind the running one (re-queued when it was withdrawn at a time-out)."""
    out: list[Rows | Exception | None] = [None] * len(batch)
    flight: deque[tuple[int, Running]] = deque()  # at most two: running, queued

    def settle_oldest() -> None:
        index, running = flight.popleft()
        queued = flight[0][1] if flight else None
        try:
            out[index] = queue._collect(running, queued)
        except Exception as exc:
            out[index] = exc
        if queued is not None and queued.future.cancelled():  # withdrawn: queue it again
            try:
                flight[0] = (flight[0][0], queue._start(queued.job))
            except Exception as exc:
                out[flight.popleft()[0]] = exc

    for index, (query, params) in enumerate(batch):
        try:  # rendered while the queries ahead of it run
            job = queue.prepared(query, params, kind, owned)
        except Exception as exc:
            out[index] = exc
            continue
        if len(flight) == 2:
            settle_oldest()
        try:
            flight.append((index, queue._start(job)))
        except Exception as exc:
            out[index] = exc
    while flight:
        settle_oldest()
    assert all(o is not None for o in out)  # every query got its rows or its exception
    return out  # type: ignore[return-value]
