"""What a sweep checked completely: the tables each detector read without an error, which a
finding absent from them is resolved in (`sinks.lifecycle.Swept.resolves`: the alert
lifecycle of a sweep, and the report's "resolved since the last sweep" of its run).

A table counts for a detector of a source when the detector ran there (a result of it,
neither a failure of the whole detector or source nor "not loaded yet"), the table is one of
the source's modelled tables that exists (or was dropped: it was looked at), its files were
read in full, and no error the detector reported names its resource. An error that names no
resource, or a failed result whose errors name none, counts for every table of the source.
A dry run resolves no alert (the emitter does not resolve in one); the report, a dry run,
still says on its page what its run resolves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from dlt_contract_ops.core.history import Where
from dlt_contract_ops.model.findings import NOT_LOADED, DriftFinding, ReconcileResult
from dlt_contract_ops.sinks.base import Emits, ErrorEvent
from dlt_contract_ops.sinks.lifecycle import Swept

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput

__all__ = ["Recording", "Where", "checked_tables", "found_ids", "swept"]


class Recording:
    """Passes a source's errors and findings on to `emitter`, keeping the errors: which
    tables each detector could not check."""

    def __init__(self, emitter: Emits) -> None:
        self.emitter = emitter
        self.errors: list[ErrorEvent] = []

    def drift(self, finding: DriftFinding) -> None:
        self.emitter.drift(finding)

    def error(self, event: ErrorEvent) -> None:
        self.errors.append(event)
        self.emitter.error(event)


def checked_tables(
    ctx: SourceInput, results: Sequence[ReconcileResult], errors: Sequence[ErrorEvent]
) -> set[Where]:
    """(source, detector, table) of every table each detector of `results` checked without
    an error (see the module docstring)."""
    tables = {
        t.table: t.resource for t in (*ctx.built.tables, *ctx.built.nested)
        if (t.table in ctx.live or t.table in ctx.dropped) and t.table not in ctx.read_errors
    }
    out: set[Where] = set()
    for r in results:
        if r.error_kind == NOT_LOADED or (r.error is not None and r.error_kind != "query"):
            continue  # the detector (or the source) failed as a whole
        named = [e for e in errors if e.detector in (r.detector, None)]
        if any(e.resource is None for e in named) or (r.error is not None and not named):
            continue
        failed = {e.resource for e in named}
        out.update((ctx.name, r.detector, t) for t, res in tables.items() if res not in failed)
    return out


def found_ids(findings: Iterable[DriftFinding]) -> set[str]:
    """The ids of `findings` and of the components a combiner folded into them: a folded
    finding is still found (the drift is still there), never resolved."""
    found: set[str] = set()
    for f in findings:
        found.add(f.id)
        found.update(str(c.get("id")) for c in f.components or ())
    return found


def swept(tables: Iterable[Where], results: Iterable[ReconcileResult]) -> Swept:
    """The sweep's `Swept`: the tables checked, and every finding found (`found_ids`)."""
    findings = [f for r in results for f in r.findings]
    found = found_ids(findings)
    where: dict[Where, list[DriftFinding]] = {}
    for f in findings:
        where.setdefault((f.source, f.drift_type, f.table), []).append(f)
    return Swept(frozenset(tables), frozenset(found),
                 {k: tuple(v) for k, v in where.items()})
