"""SqlClientAdapter: the DestinationAdapter over a dlt SQL client; subclasses declare what differs.

Every query is prepared (names spelled as the catalog has them), rendered through the one
renderer (SELECT only, before a connection is opened), and run on the adapter's session
thread while the caller waits interruptibly: a query that runs out of time, or is interrupted
(Ctrl-C), is stopped on the server (`_interrupt_query`).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from datetime import datetime, timezone
from typing import Any, ClassVar, TypeVar

from sqlglot import exp

from dlt_contract_ops.core.columns import LiveTable
from dlt_contract_ops.destinations.batch import (
    PreparedQuery,
    Query,
    Rows,
    Running,
    run_queued,
    withdraw,
)
from dlt_contract_ops.destinations.capabilities import Capabilities
from dlt_contract_ops.destinations.connection import CANCEL_GRACE, ClientSession
from dlt_contract_ops.destinations.naming import CatalogNames, capabilities, data_location
from dlt_contract_ops.destinations.protocol import QueryKind
from dlt_contract_ops.destinations.session import DeadlinePassed, settle, wait_for
from dlt_contract_ops.destinations.shapes import Shape, ShapedQuery, Templates
from dlt_contract_ops.destinations.sql import (
    COMPARISONS,
    ParamStyle,
    bind_marks,
    compared_column,
    ident,
    inline_params,
    render,
    render_bound,
)
from dlt_contract_ops.destinations.timeouts import (
    DEFAULT_TIMEOUTS,
    TimeoutReason,
    Timeouts,
    queried_tables,
    timeout_error,
    timeout_reason,
)
from dlt_contract_ops.errors import DestinationError

__all__ = ["SERVER_GRACE", "PreparedQuery", "Rows", "SqlClientAdapter", "data_location", "shaped"]

_A = TypeVar("_A", bound="SqlClientAdapter")
#: on top of twice the server's own statement timeout: the adapter's backstop for a server
#: that stops answering altogether
SERVER_GRACE = 10.0


def shaped(
    adapter: Any, shape: Shape, table: str, names: Sequence[str]
) -> exp.Expression | ShapedQuery:
    """`table`'s query of `shape`: shaped (one template per shape, filled in per table) where
    the adapter declares `prepared_queries`, else its tree (what any adapter runs)."""
    query = ShapedQuery(shape, table, tuple(names))
    return query if adapter.capabilities.prepared_queries else query.expression(adapter)


def _reads_a_table(column: exp.Column) -> bool:
    """Whether the innermost SELECT around `column` reads a table (not a subquery)."""
    select = column.find_ancestor(exp.Select)
    source = select.args.get("from_") if select is not None else None
    return source is not None and isinstance(source.this, exp.Table)


class SqlClientAdapter(CatalogNames, ClientSession):
    """A DestinationAdapter over a dlt `SqlClientBase`; subclasses declare what differs:
    `name` (the dlt destination type, the entry-point name), `capabilities` (its dialect, who
    bounds a query's time, ...), `paramstyle`, `metadata_schema_column`. Hooks:
    `metadata_query`/`metadata_params`, `adapt_param`, `coerce_placeholder`,
    `_before_open`/`_on_open` (make a session read-only, apply the timeouts), `_execute`,
    `_interrupt_query` (stop the running statement server-side).
    """

    name: ClassVar[str] = "sql"
    #: each subclass declares its own (`prepared_queries=True`: it inherits `run`, which
    #: takes a `ShapedQuery`); none here, so a subclass that forgets is refused when it loads
    capabilities: ClassVar[Capabilities]
    paramstyle: ClassVar[ParamStyle] = "format"

    location: str
    queries: Counter[str]
    query_seconds: defaultdict[str, float]

    def __init__(
        self,
        sql_client: Any,
        *,
        dataset: str | None = None,
        catalog: str | None = None,
        casefold: Callable[[str], str] | None = None,
        location: str = "",
        timeouts: Timeouts = DEFAULT_TIMEOUTS,
    ) -> None:
        CatalogNames.__init__(
            self,
            dataset=dataset if dataset is not None else str(sql_client.dataset_name),
            catalog=catalog,
            casefold=(
                casefold if casefold is not None else sql_client.capabilities.casefold_identifier
            ),
        )
        ClientSession.__init__(self, sql_client, location=location)
        self.timeouts = timeouts
        self.shapes = Templates()  # per-table queries of one shape, rendered once
        self.queries = Counter()
        self.query_seconds = defaultdict(float)

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_job_client(
        cls, job_client: Any, *, timeouts: Timeouts = DEFAULT_TIMEOUTS
    ) -> SqlClientAdapter:
        """Build from a dlt job client; subclasses make the session read-only here and apply
        `timeouts` to it."""
        return cls(
            job_client.sql_client, location=data_location(job_client.config), timeouts=timeouts
        )

    @classmethod
    def offline(cls: type[_A], dataset: str, *, catalog: str | None = None) -> _A:
        """An adapter that builds and renders queries but has no connection (golden tests,
        docs). Casefolding comes from dlt's capabilities for `name`; `run` refuses.

        >>> SqlClientAdapter.offline("raw").name
        'sql'
        """
        caps = capabilities(cls.destination_type())
        return cls(None, dataset=dataset, catalog=catalog, casefold=caps.casefold_identifier)

    @classmethod
    def destination_type(cls) -> str:
        """The dlt destination whose capabilities an offline adapter borrows."""
        return cls.name if cls.name != "sql" else "duckdb"

    # -- types and metadata ---------------------------------------------------------------
    def type_mapper(self) -> Any:
        """dlt's type mapper for this destination: reads live types back as dlt data types."""
        if self._client is not None:
            return self._client.capabilities.get_type_mapper()
        return capabilities(self.destination_type()).get_type_mapper()

    def list_columns(self) -> dict[str, LiveTable]:
        """Every table of the dataset with its columns, in ONE metadata query."""
        rows = self.run(self.metadata_query(), self.metadata_params(), "metadata")
        return self.read_metadata(rows)

    # -- queries --------------------------------------------------------------------------
    def adapt_param(self, value: Any) -> Any:
        """A parameter as the driver should bind it. A naive datetime is taken as UTC."""
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value

    def coerce_placeholder(self, placeholder: exp.Expression, live_type: str) -> exp.Expression:
        """Hook: wrap a parameter compared with a column of `live_type` so the comparison
        type-checks on this destination (BigQuery will not compare DATE with TIMESTAMP)."""
        return placeholder

    def prepare(
        self, query: exp.Expression, *, owned: bool = False,
        lookup: Callable[[Sequence[str], str], tuple[str, str] | None] | None = None,
    ) -> exp.Expression:
        """A copy of `query` with columns spelled as the destination stores them and
        parameters coerced to the type of the column they are compared with; `owned`: the
        caller hands `query` over (built for this one run), so it is changed in place.
        `lookup` stands in for `catalog_column` (a shape's template, `shapes.py`)."""
        catalog_column = lookup or self.catalog_column
        q = query if owned else query.copy()
        # one walk collects what the rewrite needs; the rewrite then edits those nodes in place
        tables: list[str] = []
        aliases: set[str] = set()
        comparisons: list[exp.Expression] = []
        quoted_columns: list[exp.Column] = []
        for node in q.walk():
            if isinstance(node, exp.Table):
                tables.append(node.name)
            elif isinstance(node, exp.Alias):
                aliases.add(node.alias)
            elif isinstance(node, COMPARISONS):
                comparisons.append(node)
            elif (
                isinstance(node, exp.Column)
                and isinstance(node.this, exp.Identifier)
                and node.this.quoted
            ):
                quoted_columns.append(node)

        for cmp in comparisons:
            pair = compared_column(cmp)
            if pair is not None:
                column, placeholder = pair
                found = catalog_column(tables, column.name)
                if found is not None:
                    placeholder.replace(self.coerce_placeholder(placeholder.copy(), found[1]))

        # A column in a SELECT that reads a table is a table column; in a SELECT over a
        # subquery it is either such a column passed through (spelled the same way) or an
        # output alias of the subquery (left alone).
        table_columns = {n.name for n in quoted_columns if _reads_a_table(n)}
        for node in quoted_columns:
            found = catalog_column(tables, node.name)
            if found is not None:
                spelled = found[0]
            elif node.name in aliases and node.name not in table_columns:
                continue  # an output name of a subquery, not a table column
            else:
                spelled = self.to_live(node.name)
            if spelled != node.name:
                node.set("this", ident(spelled))
        return q

    def render(self, query: exp.Expression) -> str:
        """The query in this destination's dialect, as it would run (placeholders as `?`)."""
        return render(self.prepare(query), self.capabilities.dialect, owned=True)

    def driver_sql(
        self, query: Query, n_params: int, kind: QueryKind, *, owned: bool = False,
    ) -> str:
        """The exact text `run` sends to the driver: prepared, checked, placeholders in
        the driver's paramstyle. Golden tests pin it for destinations that cannot run here.
        `owned`: `query` is handed over and rendered in place, never copied (its placeholders
        are gone after: it cannot be rendered again). A `ShapedQuery` is filled in from its
        shape's template (`shapes.py`): the same text as its tree renders."""
        if isinstance(query, ShapedQuery):
            text, marks = self.shapes.marked(self, query)
            return bind_marks(text, marks, self.paramstyle, n_params)
        if kind == "metadata":
            return render_bound(query, self.capabilities.dialect, self.paramstyle, n_params,
                                owned=owned)
        # `prepare` returns a copy of its own (or the handed-over tree): rendered in place
        prepared = self.prepare(query, owned=owned)
        return render_bound(prepared, self.capabilities.dialect, self.paramstyle, n_params,
                            owned=True)

    def run(
        self, query: Query, params: Sequence[Any], kind: QueryKind, *,
        owned: bool = False,
    ) -> Rows:
        """Run a read-only query with bound parameters on the adapter's session.

        Raises `QueryTimeoutError` (naming the table) when it runs out of time; a
        KeyboardInterrupt meanwhile cancels it on the server, then propagates. `owned`: the
        caller built `query` for this run alone and hands it over; it is rendered in place
        instead of copied (a few hundred microseconds per wide query).
        """
        # refuses non-SELECT before a connection is even opened
        job = self.prepared(query, params, kind, owned)
        return self._collect(self._start(job))

    def prepared(
        self, query: Query, params: Sequence[Any], kind: QueryKind, owned: bool,
    ) -> PreparedQuery:
        """`query` rendered for the driver (the read-only check included), values adapted,
        and the tree an error about it names the tables of (for a `ShapedQuery`, a bare
        `SELECT *` of its table: its full tree is never built)."""
        sql = self.driver_sql(query, len(params), kind, owned=owned)
        if isinstance(query, ShapedQuery):
            table = query.table

            def named() -> exp.Expression:
                return exp.select(exp.Star()).from_(self.table(table), copy=False)

            return PreparedQuery(named, sql, [self.adapt_param(p) for p in params], kind)
        return PreparedQuery(query, sql, [self.adapt_param(p) for p in params], kind)

    def _deadline(self) -> float:
        """Seconds the caller waits for one query before stopping it itself."""
        if self.capabilities.query_timeout_by == "server":  # the server's own timeout comes first
            return self.timeouts.query * 2 + SERVER_GRACE
        return self.timeouts.query

    def _start(self, job: PreparedQuery) -> Running:
        """Queue `job` on the session (opened first if it is not). Its time limit counts from
        the moment the session starts it: a job queued behind another waits its turn first."""
        self._open()
        self._check_usable()
        sql, values = job.sql, job.values
        running = Running(job, Future())

        def timed() -> tuple[Sequence[Sequence[Any]] | None, float]:
            running.began.append(time.monotonic())
            self._check_usable()  # queued before a cancel (Ctrl-C) or a stuck query: not run
            began = time.perf_counter()
            rows = self._execute(sql, values)
            return rows, time.perf_counter() - began

        running.future = self._session.submit(timed)
        return running

    def _collect(self, running: Running, queued: Running | None = None) -> Rows:
        """The rows of a started query, waited for until its time limit; errors made readable.
        The query's own time on the session counts towards `query_seconds`.

        `queued`: the job queued behind it on the session, if any. When this one runs out of
        time, `queued` is withdrawn before the running statement is stopped, so the stop can
        only reach this one (the caller starts a withdrawn job again: `future.cancelled()`).
        """
        job, future = running.job, running.future
        # collected in order, so the job before it is done: it has started, or is about to
        started = running.began[0] if running.began else time.monotonic()
        try:
            rows, _ = wait_for(
                future, timeout=started + self._deadline() - time.monotonic(),
                on_interrupt=lambda: self._abort(withdraw(queued, future)),
            )
        except DeadlinePassed:
            # the queued job can only have started if this one just finished: then nothing
            # is stopped, and the queued one runs on to be collected as usual
            withdraw(queued, future)
            if not future.done():
                self._stop_running()
                if not settle([future], CANCEL_GRACE):
                    self._stuck = True
            if future.done() and future.exception() is None:  # finished as the time ran out
                rows, _ = future.result()
                return [tuple(r) for r in (rows or [])]
            detail = ("" if self.capabilities.query_timeout_by == "client"
                      else "the server did not answer")
            raise self.timeout_error(job.named, job.kind, "statement timeout", detail) from None
        except Exception as exc:
            failure = self.translate_error(exc, job.named, job.kind)
            if failure is exc:
                raise
            raise failure from exc
        finally:
            self.queries[job.kind] += 1
            if future.done() and not future.cancelled() and future.exception() is None:
                self.query_seconds[job.kind] += future.result()[1]
        return [tuple(r) for r in (rows or [])]

    def translate_error(
        self, exc: Exception, query: exp.Expression, kind: QueryKind
    ) -> Exception:
        """A driver error as the reconciler reports it: a timeout as `QueryTimeoutError`
        naming the table, a query stopped by `cancel()` as such; others unchanged."""
        reason = timeout_reason(exc)
        if reason is not None:
            return self.timeout_error(query, kind, reason)
        if self._cancelled.is_set():
            return DestinationError(
                f"{kind} query on dataset `{self.dataset}` (destination `{self.name}`) was "
                f"cancelled: {' '.join(str(exc).split())}"
            )
        return exc

    def timeout_error(
        self, query: exp.Expression, kind: QueryKind, reason: TimeoutReason, detail: str = ""
    ) -> Exception:
        seconds = self.timeouts.lock if reason == "lock timeout" else self.timeouts.query
        return timeout_error(
            kind=kind,
            tables=[self.live_name(t) for t in queried_tables(query)],
            reason=reason,
            seconds=seconds,
            destination=self.name,
            dataset=self.dataset,
            detail=detail,
        )

    def run_all(
        self, batch: Sequence[tuple[Query, Sequence[Any]]], kind: QueryKind, *,
        owned: bool = False,
    ) -> list[Rows | Exception]:
        """Run independent read-only queries; each result, or the exception it raised, in
        order. One failing query never stops the others; a KeyboardInterrupt stops them all.

        This base runs them one at a time on the adapter's session, with the next one queued
        behind the running one: the session goes from one statement straight to the next
        instead of waiting for this thread to hand it over, and this thread renders the one
        after while they run. Each keeps its own time limit, from its own start. Adapters
        whose warehouse gains from it run them on a small bounded pool (`PostgresAdapter`).
        `owned`: as in `run`, for every query of the batch."""
        return run_queued(self, batch, kind, owned=owned)

    def _execute(self, sql: str, params: Sequence[Any]) -> Sequence[Sequence[Any]] | None:
        """Send rendered SQL to the driver through dlt's client (on the session thread)."""
        return self._client.execute_sql(sql, *params)  # type: ignore[no-any-return]

    def reproduce(self, query: exp.Expression, params: Sequence[Any]) -> str:
        values = [self.adapt_param(p) for p in params]
        # `prepare` returns a copy of its own: changed and rendered in place
        return render(inline_params(self.prepare(query), values, owned=True),
                      self.capabilities.dialect, owned=True)
