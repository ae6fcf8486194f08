"""The public entry points: wire config, source discovery, adapters, detectors and sinks.

Every entry point opens one sweep: sinks are loaded once, each source is built once, live
columns are read once per (destination, dataset), and sinks are flushed on the way out.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from dlt_contract_ops.acks.store import AckBook, load_book
from dlt_contract_ops.core.removal import (
    DEFAULT_BASELINE_THRESHOLD,
    DEFAULT_BASELINE_WINDOW,
    DEFAULT_RECENT_THRESHOLD,
    DEFAULT_RECENT_WINDOW,
)
from dlt_contract_ops.core.shard import Shard
from dlt_contract_ops.detection.source_input import SourceInput
from dlt_contract_ops.detectors.registry import detector_names, reconcile_detectors, selected
from dlt_contract_ops.engine.context import Sweep
from dlt_contract_ops.engine.detector_runs import error_result, run_detectors
from dlt_contract_ops.engine.read_problems import read_error_line
from dlt_contract_ops.engine.sharding import UNSENT, parse_shard, reported_elsewhere
from dlt_contract_ops.engine.swept import Recording, Where, checked_tables, swept
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.model.findings import NOT_LOADED, ReconcileResult
from dlt_contract_ops.settings.files import project_context
from dlt_contract_ops.settings.problems import misplaced_sections, no_source_message
from dlt_contract_ops.settings.project import (
    check_source_tables,
    declared_sources,
    load_project_settings,
)
from dlt_contract_ops.settings.removal import REMOVAL_FIELDS, RemovalOverrides, RemovalSettings
from dlt_contract_ops.settings.severity import check_severity_tables
from dlt_contract_ops.sinks.base import AlertSink, ResolvedAlert
from dlt_contract_ops.sinks.emitter import DeliveryReport, Emitter
from dlt_contract_ops.sinks.lifecycle import resolved_note
from dlt_contract_ops.sources.onboarding import attach_scope, selected_sources

log = logging.getLogger("dlt_contract_ops")

#: told of each source as it is built, before its detectors query: (index from 1, total,
#: source name, modelled table count; None when the source could not be built)
Progress = Callable[[int, int, str, "int | None"], None]


#: shown each source's context and results once its detectors ran (`run(inspect=...)`)
Inspect = Callable[[SourceInput, list[ReconcileResult]], None]


class _AnnouncingSweep(Sweep):
    """A sweep that tells `progress` of each source it builds (`run(progress=...)`)."""

    def __init__(
        self, *args: Any, names: Sequence[str], progress: Progress, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._names = list(names)
        self._progress = progress

    def context(self, name: str) -> SourceInput:
        index, total = self._names.index(name) + 1, len(self._names)
        try:
            ctx = super().context(name)
        except Exception:
            self._progress(index, total, name, None)
            raise
        self._progress(index, total, name, len(ctx.built.tables))
        return ctx


class SweepInterrupted(BaseException):
    """The sweep was stopped by SIGINT/SIGTERM; `results` holds what finished."""

    def __init__(self, results: list[ReconcileResult], cause: BaseException) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.results = results
        self.cause = cause


def removal_overrides(
    values: Mapping[str, Any], name_of: Callable[[str], str] | None = None
) -> RemovalOverrides:
    """Check caller overrides of the removal settings before anything connects or alerts;
    ConfigError naming the key (or the flag, through `name_of`). The checked overrides
    (`run(removal=...)` takes them as they are) are read into their types once."""
    if isinstance(values, RemovalOverrides):
        return values
    checked = RemovalOverrides.check(values, name_of)
    if checked:
        log.debug("removal overrides checked: %s",
                  ", ".join(f"{k} = {v}" for k, v in checked.items()))
    return checked


def _run_source(
    sweep: Sweep, name: str, detectors: Sequence[str], removal: RemovalOverrides,
    book: AckBook, inspect: Inspect | None = None, checked: set[Where] | None = None,
) -> list[ReconcileResult]:
    started = time.perf_counter()
    try:
        ctx = sweep.context(name)
    except Exception as exc:
        # one error block per source: the detectors never ran; sharded, one shard sends it
        if not sweep.reports(name):
            return [reported_elsewhere(sweep.shard, error_result(
                name, detectors[0], exc, UNSENT, started))]
        return [error_result(name, detectors[0], exc, sweep.emitter, started)]
    if sweep.elsewhere(ctx):
        return []  # none of its tables is this shard's, and another shard reports it
    ctx = sweep.for_detectors(ctx, detectors)  # what they declared they read (profiles)
    settings = replace(ctx.settings, removal=removal.apply(ctx.settings.removal))
    # each finding carries its acknowledgement from here on: the sinks (an unexpired one
    # holds it back) and every output read the one stamp
    recording = Recording(sweep.emitter)  # which tables a detector could not check
    results = [r.model_copy(update={"findings": [book.stamp(f) for f in r.findings]})
               for r in run_detectors(ctx, detectors, settings, recording)]
    if checked is not None:  # the tables checked in full: a finding gone there is resolved
        checked.update(checked_tables(ctx, results, recording.errors))
    if inspect is not None:
        inspect(ctx, results)
    unread = read_error_line(ctx.read_errors)
    if unread is not None:  # files the adapter could not read: once, on the first block
        message = f"{unread}. The other tables were checked."
        sweep.emitter.error(ctx.error_event(message, None, None, detectors[0]))
        first = results[0]
        results[0] = first.model_copy(update={
            "error": f"{first.error} {message}" if first.error else message,
            "error_kind": first.error_kind or "query"})
    # one dedup decision (one read and write of the state file) for the source's findings
    sweep.emitter.drift_all([finding for r in results for finding in r.findings])
    # the first block also carries the time spent building the source and reading metadata
    rest = sum(r.duration_s for r in results[1:])
    total = round(time.perf_counter() - started - rest, 4)
    results[0] = results[0].model_copy(update={"duration_s": total})
    return results


def _with_delivery(
    results: list[ReconcileResult], report: DeliveryReport, acks: AckBook | None = None
) -> list[ReconcileResult]:
    """Carry each finding's alert status onto it (its acknowledgement it carries since its
    source ran); a result with
    undelivered findings (a paging sink, or every sink, did not deliver them) gets an error
    naming them and the sinks (the run then exits 1), so a lost page is never silent. An acks
    file that could not be read is an error on each source's first result (its alerts went
    out as if nothing were acknowledged)."""
    undelivered = {f.id for f in report.undelivered}
    told: set[str] = set()  # sources whose result carries the acks file's error
    out = []
    for r in results:
        findings = []
        for f in r.findings:
            mark = report.ledger.mark(f)
            if mark is not None:  # a page sent again says why: reopened, escalated
                why = mark.reason if mark.reason in ("reopened", "escalated") else None
                f = f.model_copy(update={"alert": mark.status, "alert_reason": why})
            findings.append(f)
        lost = [f for f in findings if f.id in undelivered]
        changes: dict[str, Any] = {"findings": findings}
        errors = [r.error] if r.error else []
        kind = r.error_kind
        if acks is not None and acks.error and r.source not in told:
            told.add(r.source)  # once per source: its first result carries it
            errors.append(acks.error)
            kind = kind or "acks"
        if lost:
            errors.append(report.problem(lost))
            kind = kind or "delivery"
        if len(errors) > (1 if r.error else 0):
            changes["error"] = " ".join(errors)
            changes["error_kind"] = kind
        out.append(r.model_copy(update=changes))
    return out


def check_source_names(
    sources: Sequence[str], project_dir: str | os.PathLike[str] | None = None
) -> None:
    """UnknownSourceError (with a did-you-mean) for the first name no
    `[sources.<name>.contract_ops]` declares: for a caller (the CLI) that refuses a mistyped
    request before anything runs or alerts. `run` itself reports an unknown name on that
    source's result, so the others are still reconciled."""
    from dlt_contract_ops.errors import UnknownSourceError
    from dlt_contract_ops.settings.project import load_source_settings

    with project_context(project_dir):
        project = load_project_settings()
        for name in selected_sources(sources):
            try:
                load_source_settings(name, project, check_keys=False)
            except UnknownSourceError:
                raise
            except ConfigError:
                pass  # any other mistake in a source's table is reported on that source


def run(
    sources: Sequence[str] | None = None,
    *,
    detectors: Sequence[str] | None = None,
    dry_run: bool = False,
    project_dir: str | os.PathLike[str] | None = None,
    alert_sinks: Sequence[str | AlertSink] | None = None,
    removal: Mapping[str, Any] | None = None,
    dedup: bool = True,
    progress: Progress | None = None,
    inspect: Inspect | None = None,
    shard: Shard | str | None = None,
    checked: set[Where] | None = None,
) -> list[ReconcileResult]:
    """Run `detectors` over `sources` (every declared source when None) in one sweep.

    `detectors` defaults to those every reconcile runs (`detectors.selected()`). Results
    come per source, in `detectors` order. A failing source yields one result with
    `error` set and the sweep goes on. `removal` overrides the configured removal windows
    and thresholds (keys of `[contract_ops.removal]`, plus `now`). `dedup=False` sends every
    finding to the sinks, whatever the alert state file says (the CLI's `--no-dedup`).
    Each finding carries what became of its alert (`alert`); one no sink delivered puts an
    error on its result. `progress` is told of each source as it is built (see `Progress`).
    `alert_sinks` replaces the configured `[contract_ops] alert_sinks`: names, or sink
    instances such as `dlt_contract_ops.sinks.memory.MemorySink` (what a test inspects).
    `inspect` sees each source's context and results once its detectors ran (the report
    reads the load profiles they shared). A run that is not a dry run records its findings
    in the finding index (`history.index`). `shard` (a `core.shard.Shard`, or `"2/3"`) runs
    only that shard's tables of each source: N runs, one per shard, find what one run does.
    `checked` gets (source, detector, table) of every table a detector checked completely
    (`engine.swept`), also when interrupted: what the report resolves against, as the
    alert lifecycle does.
    """
    detectors = selected() if detectors is None else tuple(detectors)
    unknown = [d for d in detectors if d not in detector_names()]
    if unknown or not detectors:
        raise ConfigError(
            f"Unknown detector(s) {unknown}; choose from {', '.join(reconcile_detectors())}."
        )
    overrides = removal_overrides(removal or {})
    part = parse_shard(shard)
    now = overrides.now
    # each local pipeline is attached (its state read) once a run: `attach_scope`
    with project_context(project_dir) as pdir, attach_scope():
        project = load_project_settings()
        for problem in misplaced_sections():
            log.warning("%s", problem)
        names = selected_sources(sources) if sources is not None else declared_sources()
        if not names:
            raise ConfigError(no_source_message(os.path.join(pdir, ".dlt", "config.toml")))
        check_severity_tables(names)  # a bad one is exit 2 before any source is alerted
        check_source_tables(project, names)  # and so is a bad value in a source's tables
        sink_names = tuple(alert_sinks) if alert_sinks is not None else project.alert_sinks
        # a sink that cannot be built is the project's mistake: refused here, before
        # anything is swept or alerted (a dry run loads no sink)
        emitter = Emitter.from_names(
            sink_names, dry_run=dry_run, dedup=dedup, dedup_settings=project.dedup, strict=True
        )
        book = load_book(pdir, now)
        sweep = Sweep(project, pdir, emitter, now=now, shard=part)
        if progress is not None:
            sweep = _AnnouncingSweep(
                project, pdir, emitter, now=now, shard=part, names=names, progress=progress
            )
        results: list[ReconcileResult] = []
        checked = set() if checked is None else checked
        try:
            for name in names:
                results.extend(
                    _run_source(sweep, name, detectors, overrides, book, inspect, checked))
            resolved = emitter.resolve(swept(checked, results))
        except (KeyboardInterrupt, SystemExit) as exc:
            sweep.close()
            emitter.flush()
            raise SweepInterrupted(_with_delivery(results, emitter.report, book), exc) from exc
        sweep.close()
        emitter.flush()
        _remember(pdir, results, detectors, sweep=not dry_run, shard=sweep.shard,
                  covered=sweep.covered)
        return _with_resolved(_with_delivery(results, emitter.report, book), resolved)


def _with_resolved(
    results: list[ReconcileResult], resolved: Sequence[ResolvedAlert]
) -> list[ReconcileResult]:
    """A note on each source's first result for each of its findings resolved this run."""
    notes: dict[str, list[str]] = {}
    for a in resolved:
        notes.setdefault(a.source, []).append(resolved_note(a))
    out = []
    for r in results:
        out.append(r.model_copy(update={"notes": [*r.notes, *notes.pop(r.source)]})
                   if r.source in notes else r)
    return out


def _remember(
    project_dir: str, results: list[ReconcileResult], detectors: Sequence[str], *,
    sweep: bool, shard: Shard | None = None, covered: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """Record this run's findings in the finding index (`history.index`): what each id
    stands for, for `ack` and `validate`; a `sweep` (not a dry run) also its line with the
    sources it checked without an error and the `detectors` it ran, for the report's history
    and what changed since (a shard's line also names its shard and the tables it covered)."""
    from dlt_contract_ops.history.index import record_run

    failed = {r.source for r in results if r.error is not None or r.error_kind == NOT_LOADED}
    try:  # the index is a convenience: never fail a sweep over it
        record_run(project_dir, [f for r in results for f in r.findings], sweep=sweep,
                   shard=shard, covered=covered, detectors=detectors,
                   sources=[r.source for r in results if r.source not in failed])
    except Exception as exc:
        log.debug("finding index not updated: %s", exc)


def reconcile_source(
    name: str,
    *,
    dry_run: bool = False,
    project_dir: str | os.PathLike[str] | None = None,
    alert_sinks: Sequence[str | AlertSink] | None = None,
    dedup: bool = True,
) -> ReconcileResult:
    """Additive drift of one source: live columns its resources' models do not know.

    >>> result = reconcile_source("product_events", dry_run=True)  # doctest: +SKIP
    >>> [f.columns for f in result.findings]  # doctest: +SKIP
    [['ip-address', 'payload_size']]
    """
    return run(
        [name], detectors=("additive",), dry_run=dry_run, project_dir=project_dir,
        alert_sinks=alert_sinks, dedup=dedup,
    )[0]


def reconcile_all(
    *,
    include_removal: bool = False,
    dry_run: bool = False,
    project_dir: str | os.PathLike[str] | None = None,
    alert_sinks: Sequence[str | AlertSink] | None = None,
    dedup: bool = True,
    shard: Shard | str | None = None,
) -> list[ReconcileResult]:
    """Every declared source, each against its own destination and dataset: additive,
    missing and type drift, plus removal drift with `include_removal`. `shard` (`"2/3"`):
    only that shard's tables (`run`), for N orchestrator tasks that share one sweep.

    >>> reconcile_all(shard="2/3")  # doctest: +SKIP
    """
    return run(
        None,
        detectors=selected({"removal"} if include_removal else ()),
        dry_run=dry_run,
        project_dir=project_dir,
        alert_sinks=alert_sinks,
        dedup=dedup,
        shard=shard,
    )


def detect_removal(
    source_name: str,
    *,
    dry_run: bool = False,
    recent_window: timedelta = DEFAULT_RECENT_WINDOW,
    baseline_window: timedelta = DEFAULT_BASELINE_WINDOW,
    baseline_threshold: float = DEFAULT_BASELINE_THRESHOLD,
    recent_threshold: float = DEFAULT_RECENT_THRESHOLD,
    now: datetime | None = None,
    project_dir: str | os.PathLike[str] | None = None,
    alert_sinks: Sequence[str | AlertSink] | None = None,
    dedup: bool = True,
) -> ReconcileResult:
    """Removal drift of one source: declared columns whose non-NULL coverage collapsed.

    A column went dark when its coverage in the baseline window (`baseline_window` ending
    where the recent window starts) exceeds `baseline_threshold` and its coverage in the
    recent window (the last `recent_window` before `now`) is below `recent_threshold`.
    Arguments left at their defaults yield to `[contract_ops.removal]` and
    `[sources.<X>.contract_ops.removal]`.

    >>> detect_removal("product_events", recent_window=timedelta(hours=1))  # doctest: +SKIP
    """
    given = {k: v for k, v in locals().items() if k in REMOVAL_FIELDS}  # the arguments above
    defaults = RemovalSettings()
    options: dict[str, Any] = {k: v for k, v in given.items() if v != getattr(defaults, k)}
    if now is not None:
        options["now"] = now
    return run(
        [source_name], detectors=("removal",), dry_run=dry_run, project_dir=project_dir,
        alert_sinks=alert_sinks, removal=options, dedup=dedup,
    )[0]
