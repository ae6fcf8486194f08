"""What every runner of one source reads: a frozen, typed value the sweep fills in full
before the runners run (`engine.context.Sweep`).

Nothing in it is computed behind a runner's back or looked up by a string key: the child
tables, the sorted live names and the type reader are built once, by `SourceInput.of`; the
load profiles are a typed service of the run (`profiles`); what the run's detectors declared
they read of those profiles is `profile_needs`. Its methods derive what detectors share (the
time axis, where a child table's rows are read, findings and results of this source).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from dlt_contract_ops.core.additive import ignored_columns
from dlt_contract_ops.core.columns import PARENT_ID, ROOT_ID, ExpectedTable, LiveTable, TimeAxis
from dlt_contract_ops.core.timeaxis import choose_time_axis
from dlt_contract_ops.destinations.base import DestinationAdapter
from dlt_contract_ops.destinations.connect import Target
from dlt_contract_ops.detection.needs import ProfileNeed
from dlt_contract_ops.detection.rows import Rows, nested_rows
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.settings.project import SourceSettings
from dlt_contract_ops.sinks.base import ErrorEvent
from dlt_contract_ops.sources.discovery import BuiltSource

#: a profiled table (`profiles.sweep.TableProfiles`)
T_co = TypeVar("T_co", covariant=True)


class SharedProfiles(Protocol[T_co]):
    """The slot of a source's load profiles in its input (`SourceInput.profiles`): one
    service per source and run, `profiles.shared.SourceProfiles`, which the sweep makes
    before the runners run. A Protocol here, so what a runner reads imports no profile code."""

    @property
    def skipped(self) -> frozenset[str]:
        """The tables the run's sweep left out (removal scanned them instead); a later
        caller that asks for them has them profiled then."""
        ...

    def tables(
        self, source: SourceInput, settings: SourceSettings, *, detailed: bool = False,
        skip: frozenset[str] = frozenset(),
    ) -> Sequence[T_co]:
        """The source's profiled root tables: swept on the first call (detailed when the
        caller asks or a detector of the run declared `"detailed"`), leaving out `skip`; a
        failure of that sweep is raised again to every caller."""
        ...

    def take_notes(self) -> list[str]:
        """What the profile store had to say (a broken store set aside), once: the first
        caller reports it."""
        ...


class TypeReader:
    """A live column type as a dlt data type (`core.declared.type_reader`): the adapter's dlt
    type mapper, made on the first read (once per source and run), each type read once."""

    def __init__(self, adapter: DestinationAdapter) -> None:
        self._adapter = adapter
        self._read: Callable[[str], str | None] | None = None

    def __call__(self, db_type: str) -> str | None:
        if self._read is None:
            from dlt_contract_ops.core.declared import type_reader

            self._read = type_reader(self._adapter.type_mapper())
        return self._read(db_type)


@dataclass(frozen=True)
class SourceInput:
    """Everything one source's runners read in a run; build one with `SourceInput.of`.

    - `settings`, `built`, `target`, `adapter`: the source's resolved settings, the user's
      source as built once (models, tables, naming), where it loads, the read-only adapter.
    - `live`: the dataset's live columns per table (one metadata query per dataset and run).
    - `notes`: what the sweep found before any detector ran (a table not loaded yet, ...).
    - `now`: the run's clock (tests and `detect_removal(now=...)` pin it); None: the wall
      clock (`clock()`).
    - `dropped`: modelled tables the pipeline loaded (dlt's record has them) that are gone.
    - `read_errors`: the tables the adapter could not read in full, each with what it could
      not read (`engine.read_problems`): an error for those tables, never a sign they are gone.
    - `type_reader`, `children`, `live_names`: live types as dlt types, the modelled child
      tables by name, the live table names sorted (`nested_tables` bisects them).
    - `profile_needs`: detector -> what it declared it reads of the load profiles
      (`Detector.profiles`), for the detectors of this run that declared a need.
    - `profiles`: the source's load profiles in this run (`profiles.shared`); None in an input
      built without a sweep.
    """

    settings: SourceSettings
    built: BuiltSource
    target: Target
    adapter: DestinationAdapter
    live: Mapping[str, LiveTable]
    notes: tuple[str, ...]
    now: datetime | None
    dropped: frozenset[str]
    read_errors: Mapping[str, Sequence[str]]
    type_reader: Callable[[str], str | None]
    children: Mapping[str, ExpectedTable]
    live_names: tuple[str, ...]
    profile_needs: Mapping[str, ProfileNeed]
    profiles: SharedProfiles[Any] | None

    @classmethod
    def of(
        cls, settings: SourceSettings, built: BuiltSource, target: Target,
        adapter: DestinationAdapter, live: Mapping[str, LiveTable], *,
        notes: Sequence[str] = (), now: datetime | None = None,
        dropped: frozenset[str] = frozenset(),
        read_errors: Mapping[str, Sequence[str]] | None = None,
        live_names: Sequence[str] | None = None,
        profile_needs: Mapping[str, ProfileNeed] | None = None,
        profiles: SharedProfiles[Any] | None = None,
    ) -> SourceInput:
        """The input of one source, every derived field built here, once. `live_names`: the
        live table names sorted, when the caller has them (one sort per dataset)."""
        return cls(
            settings, built, target, adapter, MappingProxyType(live), tuple(notes), now,
            dropped,
            MappingProxyType({t: tuple(es) for t, es in (read_errors or {}).items()}),
            TypeReader(adapter),
            MappingProxyType({t.table: t for t in built.nested}),
            tuple(live_names) if live_names is not None else tuple(sorted(live)),
            MappingProxyType(dict(profile_needs or {})),
            profiles,
        )

    @property
    def name(self) -> str:
        return self.settings.name

    def clock(self) -> datetime:
        """The run's moment: the pinned `now`, else the wall clock (UTC)."""
        return self.now or datetime.now(timezone.utc)

    @property
    def profiles_detailed(self) -> bool:
        """A detector of the run reads detailed profiles: the first sweep is detailed."""
        return "detailed" in self.profile_needs.values()

    def profiles_wanted(self, besides: str) -> bool:
        """A detector of the run other than `besides` reads the load profiles: they are
        swept anyway."""
        return any(name != besides for name in self.profile_needs)

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
        """A live column type as a dlt data type (`type_reader`)."""
        return self.type_reader(db_type)

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
        return self.children.get(table)

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
        rows joined to their root row's time axis (`detection.rows.nested_rows`)."""
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
        names = self.live_names
        prefix = table + "__"
        start = bisect.bisect_left(names, prefix)
        end = start
        while end < len(names) and names[end].startswith(prefix):
            end += 1
        return list(names[start:end])

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
