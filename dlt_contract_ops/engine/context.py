"""What one run shares: the sweep (sinks, adapters, metadata cache) and per-source context.

Each source is built once per run (one import, one call); live columns are read with one
metadata query per (destination, dataset) and shared by every detector and every source that
lands in that dataset (dlt's `filesystem` destination: one listing per source, whose queries
read the views its own listing made).
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, cast

from dlt_contract_ops.core.additive import ignored_columns
from dlt_contract_ops.core.columns import PARENT_ID, ROOT_ID, ExpectedTable, LiveTable, TimeAxis
from dlt_contract_ops.core.timeaxis import choose_time_axis
from dlt_contract_ops.destinations.base import DestinationAdapter
from dlt_contract_ops.destinations.connect import Target
from dlt_contract_ops.destinations.protocol import FileAdapter
from dlt_contract_ops.detectors.queries import Rows, nested_rows
from dlt_contract_ops.engine.read_problems import source_read_errors
from dlt_contract_ops.engine.sweep_stats import SweepStats, observed, record
from dlt_contract_ops.errors import DestinationError
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.settings.project import ProjectSettings, SourceSettings
from dlt_contract_ops.sinks.base import ErrorEvent
from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sources.discovery import BuiltSource
from dlt_contract_ops.sources.resolve import bind_destination, resolve_source

log = logging.getLogger("dlt_contract_ops")


@dataclass
class SourceContext:
    """Everything one source's detectors share in a run."""

    settings: SourceSettings
    built: BuiltSource
    target: Target
    adapter: DestinationAdapter
    live: dict[str, LiveTable]
    notes: list[str] = field(default_factory=list)
    #: the run's clock (tests and `detect_removal(now=...)` pin it); None: the wall clock
    now: datetime | None = None
    #: modelled tables the pipeline loaded (its stored schema has them) that are gone now
    dropped: frozenset[str] = frozenset()
    #: what the source's detectors compute once and share in a run (e.g. its load profiles)
    memo: dict[str, Any] = field(default_factory=dict)
    #: the source's tables the adapter could not read in full, each with what it could not
    #: read (`engine.read_problems`): an error for those tables, never a sign they are gone
    read_errors: dict[str, list[str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.settings.name

    def clock(self) -> datetime:
        """The run's moment: the pinned `now`, else the wall clock (UTC)."""
        return self.now or datetime.now(timezone.utc)

    @property
    def load_timestamp_column(self) -> str | None:
        ts = self.settings.load_timestamp_column
        return self.built.naming.normalize_identifier(ts) if ts else None

    def ignored(self) -> frozenset[str]:
        naming = self.built.naming
        return ignored_columns(
            (naming.normalize_identifier(c) for c in self.settings.injected_columns),
            self.load_timestamp_column,
        )

    def axis(self, table: str) -> TimeAxis | None:
        live = self.live.get(table)
        if live is None:
            return None
        child = self.child(table)
        if child is not None:
            # the root row's axis, read beside each child row (`rows`); none when the child
            # has no link to its root or a column of its own already holds that name
            root_axis = self.axis(child.root)
            if root_axis is None or self.link(child) is None or live.has(root_axis.column):
                return None
            return root_axis
        ts = self.load_timestamp_column
        if ts and live.has(ts) and not self._holds_time(live.columns[ts].data_type):
            ts = None  # a text column cannot be windowed by time: fall back (note below)
        return choose_time_axis(live, ts, self.adapter.partition_column(table))

    def read_type(self, db_type: str) -> str | None:
        """A live column type as a dlt data type (`core.declared.type_reader`): one dlt type
        mapper per source and run, each type read once."""
        from dlt_contract_ops.core.declared import type_reader

        if "type_reader" not in self.memo:
            self.memo["type_reader"] = type_reader(self.adapter.type_mapper())
        found: str | None = self.memo["type_reader"](db_type)
        return found

    def _holds_time(self, db_type: str) -> bool:
        return self.read_type(db_type) in ("timestamp", "date")

    def time_axis_notes(self) -> list[str]:
        """Tables whose configured `load_timestamp_column` is not a time type."""
        ts = self.load_timestamp_column
        out = []
        for expected, live in self.present_tables():
            if ts and live.has(ts) and not self._holds_time(live.columns[ts].data_type):
                axis = self.axis(expected.table)
                fallback = f"`{axis.column}`" if axis else "nothing"
                out.append(
                    f"table `{expected.table}`: `load_timestamp_column` `{ts}` is "
                    f"{live.columns[ts].data_type}, not a timestamp: windowing on {fallback} "
                    "instead. Load it as a timestamp (or unset the setting)."
                )
        return out

    def child(self, table: str) -> ExpectedTable | None:
        """The modelled child table called `table` (`core.naming.nested_tables`), else None."""
        if "children" not in self.memo:
            self.memo["children"] = {t.table: t for t in self.built.nested}
        found: ExpectedTable | None = self.memo["children"].get(table)
        return found

    def link(self, child: ExpectedTable) -> str | None:
        """The column that ties `child`'s rows to their root row's `_dlt_id`: dlt's
        `_dlt_root_id` (merge tables, `root_key`), else `_dlt_parent_id` one level down."""
        live = self.live.get(child.table)
        if live is None:
            return None
        if live.has(ROOT_ID):
            return ROOT_ID
        return PARENT_ID if child.parent == child.root and live.has(PARENT_ID) else None

    def rows(self, table: str) -> Rows:
        """Where a per-table query reads `table`'s rows: the table, or for a child table, its
        rows joined to their root row's time axis (`queries.nested_rows`)."""
        child = self.child(table)
        axis = self.axis(table)
        link = self.link(child) if child is not None else None
        if child is None or axis is None or link is None:
            return self.adapter.table(table)
        return nested_rows(self.adapter.table(table), self.adapter.table(child.root), link,
                           [axis.column])

    def unmodelled_nested(self, table: str) -> list[str]:
        """The live tables nested under root `table` that no model describes."""
        return [t for t in self.nested_tables(table) if self.child(t) is None]

    def unmodelled_nested_notes(self, expected: ExpectedTable, detector: str) -> list[str]:
        """The note for a root table's nested tables no model describes, which `detector`
        cannot check (none for a child table or when every nested table is modelled)."""
        nested = self.unmodelled_nested(expected.table) if not expected.root else []
        if not nested:
            return []
        return [
            f"nested table(s) {', '.join(f'`{t}`' for t in nested)} of resource "
            f"`{expected.resource}`: not checked for {detector} drift (no list field of the "
            "model with `skip_nested_types` describes them)"
        ]

    def nested_tables(self, table: str) -> list[str]:
        """The live tables nested under `table` (`table__…`), sorted: found by bisection in
        the dataset's sorted table names, not by a scan of them all per table."""
        names = self.memo.get("live_names")
        if names is None:
            names = self.memo["live_names"] = sorted(self.live)
        prefix = table + "__"
        start = bisect.bisect_left(names, prefix)
        end = start
        while end < len(names) and names[end].startswith(prefix):
            end += 1
        return names[start:end]

    def present_tables(self) -> Iterator[tuple[ExpectedTable, LiveTable]]:
        """Modelled tables that exist, roots then the child tables of their list fields (a
        root's absence has a note already; a child table is absent until a list has items)."""
        for expected in (*self.built.tables, *self.built.nested):
            live = self.live.get(expected.table)
            if live is not None:
                yield expected, live

    def error_event(
        self, message: str, exc: BaseException | None, resource: str | None, detector: str
    ) -> ErrorEvent:
        return ErrorEvent(
            source=self.name,
            pipeline=self.target.pipeline_name,
            resource=resource,
            detector=detector,
            message=message,
            exception=exc,
        )

    def finding(
        self,
        drift_type: str,
        expected: ExpectedTable,
        columns: Sequence[str],
        **fields: Any,
    ) -> DriftFinding:
        """A finding of this source about `expected`'s table; `fields` are the detector's own."""
        return DriftFinding(
            drift_type=drift_type,
            source=self.name,
            pipeline=self.target.pipeline_name,
            resource=expected.resource,
            table=expected.table,
            columns=list(columns),
            **fields,
        )

    def result(
        self,
        detector: str,
        started: float,
        findings: list[Any],
        notes: list[str],
        failures: Sequence[str] = (),
    ) -> ReconcileResult:
        """The detector's result; `failures` (a query that failed for one table while the
        others were checked) make it an error, so the run exits 1 instead of looking clean."""
        error = None
        if failures:
            error = (
                f"{len(failures)} table(s) could not be checked: {'; '.join(failures)}. "
                "The other tables were checked."
            )
        return ReconcileResult(
            error=error,
            error_kind="query" if failures else None,
            source=self.name,
            pipeline=self.target.pipeline_name,
            destination=self.target.destination_type,
            dataset=self.adapter.dataset,
            detector=detector,
            findings=findings,
            notes=notes,
            duration_s=round(time.perf_counter() - started, 4),
        )


class Sweep:
    """One run over one or more sources: shared emitter, adapters and metadata cache."""

    def __init__(
        self,
        project: ProjectSettings,
        project_dir: str,
        emitter: Emitter,
        now: datetime | None = None,
    ) -> None:
        from dlt_contract_ops.sources.project_imports import begin_run

        begin_run()  # a sweep is a run: the project's modules are imported afresh once
        self.project = project
        self.now = now
        self.project_dir = project_dir
        self.emitter = emitter
        self._live_cache: dict[tuple[str, str, str], dict[str, LiveTable]] = {}
        #: what the adapter that read each dataset's columns could not read (`read_problems`)
        self._read_problems: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        self.adapters: list[DestinationAdapter] = []
        #: dlt's record of what each (dataset, schema) loaded, read at most once a run
        self._records: dict[tuple[str, str, str, str], frozenset[str] | None] = {}
        self.sources_built = 0

    def context(self, name: str) -> SourceContext:
        resolved = resolve_source(name, self.project, self.project_dir, cached=True)
        self.sources_built += 1
        settings = resolved.settings
        target, built, adapter = bind_destination(
            settings, resolved.built, self.project, self.project_dir
        )
        self.adapters.append(adapter)
        key = (target.destination_type, adapter.location, adapter.dataset)
        caps = adapter.capabilities
        # an adapter whose queries read what its own listing made (views over files) lists
        # for each source; the others once per dataset and run
        if key not in self._live_cache or caps.lists_per_adapter:
            self._live_cache[key] = adapter.list_columns()
            self._read_problems[key] = (
                tuple(cast(FileAdapter, adapter).read_problems) if caps.over_files else ())
        live = self._live_cache[key]
        read_notes: list[str] = []
        # a table whose files could not be read is absent from `live` without being gone
        unreadable = source_read_errors(self._read_problems[key], built, read_notes)
        if not live and built.tables and not unreadable:
            where = f" at `{adapter.location}`" if adapter.location else ""
            raise DestinationError(
                f"Dataset `{adapter.dataset}`{where} has no tables: it does not exist, or "
                f"pipeline `{target.pipeline_name}` never loaded into it. Check "
                f"`dataset_name` for source `{name}` (in `[sources.{name}.contract_ops]` or "
                "the pipeline's state)."
            )
        notes, dropped = self._absent_tables(name, target, built, adapter, live, key,
                                             unreadable=frozenset(unreadable))
        ctx = SourceContext(settings, built, target, adapter, live, [*notes, *read_notes],
                            self.now, frozenset(dropped))
        ctx.read_errors = unreadable
        return ctx

    def _absent_tables(
        self,
        name: str,
        target: Target,
        built: BuiltSource,
        adapter: DestinationAdapter,
        live: dict[str, LiveTable],
        key: tuple[str, str, str],
        *,
        unreadable: frozenset[str] = frozenset(),
    ) -> tuple[list[str], set[str]]:
        """The source's notes, and its modelled tables that were loaded and are gone now.

        What was loaded is dlt's record (`sources/loaded.py`): the pipeline's local state, else the
        dataset's `_dlt_version`, read only when a modelled table is absent. Without any
        record, a modelled table whose siblings exist is expected all the same: the models
        say it belongs there, and nothing says it was never loaded.
        """
        from dlt_contract_ops.model.findings import NOTHING_CHECKED
        from dlt_contract_ops.sources.loaded import destination_tables, local_tables

        notes = list(built.notes)
        # an unreadable table is there (its read error says so), not absent
        absent = [t for t in built.tables if t.table not in live and t.table not in unreadable]
        if not absent:
            return notes, set()
        record = local_tables(target.pipeline_name, built.schema_name)
        if record is None or any(t.table not in record for t in absent):
            cache_key = (*key, built.schema_name)
            if cache_key not in self._records:
                self._records[cache_key] = destination_tables(
                    adapter, built.naming, built.schema_name, live
                )
            stored = self._records[cache_key]
            if stored is not None:
                record = stored | (record or frozenset())
        present = len(absent) < len(built.tables)
        if record is None and not present:
            notes.append(
                f"{NOTHING_CHECKED}source `{name}` has never been loaded into dataset "
                f"`{adapter.dataset}`: none of its tables exist and dlt's `_dlt_version` "
                f"there has no record of schema `{built.schema_name}`. Run its pipeline, or "
                "check `dataset_name`."
            )
            return notes, set()
        dropped = set()
        for expected in absent:
            if record is None or expected.table in record:
                dropped.add(expected.table)  # reported as `missing` drift by that detector
            else:
                notes.append(
                    f"resource `{expected.resource}`: table `{expected.table}` does not exist in "
                    f"dataset `{adapter.dataset}` yet: skipped"
                )
        return notes, dropped

    def close(self) -> None:
        if observed():
            stats = SweepStats(sources_built=self.sources_built)
            for adapter in self.adapters:
                stats.queries.update(adapter.queries)
                stats.query_seconds.update(adapter.query_seconds)
                stats.locations.add(adapter.location)
                if adapter.capabilities.over_files:
                    stats.files_read.update(cast(FileAdapter, adapter).files_read)
            record(stats)
        for adapter in self.adapters:
            try:
                adapter.close()
            except Exception as exc:  # closing must never mask a result
                log.debug("closing adapter failed: %s", exc)
        self.adapters.clear()
