"""One source's detectors in a run: the runners, then the combiners, then the folds.

Every detector gets a `DetectorRun` (`dlt_contract_ops.detection.detector`) with its own settings
(`settings.detectors.own_settings`); a combiner also gets the other detectors' results. A
combiner's finding that lists `components` takes its columns out of those component findings
(a rename folds the added and the vanished column into one finding), so only what is left
of them is reported and alerted. Then each finding of a detector that `explains` part of
another's takes that part in (`explain`: a column gone dark takes its NULL-rate shift out of
the distribution finding): one event, one finding. A detector that raises is an error result
of its own; the others still run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dlt_contract_ops.detection.detector import DetectorRun, Explains
from dlt_contract_ops.detectors.registry import checked, get
from dlt_contract_ops.detectors.settings import own_settings
from dlt_contract_ops.detectors.severity import graded
from dlt_contract_ops.errors import ConfigError, ContractOpsError, NotLoadedError
from dlt_contract_ops.model.details import BUILT_IN, PluginDetails
from dlt_contract_ops.model.findings import NOT_LOADED, DriftFinding, ReconcileResult
from dlt_contract_ops.model.severity import rank
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
    return explain(results)


def _without(
    f: DriftFinding, columns: set[str], metrics: frozenset[str] | None = None
) -> DriftFinding | None:
    """`f` without the folded columns, or None when nothing of it is left. With `metrics`,
    only those of its `metrics` are folded out of the columns: a column with another metric
    left stays."""
    gone = set(columns)
    left = f.metrics
    if metrics is not None:
        left = [m for m in f.metrics or []
                if not (m.get("column") in gone and m.get("metric") in metrics)]
        gone -= {m.get("column") for m in left}
    keep = [c for c in f.columns if c not in gone]
    if not keep:
        return None
    if len(keep) == len(f.columns) and len(left or []) == len(f.metrics or []):
        return f

    def only(d: dict[str, Any] | None) -> Any:
        return None if d is None else {k: v for k, v in d.items() if k in keep}

    firsts = only(f.column_first_seen) or {}
    details = f.details
    if details is not None:  # the per-column parts of the detector's details
        per_column = {"column_first_seen": firsts or None, "coverage": only(f.coverage),
                      "expected_types": only(f.expected_types),
                      "metrics": [m for m in left or [] if m.get("column") in keep] or None}
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


#: per finding id, what is folded out of it: (columns, only these metrics of them or None)
_Folds = dict[str, list[tuple[set[str], frozenset[str] | None]]]


def fold(
    results: Sequence[ReconcileResult], combined: Sequence[DriftFinding]
) -> list[ReconcileResult]:
    """`results` with the columns of `combined`'s findings taken out of their component
    findings (`components: [{"id": ...}]`); a component left with no column is dropped."""
    folded: _Folds = {}
    for finding in combined:
        for component in finding.components or []:
            folded.setdefault(str(component.get("id")), []).append((set(finding.columns), None))
    return _folded(results, folded)


def _folded(results: Sequence[ReconcileResult], folded: _Folds) -> list[ReconcileResult]:
    if not folded:
        return list(results)
    out = []
    for r in results:
        kept = []
        for f in r.findings:
            g: DriftFinding | None = f
            for columns, metrics in folded.get(f.id, []):
                g = _without(g, columns, metrics) if g is not None else None
            if g is not None:
                kept.append(g)
        changed = len(kept) != len(r.findings) or any(
            a is not b for a, b in zip(kept, r.findings, strict=False)
        )
        out.append(r.model_copy(update={"findings": kept}) if changed else r)
    return out


def _with_details(g: DriftFinding, values: dict[str, Any]) -> Any:
    """`g`'s details with `values` set: a built-in's model (which must have the keys), or a
    plugin's data."""
    d = g.details
    if isinstance(d, PluginDetails):
        return d.model_copy(update={"data": {**d.data, **values}})
    model = type(d) if d is not None else BUILT_IN[g.drift_type]
    missing = sorted(set(values) - set(model.model_fields))
    if missing:
        raise TypeError(f"`{g.drift_type}` explains other findings, but its details model "
                        f"`{model.__name__}` has no {', '.join(missing)}")
    return (d if d is not None else model()).model_copy(update=values)


def _explained(
    g: DriftFinding, explains: Sequence[Explains], results: Sequence[ReconcileResult],
    folded: _Folds,
) -> DriftFinding:
    """`g` with what it explains of the other findings of its table taken in: their metrics
    of its columns (`metrics`), a component per finding they came from (each noted in
    `folded`), the worse of the severities."""
    taken: list[dict[str, Any]] = []
    components = list(g.components or [])
    severity = g.severity
    for e in explains:
        for f in (f for r in results if r.detector == e.detector for f in r.findings):
            ms = [m for m in f.metrics or []
                  if f.table == g.table and m.get("column") in g.columns
                  and m.get("metric") in e.metrics]
            if not ms:
                continue
            columns = sorted({str(m["column"]) for m in ms})
            taken += ms
            components.append({"id": f.id, "drift_type": f.drift_type, "columns": columns,
                               "metrics": list(e.metrics)})
            folded.setdefault(f.id, []).append((set(columns), frozenset(e.metrics)))
            severity = min(severity, f.severity, key=rank)
    if not taken:
        return g
    details = _with_details(g, {"metrics": [*(g.metrics or []), *taken],
                                "components": components})
    return g.model_copy(update={"details": details, "severity": severity})


def explain(results: Sequence[ReconcileResult]) -> list[ReconcileResult]:
    """`results` with each finding of a detector that `explains` part of another's findings
    (`Detector.explains`) holding that part, folded out of the other finding (dropped when
    nothing of it is left): a column that went dark, or was renamed, is one finding with its
    NULL-rate shift in it, reported and alerted once."""
    folded: _Folds = {}
    out = []
    for r in results:
        explains = get(r.detector).explains if r.findings else ()
        if not explains:
            out.append(r)
            continue
        findings = [_explained(g, explains, results, folded) for g in r.findings]
        out.append(r.model_copy(update={"findings": findings}))
    return _folded(out, folded)
