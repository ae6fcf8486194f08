"""Declared-side drift: `missing` columns and `type` mismatches. No data is read."""

from __future__ import annotations

import time
from typing import cast

from dlt_contract_ops.core.columns import LiveTable
from dlt_contract_ops.core.declared import detect_missing, detect_type
from dlt_contract_ops.destinations.protocol import FileAdapter
from dlt_contract_ops.detection.detector import DetectorRun
from dlt_contract_ops.detectors.queries import select_columns
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult


def run_missing(run: DetectorRun) -> ReconcileResult:
    ctx, emitter = run.ctx, run.emitter
    started = time.perf_counter()
    findings: list[DriftFinding] = []
    notes: list[str] = []
    failures: list[str] = []
    # an adapter over files (`FilesystemAdapter.table_folder`): a loaded table whose folder
    # is gone lost its data (a bucket has no DROP TABLE), an error besides the finding
    folder_of = (cast(FileAdapter, ctx.adapter).table_folder
                 if ctx.adapter.capabilities.over_files else None)
    # a table the pipeline loaded and that is gone now misses every declared column
    gone = [(e, LiveTable(e.table, {})) for e in ctx.built.tables if e.table in ctx.dropped]
    for expected, live in [*ctx.present_tables(), *gone]:
        drift = detect_missing(expected, live)
        if drift is None:
            continue
        if expected.table in ctx.read_errors:
            # read without a file it could not read (the run's error names it): a column
            # only that file holds cannot be told from one never loaded
            notes.append(
                f"table `{expected.table}`: declared column(s) "
                f"{', '.join(f'`{c}`' for c in drift.columns)} not found in the files that "
                "could be read: not reported as missing while a file of the table cannot be "
                "read"
            )
            continue
        if expected.table in ctx.dropped:
            notes.append(
                f"table `{expected.table}` of resource `{expected.resource}` no longer exists "
                f"in dataset `{ctx.adapter.dataset}`: pipeline `{ctx.target.pipeline_name}` "
                "loaded it (dlt's stored schema, local or the dataset's `_dlt_version`), or "
                "with no such record, its sibling tables are there"
            )
            folder = folder_of(expected.table) if folder_of is not None else None
            if folder is not None:
                failures.append(
                    f"table `{expected.table}`: its folder `{folder}` is "
                    f"gone, yet pipeline `{ctx.target.pipeline_name}` loaded it, so its data is "
                    "lost or moved. Restore the folder (a backup, bucket versioning), or reload "
                    f"it: `dlt pipeline {ctx.target.pipeline_name} drop {expected.resource}`, "
                    "then run the pipeline"
                )
        finding = ctx.finding(
            "missing",
            expected,
            drift.columns,
            expected_types=dict(drift.expected_types),
            # fails with "column not found" for as long as the drift lasts
            reproduce=ctx.adapter.reproduce(
                select_columns(ctx.adapter.table(expected.table), drift.columns, 1), []
            ),
        )
        findings.append(finding)
        emitter.drift(finding)
    return ctx.result("missing", started, findings, notes, failures)


def run_type(run: DetectorRun) -> ReconcileResult:
    ctx, emitter = run.ctx, run.emitter
    started = time.perf_counter()
    findings: list[DriftFinding] = []
    read = ctx.read_type  # the live engine's dialect (sqlalchemy)
    for expected, live in ctx.present_tables():
        drift = detect_type(expected, live, read)
        if drift is None:
            continue
        finding = ctx.finding(
            "type",
            expected,
            drift.columns,
            column_types=dict(drift.live_types),
            expected_types=dict(drift.expected_types),
            # what each live type cannot hold: `amount_cents: live NUMERIC(5,2) cannot ...`
            reasons=[drift.reasons[c] for c in drift.columns],
            reproduce=ctx.adapter.reproduce(
                select_columns(ctx.adapter.table(expected.table), drift.columns, 5), []
            ),
        )
        findings.append(finding)
        emitter.drift(finding)
    return ctx.result("type", started, findings, [])
