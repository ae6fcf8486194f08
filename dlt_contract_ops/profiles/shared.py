"""A source's load profiles, swept once a run and shared by every reader of them.

The sweep (`engine.context.Sweep`) gives each source's input one `SourceProfiles` before its
runners run (`SourceInput.profiles`, typed by `detection.source_input.SharedProfiles`). The
detectors that declared a need (`Detector.profiles`: removal `"counts"`, distribution
`"detailed"`, a third-party detector either) and the report read it through
`shared_profiles`: the first caller's sweep is as detailed as any detector of the run
declared, so removal and distribution share one profile query per table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_contract_ops.profiles.store import TableUpdate
from dlt_contract_ops.profiles.sweep import (
    TableProfiles,
    detail_loads,
    profile_source,
    scope_of,
    store_of,
)

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput
    from dlt_contract_ops.settings.project import SourceSettings


class SourceProfiles:
    """One source's load profiles in one run (`detection.source_input.SharedProfiles`): what the
    first sweep found (or the error it raised), whether it was detailed, the tables it left
    out, and the store's notes not yet reported."""

    def __init__(self) -> None:
        self._found: list[TableProfiles] | Exception | None = None
        self._detailed = False
        self._skipped: frozenset[str] = frozenset()
        self._notes: list[str] = []

    @property
    def skipped(self) -> frozenset[str]:
        return self._skipped

    def tables(
        self, source: SourceInput, settings: SourceSettings, *, detailed: bool = False,
        skip: frozenset[str] = frozenset(),
    ) -> list[TableProfiles]:
        """`profile_source` once per source and run; the sweep is detailed when the caller
        asks or a detector of the run declared `"detailed"` (`SourceInput.profiles_detailed`).
        `skip`: tables the first caller scans instead; a later caller that wants them (the
        report) has them profiled then, and one that wants the detail an earlier counts-only
        sweep lacks has it added."""
        detailed = detailed or source.profiles_detailed
        if self._found is None:
            self._detailed = detailed
            try:
                self._found = profile_source(source, settings, detailed=detailed, skip=skip,
                                             notes=self._notes)
                self._skipped = skip
            except Exception as exc:
                self._found = exc
        found = self._found
        if isinstance(found, Exception):
            raise found
        if wanted := self._skipped - skip:  # the report's pictures, say
            others = frozenset(e.table for e, _ in source.present_tables()) - wanted
            found = [*found, *profile_source(source, settings, detailed=self._detailed,
                                             skip=others, notes=self._notes)]
            self._found, self._skipped = found, skip
        if detailed and not self._detailed:  # an earlier counts-only sweep: add the detail
            updates: dict[str, TableUpdate] = {}
            detail_loads(source, settings, found, updates, current=True)
            if updates:
                store = store_of(settings)
                store.write(scope_of(source), source.name, list(updates.values()))
                self._notes.extend(store.notes)
            self._detailed = True
        return list(found)

    def take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes


def shared_profiles(
    source: SourceInput, settings: SourceSettings, *, detailed: bool = False,
    skip: frozenset[str] = frozenset(),
) -> list[TableProfiles]:
    """The source's profiled root tables of this run (`SourceProfiles.tables`): removal asks
    for counts, leaving out the tables it scans (`skip`); a detector that declared
    `"detailed"` gets detailed profiles, as does a caller passing `detailed=True`."""
    profiles = source.profiles
    if profiles is None:
        raise ValueError(
            f"source `{source.name}` has no load profiles in this input: a sweep gives each "
            "source one (`SourceInput.profiles`); an input built by hand needs "
            "`profiles=SourceProfiles()` (`dlt_contract_ops.profiles.shared`)")
    found: list[TableProfiles] = list(profiles.tables(source, settings, detailed=detailed,
                                                       skip=skip))
    return found


def store_notes(source: SourceInput) -> list[str]:
    """The store's notes of this source's sweep, once: the first detector to ask reports
    them."""
    return [] if source.profiles is None else source.profiles.take_notes()
