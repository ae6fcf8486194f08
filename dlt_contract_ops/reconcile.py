"""The public entry points: wire config, source discovery, adapters, detectors and sinks.

Every entry point opens one sweep: sinks are loaded once, each source is built once, live
columns are read once per (destination, dataset), and sinks are flushed on the way out.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from dlt_contract_ops.config import (
    declared_sources,
    load_project_settings,
    project_context,
)
from dlt_contract_ops.context import SourceContext, Sweep
from dlt_contract_ops.core.removal import (
    DEFAULT_BASELINE_THRESHOLD,
    DEFAULT_BASELINE_WINDOW,
    DEFAULT_RECENT_THRESHOLD,
    DEFAULT_RECENT_WINDOW,
)
from dlt_contract_ops.detectors.additive import run_additive
from dlt_contract_ops.detectors.declared import run_missing, run_type
from dlt_contract_ops.detectors.removal import RemovalOptions, run_removal
from dlt_contract_ops.errors import ConfigError, ContractOpsError
from dlt_contract_ops.findings import ReconcileResult
from dlt_contract_ops.sinks.base import ErrorEvent
from dlt_contract_ops.sinks.emitter import Emitter

log = logging.getLogger("dlt_contract_ops")

#: detectors of every reconcile, in output order; `removal` joins with --include-removal
DETECTORS: tuple[str, ...] = ("additive", "missing", "type")
ALL_DETECTORS: tuple[str, ...] = ("additive", "removal", "missing", "type")

Runner = Callable[[SourceContext, Emitter], ReconcileResult]


@contextmanager
def _sweep(
    project_dir: str | os.PathLike[str] | None,
    dry_run: bool,
    alert_sinks: Sequence[str] | None,
    dedup: bool = True,
) -> Iterator[Sweep]:
    with project_context(project_dir) as pdir:
        project = load_project_settings()
        names = tuple(alert_sinks) if alert_sinks is not None else project.alert_sinks
        emitter = Emitter.from_names(names, dry_run=dry_run, dedup=dedup)
        sweep = Sweep(project, pdir, emitter)
        try:
            yield sweep
        finally:
            sweep.close()
            emitter.flush()


def _error_result(
    name: str, detector: str, exc: BaseException, emitter: Emitter, started: float
) -> ReconcileResult:
    message = str(exc) if isinstance(exc, ContractOpsError) else f"{type(exc).__name__}: {exc}"
    kind = "config" if isinstance(exc, ConfigError) else type(exc).__name__
    emitter.error(ErrorEvent(source=name, message=message, detector=detector, exception=exc))
    return ReconcileResult(
        source=name,
        detector=detector,
        error=message,
        error_kind=kind,
        duration_s=round(time.perf_counter() - started, 4),
    )


def _removal_options(ctx: SourceContext, overrides: Mapping[str, Any] | None) -> RemovalOptions:
    """Defaults < `[contract_ops.removal]` < `[sources.<X>.contract_ops.removal]` < caller."""
    options = RemovalOptions().merged(
        ctx.settings.removal, f"sources.{ctx.name}.contract_ops.removal"
    )
    overrides = dict(overrides or {})
    now = overrides.pop("now", None)
    options = options.merged(overrides, "arguments")
    return replace(options, now=now) if now is not None else options


def _run_source(
    sweep: Sweep, name: str, detectors: Sequence[str], removal: Mapping[str, Any] | None
) -> list[ReconcileResult]:
    started = time.perf_counter()
    try:
        ctx = sweep.context(name)
    except Exception as exc:
        # one error block per source: the detectors never ran
        return [_error_result(name, detectors[0], exc, sweep.emitter, started)]
    runners: dict[str, Runner] = {
        "additive": run_additive,
        "removal": lambda c, e: run_removal(c, e, _removal_options(c, removal)),
        "missing": run_missing,
        "type": run_type,
    }
    results = []
    for detector in detectors:
        t0 = time.perf_counter()
        try:
            results.append(runners[detector](ctx, sweep.emitter))
        except Exception as exc:
            results.append(_error_result(name, detector, exc, sweep.emitter, t0))
    # the first block also carries the time spent building the source and reading metadata
    rest = sum(r.duration_s for r in results[1:])
    total = round(time.perf_counter() - started - rest, 4)
    results[0] = results[0].model_copy(update={"duration_s": total})
    return results


def run(
    sources: Sequence[str] | None = None,
    *,
    detectors: Sequence[str] = DETECTORS,
    dry_run: bool = False,
    project_dir: str | os.PathLike[str] | None = None,
    alert_sinks: Sequence[str] | None = None,
    removal: Mapping[str, Any] | None = None,
    dedup: bool = True,
) -> list[ReconcileResult]:
    """Run `detectors` over `sources` (every declared source when None) in one sweep.

    Results come per source, in `detectors` order. A failing source yields one result with
    `error` set and the sweep goes on. `removal` overrides the configured removal windows
    and thresholds (keys of `[contract_ops.removal]`, plus `now`). `dedup=False` sends every
    finding to the sinks, whatever the alert state file says (the CLI's `--no-dedup`).
    """
    unknown = [d for d in detectors if d not in ALL_DETECTORS]
    if unknown or not detectors:
        raise ConfigError(
            f"Unknown detector(s) {unknown}; choose from {', '.join(ALL_DETECTORS)}."
        )
    with _sweep(project_dir, dry_run, alert_sinks, dedup) as sweep:
        # a source named twice is still built, reported and alerted once
        names = list(dict.fromkeys(sources)) if sources is not None else declared_sources()
        results: list[ReconcileResult] = []
        for name in names:
            results.extend(_run_source(sweep, name, detectors, removal))
        return results


def reconcile_source(
    name: str,
    *,
    dry_run: bool = False,
    project_dir: str | os.PathLike[str] | None = None,
    alert_sinks: Sequence[str] | None = None,
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
    alert_sinks: Sequence[str] | None = None,
    dedup: bool = True,
) -> list[ReconcileResult]:
    """Every declared source, each against its own destination and dataset: additive,
    missing and type drift, plus removal drift with `include_removal`."""
    return run(
        None,
        detectors=ALL_DETECTORS if include_removal else DETECTORS,
        dry_run=dry_run,
        project_dir=project_dir,
        alert_sinks=alert_sinks,
        dedup=dedup,
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
    alert_sinks: Sequence[str] | None = None,
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
    given = {
        "recent_window": recent_window,
        "baseline_window": baseline_window,
        "baseline_threshold": baseline_threshold,
        "recent_threshold": recent_threshold,
    }
    defaults = RemovalOptions()
    options: dict[str, Any] = {k: v for k, v in given.items() if v != getattr(defaults, k)}
    if now is not None:
        options["now"] = now
    return run(
        [source_name], detectors=("removal",), dry_run=dry_run, project_dir=project_dir,
        alert_sinks=alert_sinks, removal=options, dedup=dedup,
    )[0]
