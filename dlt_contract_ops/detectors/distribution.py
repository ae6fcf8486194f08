"""Distribution drift: the newest load of each root table against its load profiles.

The sweep profiles the loads not yet profiled (`profiles.sweep`), then the pure rule
(`profiles.compare`) compares the newest load with its baseline. One finding per table with
shifted metrics (`drift_type: "distribution"`), carrying them in `metrics`. A newest load of
fewer than `min_rows` rows is not judged: a note says so. A NULL-rate shift of a column that
went dark or was renamed is folded into that removal or rename finding (`Detector.explains`).
"""

from __future__ import annotations

import time

from dlt_contract_ops.core.distribution import compare, too_small, window
from dlt_contract_ops.core.timeaxis import load_id_iso
from dlt_contract_ops.detection.detector import DetectorRun
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.profiles.query import history_query
from dlt_contract_ops.profiles.shared import shared_profiles, store_notes

DETECTOR = "distribution"


def run_distribution(run: DetectorRun) -> ReconcileResult:
    ctx, emitter, settings = run.ctx, run.emitter, run.source
    started = time.perf_counter()
    findings: list[DriftFinding] = []
    notes: list[str] = list(ctx.built.notes)
    failures: list[str] = []
    rule = run.settings
    try:
        tables = shared_profiles(ctx, settings)  # detailed: `Detector.profiles` says so
    except Exception as exc:  # the store (lock, file) failed: this source only
        message = f"load profiles of source `{ctx.name}` could not be updated: {exc}"
        emitter.error(ctx.error_event(message, exc, None, DETECTOR))
        return ctx.result(DETECTOR, started, [], notes, [message])
    notes += store_notes(ctx)
    for t in tables:
        if t.error is not None:
            message = f"profile query for table `{t.expected.table}` failed: {t.error}"
            failures.append(message)
            emitter.error(ctx.error_event(message, t.error, t.expected.resource, DETECTOR))
            continue
        if t.rewritten:
            notes.append(
                f"table `{t.expected.table}`: loads profiled earlier were rewritten (merge or "
                "replace): profiled afresh"
            )
        history = t.monitored
        w = window(history, rule)
        if w is not None and too_small(w.current, rule):
            notes.append(
                f"table `{t.expected.table}`: the newest load has {w.current.rows} row(s), "
                f"fewer than `min_rows` ({rule.min_rows}): too few for distribution drift to "
                "be judged"
            )
            continue
        if w is None or len(w.baseline) < rule.min_baseline_loads:
            have = 0 if w is None else len(w.baseline)
            notes.append(
                f"table `{t.expected.table}`: {have} earlier load(s) within the baseline window, "
                f"{rule.min_baseline_loads} needed before distribution drift may alert"
            )
            continue
        metrics = compare(history, rule, t.codes)
        if not metrics:
            continue
        columns = sorted({m.column for m in metrics})
        live = ctx.live[t.expected.table]
        first = w.baseline[0].load_id
        reproduce = ctx.adapter.reproduce(
            history_query(t.table, [c for c in t.columns if c.name in columns],
                          ctx.adapter.capabilities.approximate_distinct),
            [first],
        )
        finding = ctx.finding(
            DETECTOR,
            t.expected,
            columns,
            column_types={c: live.columns[c].data_type for c in columns},
            samples={},
            first_seen=load_id_iso(w.current.load_id),
            reproduce=reproduce,
            metrics=[m.as_dict() for m in metrics],
        )
        findings.append(finding)
        emitter.drift(finding)
    return ctx.result(DETECTOR, started, findings, notes, failures)
