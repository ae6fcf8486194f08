"""What `dlt-contract-ops report` runs and gathers for its page.

The report runs what a scheduled `reconcile` runs (`report_detectors`: the default
detectors and removal, plus the `--include-<name>` ones, plus distribution once a profile
store exists), never alerting, and keeps, per source, what the pictures need: each root
table's stored load profiles (already read by the sweep: removal and distribution share
them), the removal windows and thresholds, the distribution rule, and, per rename, both
columns' per-load counts (one read-only handoff query per renamed table). Then it reads the
finding index for the history across sweeps. Nothing is written anywhere.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dlt_contract_ops.core.distribution import DistributionRule
from dlt_contract_ops.core.history import History
from dlt_contract_ops.core.load_profile import LoadProfile
from dlt_contract_ops.core.timeaxis import Windows

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput
    from dlt_contract_ops.engine.reconcile import Progress
    from dlt_contract_ops.model.findings import ReconcileResult

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
                   inspect=self._inspect)

    def report(self, results: list[ReconcileResult], now: datetime | None = None) -> Report:
        from dlt_contract_ops.history.index import read_history
        from dlt_contract_ops.settings.files import project_context

        moment = now or datetime.now(timezone.utc)
        try:
            with project_context(self.project_dir) as pdir:
                history = read_history(pdir, moment)
        except Exception as exc:  # the history is a convenience: the page shows without it
            log.warning("finding index not read: %s", exc)
            history = History()
        return Report(results, self.detectors, self.frames, self.tables, self.handoffs,
                      history, moment)

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
