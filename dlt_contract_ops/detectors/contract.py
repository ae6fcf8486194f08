"""Contract verification: the live data against the models' declared semantics.

ONE aggregate query per table counts the rows breaking each declared property (NULL in a
required column, a value outside its code set or range, a text not matching its pattern,
rows beyond the first of a declared key); only a table with violations gets ONE more query
for up to three examples of each. One finding per table with violations
(`drift_type: "contract"`), carrying them in `violations`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dlt_contract_ops.contracts.extract import contract_from_model, field_columns
from dlt_contract_ops.contracts.verify import (
    Check,
    Plan,
    example_value,
    plan_checks,
    read_counts,
    violated_columns,
    violations,
)
from dlt_contract_ops.contracts.verify_queries import (
    aggregate_query,
    examples_query,
    read_examples,
)
from dlt_contract_ops.core.columns import ExpectedTable, LiveTable
from dlt_contract_ops.destinations.jsonable import jsonable
from dlt_contract_ops.detection.detector import DetectorRun
from dlt_contract_ops.detection.source_input import SourceInput
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult

DETECTOR = "contract"


@dataclass(frozen=True)
class _Table:
    expected: ExpectedTable
    live: LiveTable
    table: exp.Table
    plan: Plan


def _plan(ctx: SourceInput, expected: ExpectedTable, live: LiveTable) -> Plan:
    model = ctx.built.models[expected.resource]
    naming = ctx.built.naming
    contract = contract_from_model(ctx.name, expected, model, naming)
    note = ctx.adapter.capabilities.regex_note
    return plan_checks(
        contract,
        live.columns,
        model=model,
        field_columns=field_columns(model, naming),
        regex=not note,
        regex_note=note,
    )


def run_contract(run: DetectorRun) -> ReconcileResult:
    ctx, emitter = run.ctx, run.emitter
    started = time.perf_counter()
    findings: list[DriftFinding] = []
    notes: list[str] = list(ctx.notes)
    failures: list[str] = []

    def fail(expected: ExpectedTable, message: str, exc: BaseException) -> None:
        failures.append(message)
        emitter.error(ctx.error_event(message, exc, expected.resource, DETECTOR))

    plans: list[_Table] = []
    for expected, live in ctx.present_tables():
        if expected.resource not in ctx.built.models or expected.root:
            continue  # a child table: the model's declarations describe its root table
        nested = ctx.nested_tables(expected.table)
        if nested:
            notes.append(
                f"nested table(s) {', '.join(f'`{t}`' for t in nested)} of resource "
                f"`{expected.resource}`: not verified (the model's declarations describe the "
                "root table)"
            )
        try:
            plan = _plan(ctx, expected, live)
        except Exception as exc:  # a declaration the extraction refuses: this table only
            fail(expected, f"contract of resource `{expected.resource}` unreadable: {exc}", exc)
            continue
        notes.extend(plan.notes)
        if plan.checks:
            plans.append(_Table(expected, live, ctx.adapter.table(expected.table), plan))

    # one aggregate per table; independent, so the adapter may run them concurrently
    counted = ctx.adapter.run_all(
        [aggregate_query(t.table, t.plan.checks, list(t.live.columns)) for t in plans],
        "coverage",
    )
    violated: list[tuple[_Table, dict[Check, int]]] = []
    for t, rows in zip(plans, counted, strict=True):
        if isinstance(rows, Exception):
            fail(t.expected, f"contract query for table `{t.expected.table}` failed: {rows}",
                 rows)
            continue
        counts = read_counts(t.plan.checks, rows[0] if rows else None)
        if any(counts.values()):
            violated.append((t, counts))

    # one examples query per table with violations (a NULL needs a row id to point at)
    wanted = [
        [c for c, n in counts.items() if n and (c.rule != "not_null" or t.plan.row_id)]
        for t, counts in violated
    ]
    batch = [
        examples_query(t.table, checks, t.plan.row_id, list(t.live.columns))
        for (t, _), checks in zip(violated, wanted, strict=True)
        if checks
    ]
    sampled = iter(ctx.adapter.run_all([(q, params) for q, params, _ in batch], "sample"))
    outputs = iter([out for _, _, out in batch])
    for (t, counts), checks in zip(violated, wanted, strict=True):
        examples: dict[Check, list[Any]] = {}
        sample_error = None
        rows, out = (next(sampled), next(outputs)) if checks else ([], [])
        if isinstance(rows, Exception):
            sample_error = f"examples query for table `{t.expected.table}` failed: {rows}"
            fail(t.expected, sample_error, rows)
        elif checks:
            read = read_examples(rows, checks, out)
            examples = {
                c: [jsonable(example_value(c, values, t.plan.row_id)) for values in read[c]]
                for c in checks
            }
        found = violations(counts, examples)
        columns = violated_columns(found)
        bad = [v.check for v in found]
        query, params = aggregate_query(t.table, bad, list(t.live.columns))
        finding = ctx.finding(
            DETECTOR,
            t.expected,
            columns,
            column_types={c: t.live.columns[c].data_type for c in columns},
            samples={},
            reproduce=ctx.adapter.reproduce(query, params),
            sample_error=sample_error,
            violations=[v.document() for v in found],
        )
        findings.append(finding)
        emitter.drift(finding)
    return ctx.result(DETECTOR, started, findings, notes, failures)
