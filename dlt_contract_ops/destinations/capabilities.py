"""What an adapter's destination can do, declared once per adapter class.

Every adapter class declares `capabilities: ClassVar[Capabilities]`; every caller asks it
(`adapter.capabilities.approximate_distinct`) instead of probing the adapter with `getattr`
or keeping a set of dialect names of its own. The entry-point loader checks the declaration
(`protocol.protocol_problems`), so a wrong one is refused when the adapter loads. This
module imports nothing of the package: anything may read a `Capabilities`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Capabilities"]


@dataclass(frozen=True)
class Capabilities:
    """One adapter class's declaration.

    >>> Capabilities(dialect="sqlite", read_only="the renderer only").regex_note
    'no regular-expression match is known for dialect `sqlite`'
    """

    #: the sqlglot dialect every query renders in
    dialect: str
    #: how the adapter keeps its session read-only, beside the one renderer refusing all but
    #: a SELECT (docs/destinations.md, "Read-only, in two layers"); required, never empty
    read_only: str
    #: who bounds a query's run time: "server" (a session setting the adapter applies) or
    #: "client" (the adapter stops the query when `Timeouts.query` has passed)
    query_timeout_by: Literal["server", "client"] = "client"
    #: sqlglot renders `exp.ApproxDistinct` as the destination's own approximate distinct
    #: count; without it the profiles count exactly (`COUNT(DISTINCT ...)`)
    approximate_distinct: bool = False
    #: `exp.RegexpLike` searches the value as Pydantic's `pattern` does (not anchored at both
    #: ends), so the contract detector verifies patterns in the destination
    regex_search: bool = False
    #: why patterns are not verified here (when `regex_search` is False); a default otherwise
    no_regex: str = ""
    #: sessions `run_all` may run a batch on at once (1: one after another on the session)
    pool_size: int = 1
    #: rows the destination skips by `_dlt_load_id` in one block (a DuckDB row group): a
    #: smaller table is scanned rather than profiled (`core.profile_choice`); None: no blocks
    load_prune_rows: int | None = None
    #: its tables are views `list_columns` makes on the adapter's own connection: every
    #: instance lists the dataset, never sharing another adapter's listing
    lists_per_adapter: bool = False
    #: its tables are folders of files: the class has `table_folder(name)`, `read_problems`
    #: (after `list_columns`) and `files_read` (`FilesystemAdapter`)
    over_files: bool = False
    #: its `run`/`run_all` take the `SqlClientAdapter` renderer's prepared values (a
    #: `ShapedQuery`) besides a tree
    prepared_queries: bool = False
    #: the class has `open_soon()`: a sweep starts its connection opening on the adapter's
    #: own thread and goes on meanwhile (`ClientSession.open_soon`); a failure to connect is
    #: the first query's
    opens_early: bool = False

    @property
    def regex_note(self) -> str:
        """Why patterns are not verified on this destination (empty when they are)."""
        if self.regex_search:
            return ""
        return self.no_regex or f"no regular-expression match is known for dialect `{self.dialect}`"
