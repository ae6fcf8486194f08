"""What `dlt-contract-ops report` runs and gathers for its page.

The report runs what a scheduled `reconcile` runs (`report_detectors`: the default
detectors and removal, plus the `--include-<name>` ones, plus distribution once a profile
store exists), never alerting, and keeps, per source, what the pictures need: each root
table's stored load profiles (already read by the sweep: removal and distribution share
them), the removal windows and thresholds, the distribution rule, and, per rename, both
columns' per-load counts (one read-only handoff query per renamed table). Then it reads the
finding index for the history across sweeps, and compares each of the run's findings with
the last recorded sweep that looked for it (`since_last_sweep`: what is new, back again and
resolved since). Nothing is written anywhere.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dlt_contract_ops.core.distribution import DistributionRule
from dlt_contract_ops.core.history import History, Sweep, Where, last_looked
from dlt_contract_ops.core.load_profile import LoadProfile
from dlt_contract_ops.core.timeaxis import Windows
from dlt_contract_ops.engine.swept import swept
from dlt_contract_ops.sinks.lifecycle import Swept

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput
    from dlt_contract_ops.engine.reconcile import Progress
    from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult

log = logging.getLogger("dlt_contract_ops")


@dataclass(frozen=True)
class Frame:
    """A source's removal windows (epoch seconds) and thresholds, and its distribution rule:
    what the charts draw beside the data."""

    recent_start: float
    baseline_start: float
    baseline_threshold: float
    recent_threshold: float
    rule: DistributionRule = field(default_factory=DistributionRule)


@dataclass(frozen=True)
class TableLoads:
    """A table's stored loads (oldest first) and its declared, profiled columns."""

    columns: tuple[str, ...]
    loads: tuple[LoadProfile, ...]


@dataclass(frozen=True)
class Handoff:
    """Per load (oldest first): load id, rows, non-NULL values of the old and new column."""

    old: str
    new: str
    loads: tuple[tuple[str, int, int, int], ...]


@dataclass(frozen=True)
class Resolved:
    """A finding the last sweep that looked for it saw and this run resolves: what the
    finding index recorded of it (`history.index.known_findings`), and when a sweep last
    saw it."""

    id: str
    source: str
    table: str
    detector: str
    columns: tuple[str, ...]
    last_seen: datetime | None = None


@dataclass(frozen=True)
class SinceLastSweep:
    """What changed since the sweeps the finding index recorded, finding by finding: each is
    compared with the last recorded sweep that looked for it, one that ran its detector over
    its table (`core.history.last_looked`), so an hourly sweep without removal says nothing
    of a removal finding the nightly sweep saw. `previous` is the latest recorded sweep that
    looked at any table this run checked; None when no sweep was recorded yet (this is the
    first look: nothing is new) or the index could not be read (`error`).

    - `new`: found now, not by the last sweep that looked for it (or on a table no sweep
      looked at for its detector, a source declared since), by no recorded sweep;
    - `reopened`: found now, not by the last sweep that looked for it, by an earlier one (it
      had gone, and came back);
    - `escalated`: found now with a wider scope than when it was alerted. Escalation is
      the alert lifecycle's to decide (the dedup state `reconcile`'s sinks keep), and comes
      here through the reason its alert carries (`DriftFinding.alert_reason`), never
      worked out a second time;
    - `resolved`: seen by the last sweep that looked for it, and resolved by this run by the
      alert lifecycle's own rule (`sinks.lifecycle.Swept.resolves`: its table checked
      completely for its detector, and not found);
    - `unswept`: found now by a detector no recorded sweep ran (one only the report runs,
      such as distribution before a scheduled `reconcile` runs it): neither new nor back.
    """

    previous: datetime | None = None
    new: tuple[DriftFinding, ...] = ()
    reopened: tuple[DriftFinding, ...] = ()
    escalated: tuple[DriftFinding, ...] = ()
    resolved: tuple[Resolved, ...] = ()
    error: str | None = None
    unswept: tuple[DriftFinding, ...] = ()

    @property
    def arrived(self) -> tuple[DriftFinding, ...]:
        """New, reopened and escalated findings: what a person looks at first."""
        return (*self.new, *self.reopened, *self.escalated)


@dataclass
class Report:
    """Everything the page shows: the results, and what the pictures and history need."""

    results: list[ReconcileResult]
    detectors: tuple[str, ...] = ()
    frames: dict[str, Frame] = field(default_factory=dict)
    tables: dict[tuple[str, str], TableLoads] = field(default_factory=dict)
    handoffs: dict[tuple[str, str], list[Handoff]] = field(default_factory=dict)
    history: History = field(default_factory=History)
    generated: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    #: what changed since the last recorded sweep (`Gatherer.report` always fills it); a
    #: page without it has no such section
    since: SinceLastSweep | None = None


def since_last_sweep(
    results: Sequence[ReconcileResult], history: History, sweeps: Sequence[Sweep],
    known: Mapping[str, Mapping[str, Any]], run: Swept,
) -> SinceLastSweep:
    """This run's findings (`results`; what it checked and found: `run`, as
    `engine.swept.swept` makes it for the alert lifecycle) against the recorded `sweeps`
    (oldest first; see `SinceLastSweep`): `history` tells which ids any sweep saw, `known`
    what each id stands for. A finding a combiner folded into another (a rename's additive
    and removal parts) is still found; a table this run did not check resolves nothing.

    >>> from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
    >>> f = DriftFinding(drift_type="additive", source="s", resource="t", table="t",
    ...                  columns=["c"])
    >>> since_last_sweep([ReconcileResult(source="s", findings=[f])], History(), [], {},
    ...                  Swept()).previous is None
    True
    """
    if not sweeps:
        return SinceLastSweep()
    last: dict[Where, Sweep | None] = {}

    def compared(where: Where) -> Sweep | None:
        """The last recorded sweep that looked for a finding at `where` (once per place)."""
        if where not in last:
            last[where] = last_looked(sweeps, where)
        return last[where]

    ran = {d for s in sweeps for d in s.detectors or ()}
    every = any(s.detectors is None for s in sweeps)  # an older line: every detector
    current = {f.id: f for r in results for f in r.findings}
    # a wider drift has an id of its own: the lifecycle's reason says it grew, not arrived
    escalated = tuple(f for f in current.values() if f.alert_reason == "escalated")
    came: list[DriftFinding] = []
    unswept: list[DriftFinding] = []
    for i, f in current.items():
        previous = compared((f.source, f.drift_type, f.table))
        if f.alert_reason == "escalated" or (previous is not None and i in previous.ids):
            continue
        (came if previous is not None or every or f.drift_type in ran else unswept).append(f)
    resolved = []
    for i in dict.fromkeys(i for s in reversed(sweeps) for i in s.ids):
        entry = known.get(i) or {}
        source, detector, table = (str(entry.get(k)) for k in ("source", "detector", "table"))
        if not run.resolves(i, (source, detector, table)):
            continue
        previous = compared((source, detector, table))
        if previous is None or i not in previous.ids:
            continue  # the last sweep that looked for it had not seen it: resolved before
        seen = history.seen.get(i)
        resolved.append(Resolved(
            i, source, table, detector, tuple(str(c) for c in entry.get("columns") or ()),
            seen.last if seen else None))
    looked = next((s.at for s in reversed(sweeps) if any(map(s.looked, run.tables))), None)
    return SinceLastSweep(
        looked or sweeps[-1].at,
        new=tuple(f for f in came if f.id not in history.seen),
        reopened=tuple(f for f in came if f.id in history.seen),
        escalated=escalated,
        resolved=tuple(resolved),
        unswept=tuple(unswept),
    )


def report_detectors(include: Iterable[str], profile_store_exists: bool) -> tuple[str, ...]:
    """What a report runs: the defaults, removal and `include`, plus distribution when a
    profile store exists (a first report creates it: removal sums its windows from it).

    >>> report_detectors((), True)[:3], "distribution" in report_detectors((), False)
    (('additive', 'removal', 'missing'), False)
    """
    from dlt_contract_ops.detectors.registry import selected

    extra = {"distribution"} if profile_store_exists else set()
    return selected({"removal", *include, *extra})


class Gatherer:
    """Runs the report's sweep (`run`) and keeps what the pictures need; `report(results)`
    then puts the page's data together (also from the results of an interrupted sweep)."""

    def __init__(self, project_dir: str | os.PathLike[str] | None = None) -> None:
        self.project_dir = project_dir
        self.detectors: tuple[str, ...] = ()
        self.frames: dict[str, Frame] = {}
        self.tables: dict[tuple[str, str], TableLoads] = {}
        self.handoffs: dict[tuple[str, str], list[Handoff]] = {}
        #: (source, detector, table) of every table the run checked completely
        self.checked: set[Where] = set()

    def run(
        self, sources: Sequence[str], include: Iterable[str] = (),
        progress: Progress | None = None, started: Callable[[], None] | None = None,
    ) -> list[ReconcileResult]:
        """The report's sweep; `started` is called once start-up is over (before the first
        source is built), as `reconcile` tells the console script."""
        from dlt_contract_ops.engine.reconcile import check_source_names, run

        check_source_names(sources, self.project_dir)  # a mistyped `-s`: exit 2, one line
        self.detectors = report_detectors(include, self._store_exists())
        if started is not None:
            started()
        return run(list(sources) or None, detectors=self.detectors, dry_run=True,
                   alert_sinks=(), project_dir=self.project_dir, progress=progress,
                   inspect=self._inspect, checked=self.checked)

    def report(self, results: list[ReconcileResult], now: datetime | None = None) -> Report:
        """The page's data; `now` is the run's moment the page reads its times against (the
        wall clock when None)."""
        moment = now or datetime.now(timezone.utc)
        history, since = self._history(results, moment)
        return Report(results, self.detectors, self.frames, self.tables, self.handoffs,
                      history, moment, since)

    def _history(
        self, results: list[ReconcileResult], now: datetime
    ) -> tuple[History, SinceLastSweep]:
        """The finding index's history and what changed since its sweeps."""
        from dlt_contract_ops.history.index import known_findings, read_sweeps
        from dlt_contract_ops.settings.files import project_context

        try:
            with project_context(self.project_dir) as pdir:
                history, sweeps = read_sweeps(pdir, now)
                known = known_findings(pdir) if sweeps else {}
        except Exception as exc:  # the history is a convenience: the page shows without it
            log.warning("finding index not read: %s", exc)
            return History(), SinceLastSweep(error=str(exc))
        return history, since_last_sweep(results, history, sweeps, known,
                                         swept(self.checked, results))

    def _store_exists(self) -> bool:
        from dlt_contract_ops.profiles.store import default_store
        from dlt_contract_ops.settings.files import project_context
        from dlt_contract_ops.settings.project import load_project_settings

        with project_context(self.project_dir):
            project = load_project_settings()
            path = project.profile_store or default_store()
            return path.exists()

    def _inspect(self, ctx: SourceInput, results: list[ReconcileResult]) -> None:
        """Keep one source's frame, load profiles and rename handoffs; a picture that cannot
        be drawn is left out, never the source's findings."""
        removal = ctx.settings.removal
        windows = Windows.of(ctx.clock(), removal)
        self.frames[ctx.name] = Frame(
            windows.recent_start.timestamp(), windows.baseline_start.timestamp(),
            removal.baseline_threshold, removal.recent_threshold, ctx.settings.distribution,
        )
        try:
            self._profiles(ctx)
        except Exception as exc:  # the findings still show, without their pictures
            log.info("no load profiles for source `%s`: %s", ctx.name, exc)
        for r in results:
            for f in r.findings:
                if f.drift_type == "rename" and f.renamed_from and f.renamed_to:
                    self._handoff(ctx, f.table, f.renamed_from, f.renamed_to)

    def _profiles(self, ctx: SourceInput) -> None:
        from dlt_contract_ops.profiles.shared import shared_profiles

        for t in shared_profiles(ctx, ctx.settings):
            if t.error is not None:
                continue
            columns = tuple(c.name for c in t.columns if c.monitored)
            self.tables[(ctx.name, t.expected.table)] = TableLoads(columns, tuple(t.monitored))

    def _handoff(self, ctx: SourceInput, table: str, old: str, new: str) -> None:
        """The rename's two columns per load: the query the rename detector runs."""
        from dlt_contract_ops.core.columns import LOAD_ID, TimeAxis
        from dlt_contract_ops.detectors.queries import axis_bound, handoff_query

        start = Windows.of(ctx.clock(), ctx.settings.removal).baseline_start
        try:
            query = handoff_query(ctx.adapter.table(table), [old, new], LOAD_ID)
            rows: Any = ctx.adapter.run(query, [axis_bound(start, TimeAxis(LOAD_ID, "load_id"))],
                                        "coverage")
        except Exception as exc:
            log.info("no handoff picture for `%s`.`%s`: %s", ctx.name, table, exc)
            return
        loads = tuple((str(r[0]), int(r[1] or 0), int(r[2] or 0), int(r[3] or 0)) for r in rows)
        self.handoffs.setdefault((ctx.name, table), []).append(Handoff(old, new, loads))
