"""Orchestration: wire config, source discovery, adapters, detectors and sinks.

Each source is built once per run (one import, one call); live columns are read with one
metadata query per (destination, dataset) and shared by every detector and every source that
lands in that dataset.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from dlt_contract_ops.config import (
    ProjectSettings,
    SourceSettings,
    declared_sources,
    load_project_settings,
    load_source_settings,
    project_context,
)
from dlt_contract_ops.core.additive import detect_additive, ignored_columns
from dlt_contract_ops.core.columns import ExpectedTable, LiveTable, TimeAxis
from dlt_contract_ops.core.timeaxis import choose_time_axis
from dlt_contract_ops.destinations.base import SqlClientAdapter
from dlt_contract_ops.destinations.connect import Target, open_adapter, resolve_target
from dlt_contract_ops.discovery import BuiltSource, build_source
from dlt_contract_ops.errors import ConfigError, ContractOpsError
from dlt_contract_ops.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.jsonable import jsonable
from dlt_contract_ops.queries import (
    SAMPLES_PER_COLUMN,
    axis_time,
    reproduce_sample_query,
    sample_query,
)
from dlt_contract_ops.sinks.base import ErrorEvent
from dlt_contract_ops.sinks.emitter import Emitter

log = logging.getLogger("dlt_contract_ops")


@dataclass
class SourceContext:
    """Everything one source's detectors share in a run."""

    settings: SourceSettings
    built: BuiltSource
    target: Target
    adapter: SqlClientAdapter
    live: dict[str, LiveTable]
    notes: list[str] = field(default_factory=list)

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
        return choose_time_axis(
            live, self.load_timestamp_column, self.adapter.partition_column(table)
        )

    def present_tables(self) -> Iterator[tuple[ExpectedTable, LiveTable]]:
        """Modelled resources whose table exists; a note for each one that does not yet."""
        for expected in self.built.tables:
            live = self.live.get(expected.table)
            if live is None:
                continue
            yield expected, live

    def base_result(self, detector: str) -> dict[str, Any]:
        return {
            "source": self.settings.name,
            "pipeline": self.target.pipeline_name,
            "destination": self.target.destination_type,
            "dataset": self.adapter.dataset,
            "detector": detector,
        }


class Sweep:
    """One run over one or more sources: shared emitter, adapters and metadata cache."""

    def __init__(self, project: ProjectSettings, project_dir: str, emitter: Emitter) -> None:
        self.project = project
        self.project_dir = project_dir
        self.emitter = emitter
        self._live_cache: dict[tuple[str, str, str], dict[str, LiveTable]] = {}
        self.adapters: list[SqlClientAdapter] = []

    def context(self, name: str) -> SourceContext:
        settings = load_source_settings(name, self.project)
        built = build_source(name, settings.ref, self.project_dir)
        from dlt.common.schema import Schema

        schema = Schema(built.schema_name)
        schema.naming = built.naming  # same convention the source writes with
        target = resolve_target(
            name,
            settings.pipeline_name or name,
            settings.destination,
            settings.dataset_name,
            self.project_dir,
        )
        adapter = open_adapter(target, schema)
        self.adapters.append(adapter)
        key = (target.destination_type, str(getattr(adapter, "location", "")), adapter.dataset)
        if key not in self._live_cache:
            self._live_cache[key] = adapter.list_columns()
        live = self._live_cache[key]
        notes = list(built.notes)
        for expected in built.tables:
            if expected.table not in live:
                notes.append(
                    f"resource `{expected.resource}`: table `{expected.table}` does not exist in "
                    f"dataset `{adapter.dataset}` yet: skipped"
                )
        return SourceContext(settings, built, target, adapter, live, notes)

    def close(self) -> None:
        for adapter in self.adapters:
            try:
                adapter.close()
            except Exception as exc:  # closing must never mask a result
                log.debug("closing adapter failed: %s", exc)
        self.adapters.clear()


def _additive(ctx: SourceContext, emitter: Emitter) -> ReconcileResult:
    started = time.perf_counter()
    findings: list[DriftFinding] = []
    notes = list(ctx.notes)
    ignored = ctx.ignored()
    for expected, live in ctx.present_tables():
        drift = detect_additive(expected, live, ignored=ignored)
        if drift is None:
            continue
        axis = ctx.axis(expected.table)
        table = ctx.adapter.table(expected.table)
        samples: dict[str, list[Any]] = {c: [] for c in drift.columns}
        first_seen: str | None = None
        sample_error: str | None = None
        try:
            rows = ctx.adapter.run(sample_query(table, drift.columns, axis), [], "sample")
            for row in rows:
                for i, c in enumerate(drift.columns):
                    if row[i] is not None and len(samples[c]) < SAMPLES_PER_COLUMN:
                        samples[c].append(jsonable(row[i]))
            if rows and axis is not None:
                first_seen = axis_time(rows[0][len(drift.columns)], axis)
        except Exception as exc:
            sample_error = f"sample query for `{expected.table}` failed: {exc}"
            notes.append(sample_error)
            emitter.error(
                ErrorEvent(
                    source=ctx.settings.name,
                    pipeline=ctx.target.pipeline_name,
                    resource=expected.resource,
                    detector="additive",
                    message=sample_error,
                    exception=exc,
                )
            )
        finding = DriftFinding(
            drift_type="additive",
            source=ctx.settings.name,
            pipeline=ctx.target.pipeline_name,
            resource=expected.resource,
            table=expected.table,
            columns=list(drift.columns),
            column_types=dict(drift.column_types),
            samples=samples,
            first_seen=first_seen,
            reproduce=ctx.adapter.reproduce(reproduce_sample_query(table, drift.columns, axis), []),
            sample_error=sample_error,
        )
        findings.append(finding)
        emitter.drift(finding)
    return ReconcileResult(
        **ctx.base_result("additive"),
        findings=findings,
        notes=notes,
        duration_s=round(time.perf_counter() - started, 4),
    )



DETECTORS = ("additive",)


@contextmanager
def _sweep(
    project_dir: str | os.PathLike[str] | None,
    dry_run: bool,
    alert_sinks: Sequence[str] | None,
) -> Iterator[Sweep]:
    with project_context(project_dir) as pdir:
        project = load_project_settings()
        names = tuple(alert_sinks) if alert_sinks is not None else project.alert_sinks
        emitter = Emitter.from_names(names, sink_options(), dry_run=dry_run)
        sweep = Sweep(project, pdir, emitter)
        try:
            yield sweep
        finally:
            sweep.close()
            emitter.flush()


def sink_options() -> dict[str, dict[str, Any]]:
    """`[contract_ops.alert_sink.<name>]` tables, config and secrets merged."""
    import dlt

    out: dict[str, dict[str, Any]] = {}
    for accessor in (dlt.config, dlt.secrets):
        value = accessor.get("contract_ops.alert_sink")
        if isinstance(value, dict):
            for name, opts in value.items():
                if isinstance(opts, dict):
                    out.setdefault(name, {}).update(opts)
    return out


def _error_result(
    name: str, detector: str, exc: BaseException, sweep: Sweep, started: float
) -> ReconcileResult:
    message = str(exc) if isinstance(exc, ContractOpsError) else f"{type(exc).__name__}: {exc}"
    kind = "config" if isinstance(exc, ConfigError) else type(exc).__name__
    sweep.emitter.error(ErrorEvent(source=name, message=message, detector=detector, exception=exc))
    return ReconcileResult(
        source=name,
        detector=detector,  # type: ignore[arg-type]
        error=message,
        error_kind=kind,
        duration_s=round(time.perf_counter() - started, 4),
    )


def _run_source(sweep: Sweep, name: str, detectors: Sequence[str]) -> list[ReconcileResult]:
    started = time.perf_counter()
    try:
        ctx = sweep.context(name)
    except Exception as exc:
        return [_error_result(name, detectors[0], exc, sweep, started)]
    results = []
    for detector in detectors:
        t0 = time.perf_counter()
        try:
            results.append(_DETECTOR_RUNNERS[detector](ctx, sweep.emitter))
        except Exception as exc:
            results.append(_error_result(name, detector, exc, sweep, t0))
    if results:  # the first block carries the time spent building the source
        first = results[0]
        results[0] = first.model_copy(
            update={"duration_s": round(time.perf_counter() - started
                                        - sum(r.duration_s for r in results[1:]), 4)}
        )
    return results


_DETECTOR_RUNNERS = {"additive": _additive}


def run(
    sources: Sequence[str] | None = None,
    *,
    detectors: Sequence[str] = DETECTORS,
    dry_run: bool = False,
    project_dir: str | os.PathLike[str] | None = None,
    alert_sinks: Sequence[str] | None = None,
) -> list[ReconcileResult]:
    """Run `detectors` over `sources` (every declared source when None), in one sweep."""
    with _sweep(project_dir, dry_run, alert_sinks) as sweep:
        names = list(sources) if sources is not None else declared_sources()
        results: list[ReconcileResult] = []
        for name in names:
            results.extend(_run_source(sweep, name, detectors))
        return results


def reconcile_source(
    name: str,
    *,
    dry_run: bool = False,
    project_dir: str | os.PathLike[str] | None = None,
    alert_sinks: Sequence[str] | None = None,
) -> ReconcileResult:
    """Additive drift of one source: live columns its resources' models do not know.

    >>> result = reconcile_source("github_events_api", dry_run=True)  # doctest: +SKIP
    >>> [f.columns for f in result.findings]  # doctest: +SKIP
    [['payload_size']]
    """
    return run([name], detectors=("additive",), dry_run=dry_run, project_dir=project_dir,
               alert_sinks=alert_sinks)[0]


def reconcile_all(
    *,
    dry_run: bool = False,
    project_dir: str | os.PathLike[str] | None = None,
    alert_sinks: Sequence[str] | None = None,
) -> list[ReconcileResult]:
    """Every declared source, each against its own destination and dataset."""
    return run(None, dry_run=dry_run, project_dir=project_dir, alert_sinks=alert_sinks)
