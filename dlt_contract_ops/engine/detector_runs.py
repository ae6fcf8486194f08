"""One source's detectors in a run: the runners, then the combiners, then the fold.

Every detector gets a `DetectorRun` (`dlt_contract_ops.detection.detector`) with its own settings
(`settings.detectors.own_settings`); a combiner also gets the other detectors' results. A
combiner's finding that lists `components` takes its columns out of those component findings
(a rename folds the added and the vanished column into one finding), so only what is left
of them is reported and alerted. A detector that raises is an error result of its own; the
others still run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dlt_contract_ops.detection.detector import DetectorRun
from dlt_contract_ops.detectors.registry import checked, get
from dlt_contract_ops.detectors.settings import own_settings
from dlt_contract_ops.detectors.severity import graded
from dlt_contract_ops.errors import ConfigError, ContractOpsError, NotLoadedError
from dlt_contract_ops.model.findings import NOT_LOADED, DriftFinding, ReconcileResult
from dlt_contract_ops.sinks.base import ErrorEvent, HeldDrift

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput
    from dlt_contract_ops.settings.project import SourceSettings
    from dlt_contract_ops.sinks.base import Emits


def error_result(
    name: str, detector: str, exc: BaseException, emitter: Emits, started: float
) -> ReconcileResult:
    """The result of a source or detector that failed. Only a failure of a configured, valid
    sweep is an alert: a configuration mistake (unknown key, missing credentials) is the
    user's to fix (exit 2) and never reaches a sink; a source whose pipeline never ran here
    is "not loaded yet", a note."""
    message = str(exc) if isinstance(exc, ContractOpsError) else f"{type(exc).__name__}: {exc}"
    if isinstance(exc, NotLoadedError):
        return ReconcileResult(
            source=name,
            detector=detector,
            notes=[f"not loaded yet: {message}"],
            error_kind=NOT_LOADED,
            duration_s=round(time.perf_counter() - started, 4),
        )
    kind = "config" if isinstance(exc, ConfigError) else type(exc).__name__
    if kind != "config":
        emitter.error(ErrorEvent(source=name, message=message, detector=detector, exception=exc))
    return ReconcileResult(
        source=name,
        detector=detector,
        error=message,
        error_kind=kind,
        duration_s=round(time.perf_counter() - started, 4),
    )


def run_detectors(
    ctx: SourceInput, names: Sequence[str], source: SourceSettings, emitter: Emits
) -> list[ReconcileResult]:
    """`names` over one source: runners in order, then combiners over their results.
    Findings are returned, not alerted: the caller alerts what the fold left."""
    held = HeldDrift(emitter)  # errors pass through; findings ride on the results
    results: list[ReconcileResult] = []
    for combining in (False, True):
        for name in names:
            detector = get(name)
            if detector.combines != combining:
                continue
            t0 = time.perf_counter()
            try:
                run = DetectorRun(
                    detector=name,
                    ctx=ctx,
                    emitter=held,
                    settings=own_settings(detector, source),
                    source=source,
                    results=tuple(results) if combining else (),
                )
                result = graded(checked(detector.load()(run)), source.name)
            except Exception as exc:
                results.append(error_result(ctx.name, name, exc, emitter, t0))
                continue
            if combining:
                results = fold(results, result.findings)
            results.append(result)
    return results


def _without(f: DriftFinding, columns: set[str]) -> DriftFinding | None:
    """`f` without the folded columns, or None when nothing of it is left."""
    keep = [c for c in f.columns if c not in columns]
    if not keep:
        return None
    if len(keep) == len(f.columns):
        return f

    def only(d: dict[str, Any] | None) -> Any:
        return None if d is None else {k: v for k, v in d.items() if k in keep}

    firsts = only(f.column_first_seen) or {}
    details = f.details
    if details is not None:  # the per-column parts of the detector's details
        per_column = {"column_first_seen": firsts or None, "coverage": only(f.coverage),
                      "expected_types": only(f.expected_types)}
        details = details.model_copy(
            update={k: v for k, v in per_column.items() if k in type(details).model_fields}
        )
    return f.model_copy(update={
        "columns": keep,
        "first_seen": min(firsts.values()) if firsts else f.first_seen,
        "column_types": only(f.column_types) or {},
        "samples": only(f.samples) or {},
        "details": details,
    })


def fold(
    results: Sequence[ReconcileResult], combined: Sequence[DriftFinding]
) -> list[ReconcileResult]:
    """`results` with the columns of `combined`'s findings taken out of their component
    findings (`components: [{"id": ...}]`); a component left with no column is dropped."""
    folded: dict[str, set[str]] = {}  # component finding id -> columns folded out of it
    for finding in combined:
        for component in finding.components or []:
            folded.setdefault(str(component.get("id")), set()).update(finding.columns)
    if not folded:
        return list(results)
    out = []
    for r in results:
        kept = [g for f in r.findings
                for g in [_without(f, folded[f.id]) if f.id in folded else f] if g is not None]
        changed = len(kept) != len(r.findings) or any(
            a is not b for a, b in zip(kept, r.findings, strict=False)
        )
        out.append(r.model_copy(update={"findings": kept}) if changed else r)
    return out
