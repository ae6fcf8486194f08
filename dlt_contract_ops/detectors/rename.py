"""Probable renames: one finding where the other detectors saw an added and a vanished column.

A combiner, not a query runner: it reads the other detectors' findings of one source (before
any is alerted), pairs an added column with a declared one that went dark (`removal`) or
missing (`missing`) in the same table by the one pairing rule (`core.rename`), and checks
the handoff with ONE query per table: the last load where the old column carried values must
be immediately followed by the first load where the new one does. A pair whose confidence
reaches `[contract_ops.rename] min_confidence` becomes one `rename` finding; its component
findings are folded into it (listed under `components`, not alerted on their own: the sweep
folds every combiner's components, `detector_runs.fold`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dlt_contract_ops.core.columns import LOAD_ID, TimeAxis
from dlt_contract_ops.core.rename import assign_pairs, candidate_pairs
from dlt_contract_ops.core.timeaxis import Windows, load_id_iso
from dlt_contract_ops.detection.detector import DetectorRun
from dlt_contract_ops.detectors.queries import axis_bound, handoff_query
from dlt_contract_ops.model.findings import Coverage, DriftFinding, ReconcileResult


@dataclass(frozen=True)
class Handoff:
    """What the per-load counts say about one (old, new) pair."""

    clean: bool  # the old column's last load is immediately followed by the new one's first
    handoff_load: str | None
    overlap_loads: int
    gap_loads: int
    new_recent: float | None


def _handoff(rows: Sequence[Sequence[Any]], old: int, new: int) -> Handoff:
    """Read `handoff_query` rows (load, rows, counts...) for the column at index `old`/`new`.

    >>> rows = [("1", 10, 10, 0), ("2", 10, 10, 0), ("3", 10, 0, 10), ("4", 10, 0, 9)]
    >>> h = _handoff(rows, 0, 1)
    >>> (h.clean, h.handoff_load, h.overlap_loads, h.new_recent)
    (True, '3', 0, 0.95)
    """
    loads = [(str(r[0]), int(r[1] or 0), int(r[2 + old] or 0), int(r[2 + new] or 0))
             for r in rows]
    with_old = [i for i, (_, _, o, _) in enumerate(loads) if o > 0]
    with_new = [i for i, (_, _, _, n) in enumerate(loads) if n > 0]
    if not with_new:
        return Handoff(False, None, 0, 0, None)
    first_new = with_new[0]
    overlap = sum(1 for _, _, o, n in loads if o > 0 and n > 0)
    after = loads[first_new:]
    rows_after = sum(r for _, r, _, _ in after)
    recent = round(sum(n for _, _, _, n in after) / rows_after, 6) if rows_after else None
    if not with_old:
        return Handoff(False, loads[first_new][0], overlap, 0, recent)
    last_old = with_old[-1]
    return Handoff(
        clean=overlap == 0 and first_new == last_old + 1,
        handoff_load=loads[first_new][0],
        overlap_loads=overlap,
        gap_loads=max(0, first_new - last_old - 1),
        new_recent=recent,
    )


def _component(f: DriftFinding) -> dict[str, Any]:
    return {"id": f.id, "drift_type": f.drift_type, "columns": list(f.columns)}


def _score(
    new: str, old: str, new_types: dict[str, str | None], old_types: dict[str, str | None],
    old_kind: str, rows: Sequence[Sequence[Any]] | None, columns: Sequence[str],
) -> tuple[float, list[str], Handoff | None]:
    """One candidate pair's confidence, the reasons for it, and its handoff (when the old
    column's per-load history could be read). `rows` is the table's handoff query (None: the
    table has no load ids)."""
    reasons = [f"`{new}` ({new_types.get(new)}) can hold `{old}` ({old_types.get(old)})"]
    confidence = 0.3
    if new_types.get(new) == old_types.get(old):
        confidence += 0.1
        reasons.append("same type")
    if rows is None:
        reasons.append(f"`{old}` is {old_kind}: the load boundary cannot be checked")
        return round(confidence, 2), reasons, None
    if old_kind != "removal":
        # the old column is gone from the table: no history of its own. Values of the new one
        # back to the oldest load read fit a column renamed in place in the warehouse
        # (`ALTER TABLE ... RENAME COLUMN`: the old rows carry the new name), but just as well
        # a column added and backfilled while the other was dropped: enough to prefer this
        # pair over a column added later, never enough alone for a finding (a note)
        i = columns.index(new)
        carrying = [int(r[2 + i] or 0) > 0 for r in rows]
        if len(rows) > 1 and all(carrying):
            confidence += 0.1
            reasons.append(
                f"`{old}` is gone from the table and `{new}` holds values in every load read "
                "(renamed in place, e.g. `ALTER TABLE ... RENAME COLUMN`)"
            )
        else:
            reasons.append(f"`{old}` is {old_kind}: the load boundary cannot be checked")
        return round(confidence, 2), reasons, None
    handoff = _handoff(rows, columns.index(old), columns.index(new))
    if handoff.clean:
        confidence += 0.4
        reasons.append(
            f"`{old}` stopped and `{new}` began at the same load boundary "
            f"(load {handoff.handoff_load})"
        )
    elif handoff.overlap_loads:
        confidence -= 0.2
        reasons.append(f"both carried values in {handoff.overlap_loads} load(s)")
    elif handoff.gap_loads:
        confidence += 0.1
        reasons.append(f"`{new}` began {handoff.gap_loads} load(s) after `{old}` stopped")
    return round(max(0.0, min(1.0, confidence)), 2), reasons, handoff


def run_rename(run: DetectorRun) -> ReconcileResult:
    """The rename block of one source, from the other detectors' results (`run.results`);
    each rename lists its component findings, which the sweep folds (`detector_runs.fold`).
    `run.settings` is `[contract_ops.rename] min_confidence`.

    Every compatible (added, vanished) pair of a table is scored on its own evidence, then
    the strongest pairs are taken first (`core.rename.assign_pairs`): a column added for
    another reason, earlier or with no values, cannot take the renamed column's partner.
    """
    started = time.perf_counter()
    ctx, results, settings = run.ctx, run.results, run.source
    min_confidence: float = run.settings
    by_kind: dict[str, dict[str, DriftFinding]] = {}
    for r in results:
        for f in r.findings:
            by_kind.setdefault(f.drift_type, {})[f.table] = f
    read = ctx.read_type
    expected = {t.table: t for t in ctx.built.tables}
    renames: list[DriftFinding] = []
    notes: list[str] = []
    failures: list[str] = []
    for table, added in sorted(by_kind.get("additive", {}).items()):
        gone_by_col = {c: f for kind in ("missing", "removal")
                       for f in [by_kind.get(kind, {}).get(table)] if f for c in f.columns}
        exp_table = expected.get(table)
        if not gone_by_col or exp_table is None:
            continue
        declared = {c.name: c.data_type for c in exp_table.columns}
        new_types = {c: read(t) for c, t in added.column_types.items()}
        old_types = {c: declared.get(c) for c in gone_by_col}
        candidates = candidate_pairs(new_types, old_types)
        if not candidates:
            continue
        live = ctx.live.get(table)
        rows: Sequence[Sequence[Any]] | None = None
        columns = sorted({n for n, _ in candidates}
                         | {o for _, o in candidates if gone_by_col[o].drift_type == "removal"})
        if live is not None and live.has(LOAD_ID):
            start = Windows.of(ctx.clock(), settings.removal).baseline_start
            try:
                query = handoff_query(ctx.adapter.table(table), columns, LOAD_ID)
                # the query groups and bounds on `_dlt_load_id`, whatever the table's axis is
                bound = axis_bound(start, TimeAxis(LOAD_ID, "load_id"))
                rows = ctx.adapter.run(query, [bound], "coverage")
            except Exception as exc:
                failures.append(f"rename handoff query for table `{table}` failed: {exc}")
                continue
        scored = {(new, old): _score(new, old, new_types, old_types,
                                     gone_by_col[old].drift_type, rows, columns)
                  for new, old in candidates}
        for new, old in sorted(assign_pairs({k: v[0] for k, v in scored.items()}).items()):
            confidence, reasons, handoff = scored[(new, old)]
            gone = gone_by_col[old]
            if confidence < min_confidence:
                if confidence >= min_confidence - 0.2:  # weaker: two unrelated changes
                    notes.append(
                        f"table `{table}`: `{old}` → `{new}` looks like a rename with "
                        f"confidence {confidence} (below {min_confidence}): reported as "
                        "separate findings"
                    )
                continue
            old_cov = (gone.coverage or {}).get(old)
            coverage = {}
            if old_cov is not None:
                coverage[old] = old_cov
            if handoff is not None and handoff.new_recent is not None:
                coverage[new] = Coverage(baseline=0.0, recent=handoff.new_recent)
            renames.append(ctx.finding(
                "rename",
                exp_table,
                [old, new],
                column_types={
                    old: (gone.column_types or {}).get(old) or str(old_types.get(old)),
                    new: added.column_types.get(new, ""),
                },
                samples={new: list(added.samples.get(new, []))},
                first_seen=load_id_iso(handoff.handoff_load if handoff else None)
                or (added.column_first_seen or {}).get(new),
                reproduce=added.reproduce,
                coverage=coverage or None,
                renamed_from=old,
                renamed_to=new,
                handoff_load=handoff.handoff_load if handoff else None,
                confidence=confidence,
                reasons=reasons,
                components=[_component(gone), _component(added)],
            ))
    return ctx.result("rename", started, renames, notes, failures)
