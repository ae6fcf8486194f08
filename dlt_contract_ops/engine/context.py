"""What one run shares: the sweep (sinks, adapters, metadata cache), which makes each
source's input (`detection.source_input.SourceInput`) before its runners run.

Each source is built once per run (one import, one call); live columns are read with one
metadata query per (destination, dataset) and shared by every detector and every source that
lands in that dataset (dlt's `filesystem` destination: one listing per source, whose queries
read the views its own listing made).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType
from typing import Any, cast

from dlt_contract_ops.core.columns import LiveTable
from dlt_contract_ops.core.shard import Shard
from dlt_contract_ops.destinations.base import DestinationAdapter
from dlt_contract_ops.destinations.connect import Target
from dlt_contract_ops.destinations.protocol import FileAdapter
from dlt_contract_ops.detection.needs import ProfileNeed
from dlt_contract_ops.detection.source_input import SourceInput
from dlt_contract_ops.detectors.registry import get
from dlt_contract_ops.engine.read_problems import source_read_errors
from dlt_contract_ops.engine.sweep_stats import SweepStats, observed, record
from dlt_contract_ops.errors import DestinationError
from dlt_contract_ops.profiles.shared import SourceProfiles
from dlt_contract_ops.settings.project import ProjectSettings
from dlt_contract_ops.sinks.emitter import Emitter
from dlt_contract_ops.sources.discovery import BuiltSource
from dlt_contract_ops.sources.resolve import bind_destination, resolve_source

log = logging.getLogger("dlt_contract_ops")


class Sweep:
    """One run over one or more sources: shared emitter, adapters and metadata cache."""

    def __init__(
        self,
        project: ProjectSettings,
        project_dir: str,
        emitter: Emitter,
        now: datetime | None = None,
        shard: Shard | None = None,
    ) -> None:
        from dlt_contract_ops.sources.project_imports import begin_run

        begin_run()  # a sweep is a run: the project's modules are imported afresh once
        self.project = project
        self.now = now
        self.project_dir = project_dir
        self.emitter = emitter
        self._live_cache: dict[tuple[str, str, str], dict[str, LiveTable]] = {}
        #: each dataset's live table names, sorted once (`SourceInput.nested_tables`)
        self._live_names: dict[tuple[str, str, str], tuple[str, ...]] = {}
        #: what the adapter that read each dataset's columns could not read (`read_problems`)
        self._read_problems: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        self.adapters: list[DestinationAdapter] = []
        #: dlt's record of what each (dataset, schema) loaded, read at most once a run
        self._records: dict[tuple[str, str, str, str], frozenset[str] | None] = {}
        self.sources_built = 0
        #: the run's shard (`core.shard`): each source's tables are cut to it
        self.shard = shard if shard is not None and not shard.whole else None
        #: source -> the tables (roots and children) this run covered, when sharded
        self.covered: dict[str, tuple[str, ...]] = {}

    def reports(self, name: str) -> bool:
        """This run reports what concerns source `name` as a whole (a failed build, a missing
        dataset, its notes): always, unless it is another shard's (`Shard.owns_source`)."""
        return self.shard is None or self.shard.owns_source(name)

    def elsewhere(self, source: SourceInput) -> bool:
        """None of `source`'s tables is this shard's and another shard reports the source:
        nothing of it to run here (its input was made without a query)."""
        return not source.built.tables and not self.reports(source.name)

    def context(self, name: str) -> SourceInput:
        """Source `name`'s input, every field filled (its load profiles: a service of this
        run, swept on first use); `for_detectors` adds what the run's detectors declared."""
        resolved = resolve_source(name, self.project, self.project_dir, cached=True)
        self.sources_built += 1
        settings = resolved.settings
        target, built, adapter = bind_destination(
            settings, resolved.built, self.project, self.project_dir, connect=True
        )
        self.adapters.append(adapter)
        whole, built = built, self._in_shard(name, built)
        if self.shard is not None and not built.tables and not self.reports(name):
            return SourceInput.of(settings, built, target, adapter, {}, now=self.now,
                                  profiles=SourceProfiles())  # no query: nothing here
        key = (target.destination_type, adapter.location, adapter.dataset)
        caps = adapter.capabilities
        # an adapter whose queries read what its own listing made (views over files) lists
        # for each source; the others once per dataset and run
        if key not in self._live_cache or caps.lists_per_adapter:
            self._live_cache[key] = adapter.list_columns()
            self._live_names[key] = tuple(sorted(self._live_cache[key]))
            self._read_problems[key] = (
                tuple(cast(FileAdapter, adapter).read_problems) if caps.over_files else ())
        live = self._live_cache[key]
        read_notes: list[str] = []
        # a table whose files could not be read is absent from `live` without being gone
        unreadable = source_read_errors(self._read_problems[key], built, read_notes)
        if not live and whole.tables and not (
                unreadable or source_read_errors(self._read_problems[key], whole, [])):
            where = f" at `{adapter.location}`" if adapter.location else ""
            raise DestinationError(
                f"Dataset `{adapter.dataset}`{where} has no tables: it does not exist, or "
                f"pipeline `{target.pipeline_name}` never loaded into it. Check "
                f"`dataset_name` for source `{name}` (in `[sources.{name}.contract_ops]` or "
                "the pipeline's state)."
            )
        notes, dropped = self._absent_tables(name, target, built, adapter, live, key,
                                             unreadable=frozenset(unreadable), whole=whole)
        return SourceInput.of(
            settings, built, target, adapter, live, notes=[*notes, *read_notes], now=self.now,
            dropped=frozenset(dropped), read_errors=unreadable,
            live_names=self._live_names[key], profiles=SourceProfiles(),
        )

    def _in_shard(self, name: str, built: BuiltSource) -> BuiltSource:
        """`built` cut to the run's shard: its root tables that are the shard's, their child
        tables, and the source's own notes only where the source is reported (`reports`)."""
        if self.shard is None:
            return built
        tables = self.shard.tables(name, built.tables)
        nested = self.shard.tables(name, built.nested)
        self.covered[name] = tuple(t.table for t in (*tables, *nested))
        return replace(built, tables=tables, nested=nested,
                       notes=built.notes if self.reports(name) else ())

    def for_detectors(self, source: SourceInput, detectors: Sequence[str]) -> SourceInput:
        """`source` as `detectors` read it: with what each of them declared it reads of the
        load profiles (`Detector.profiles`), so one profile sweep serves them all."""
        needs: dict[str, ProfileNeed] = {}
        for name in detectors:
            need = get(name).profiles
            if need is not None:
                needs[name] = need
        return replace(source, profile_needs=MappingProxyType(needs))

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
        whole: BuiltSource | None = None,
    ) -> tuple[list[str], set[str]]:
        """The source's notes, and its modelled tables that were loaded and are gone now.

        What was loaded is dlt's record (`sources/loaded.py`): the pipeline's local state, else the
        dataset's `_dlt_version`, read only when a modelled table is absent. Without any
        record, a modelled table whose siblings exist is expected all the same: the models
        say it belongs there, and nothing says it was never loaded. `whole`: the source
        before it was cut to the run's shard (whether any of its tables exists at all).
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
        everything = whole or built
        present = any(t.table in live or t.table in unreadable for t in everything.tables)
        if record is None and not present:
            if not self.reports(name):
                return notes, set()  # the shard that reports the source says so
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
