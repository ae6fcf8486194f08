"""Dagster asset checks: one per declared dlt source, each running the drift reconciler.

Every `[sources.<name>.contract_ops]` table of the project becomes an asset check named
`contract_drift` on the asset `dlt/<name>` (pass `asset_key_for` to point it at your own
assets, e.g. the ones `dagster-dlt` builds). A check fails (severity ERROR) when the reconciler
could not check the source, and on drift when `fail_on_drift=True` (any finding) or
`fail_on_drift="error"` (`"warning"`: findings of that severity or worse); a failed check's
severity is its worst failing finding's (`error`: ERROR, else WARN). A finding acknowledged
with `dlt-contract-ops ack` (and not expired) is reported but never fails it. Its metadata
carries the findings: counts per detector and per severity, the acknowledged count, the
drifted tables and columns, and a markdown report.

Run it on its own (the tables become external assets, the checks run from the UI)::

    export CONTRACT_OPS_PROJECT_DIR=path/to/dlt/project  # the folder that holds `.dlt/`
    dagster dev -f examples/orchestrators/dagster_checks.py

or in code::

    defs = build_definitions("path/to/dlt/project", fail_on_drift="error")
    defs.resolve_implicit_global_asset_job_def().execute_in_process()

A sweep too big for one run is cut into shards instead (`build_shard_job`): a job with one
partition per shard ("1/4" ... "4/4"); each partition's run reconciles that shard of every
source's tables (`reconcile --all --shard I/N`), and a backfill of all partitions is the
whole sweep, on as many workers as your run launcher gives it. The runs share one state dir
(a shared path across machines: docs/cli.md#shards).

Needs `pip install 'dlt-contract-ops[dagster]'`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import dagster as dg

from dlt_contract_ops import ReconcileResult
from dlt_contract_ops.detectors.registry import selected
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.errors import ContractOpsError
from dlt_contract_ops.model.findings import by_severity
from dlt_contract_ops.model.severity import SEVERITIES, Severity, as_severity, level
from dlt_contract_ops.output.wording import acknowledgement
from dlt_contract_ops.settings import declared_sources, project_context

#: the name of every check this module builds (one per source, on different assets)
CHECK_NAME = "contract_drift"


def default_asset_key(source: str) -> dg.AssetKey:
    """`dlt/<source>`: the asset a source's check is attached to unless you say otherwise."""
    return dg.AssetKey(["dlt", source])


def check_result(
    results: Sequence[ReconcileResult], *, fail_on_drift: bool | Severity = False
) -> dg.AssetCheckResult:
    """One source's reconcile results as a check result: failed on an error (and on drift
    with `fail_on_drift`: True for any finding, a severity for those of it or worse), with
    the findings as metadata."""
    errors = [f"{r.detector}: {r.error}" for r in results if r.error]
    findings = by_severity([f for r in results for f in r.findings])
    failing = [f for r in results for f in r.failing_findings]
    threshold: Severity | None = "info" if fail_on_drift is True else (fail_on_drift or None)
    failed = by_severity([f for r in results for f in r.failing_at(threshold)]
                         if threshold is not None else [])
    by_detector = Counter(r.detector for r in results for _ in r.findings)
    by_level = Counter(f.severity for f in findings)
    metadata: dict[str, Any] = {
        "findings": dg.MetadataValue.int(len(findings)),
        "acknowledged": dg.MetadataValue.int(len(findings) - len(failing)),
        "findings_by_detector": dg.MetadataValue.json(
            {r.detector: by_detector[r.detector] for r in results}
        ),
        "findings_by_severity": dg.MetadataValue.json({s: by_level[s] for s in SEVERITIES}),
        "tables": dg.MetadataValue.json(sorted({f.table for f in findings})),
        "columns": dg.MetadataValue.json(
            [{"detector": f.drift_type, "severity": f.severity, "table": f.table,
              "columns": f.columns} for f in findings]
        ),
    }
    first = results[0] if results else None
    if first is not None and first.dataset:
        metadata["dataset"] = dg.MetadataValue.text(f"{first.destination}:{first.dataset}")
    if findings:
        metadata["report"] = dg.MetadataValue.md(_markdown(results))
    notes = [n for r in results for n in r.notes]
    if notes:
        metadata["notes"] = dg.MetadataValue.json(notes)
    if errors:
        metadata["error"] = dg.MetadataValue.text("\n".join(errors))
        return dg.AssetCheckResult(
            passed=False,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata=metadata,
            description=f"reconciler error: {errors[0]}",
        )
    summary = ", ".join(f"{d}: {n}" for d, n in by_detector.items())
    description = f"{len(findings)} drift finding(s) ({summary})" if findings else "no drift"
    if len(failing) < len(findings):
        description += f", {len(findings) - len(failing)} acknowledged"
    worst = failed[0].severity if failed else "error"
    return dg.AssetCheckResult(
        passed=not failed,
        severity=dg.AssetCheckSeverity(level("dagster", worst)),
        metadata=metadata,
        description=description,
    )


def _markdown(results: Sequence[ReconcileResult]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    rows = [
        f"| {f.severity} | {f.drift_type} | {cell(f.table)} | {cell(', '.join(f.columns))} "
        f"| {cell(acknowledgement(f))} |"
        for f in by_severity([f for r in results for f in r.findings])
    ]
    return "\n".join(
        ["| severity | detector | table | columns | acknowledged |", "|---|---|---|---|---|",
         *rows]
    )


def _sweep(
    sources: Sequence[str] | None, project_dir: str | os.PathLike[str], *,
    include_removal: bool, alert_sinks: Sequence[str] | None, shard: str | None = None,
) -> list[ReconcileResult]:
    try:
        return run(
            sources,
            detectors=selected({"removal"} if include_removal else ()),
            project_dir=project_dir,
            alert_sinks=alert_sinks,
            shard=shard,
        )
    except ContractOpsError as exc:  # the sweep could not start (a bad project, a bad sink)
        where = ", ".join(sources or [f"shard {shard}" if shard else "*"])
        return [ReconcileResult(source=where, error=str(exc), error_kind="config")]


def evaluate(
    source: str,
    project_dir: str | os.PathLike[str],
    *,
    include_removal: bool = False,
    fail_on_drift: bool | Severity = False,
    alert_sinks: Sequence[str] | None = None,
) -> dg.AssetCheckResult:
    """Reconcile one source and judge it. The project's alert sinks still get the findings."""
    results = _sweep([source], project_dir, include_removal=include_removal,
                     alert_sinks=alert_sinks)
    return check_result(results, fail_on_drift=fail_on_drift)


def build_shard_job(
    project_dir: str | os.PathLike[str],
    *,
    shards: int = 4,
    include_removal: bool = False,
    fail_on_drift: bool | Severity = False,
    alert_sinks: Sequence[str] | None = None,
    name: str = "contract_drift_sweep",
) -> dg.JobDefinition:
    """A job with one partition per shard ("1/4" ... "4/4"): the run of partition I/N
    reconciles shard I/N of every declared source's tables. It fails (`dg.Failure`, the
    check's metadata attached) as a check would; else its output carries that metadata.

    >>> build_shard_job("path/to/dlt/project", shards=4).execute_in_process(
    ...     partition_key="2/4")  # doctest: +SKIP
    """
    project_dir = os.path.abspath(os.fspath(project_dir))
    keys = [f"{i}/{shards}" for i in range(1, shards + 1)]

    # `context` unannotated: Dagster checks the annotation's object when the op is defined,
    # and this module's annotations are strings (`from __future__ import annotations`)
    @dg.op(name=f"{name}_shard")
    def reconcile_shard(context) -> dg.Output[dict[str, Any]]:  # type: ignore[no-untyped-def]
        shard = context.partition_key
        results = _sweep(None, project_dir, include_removal=include_removal,
                         alert_sinks=alert_sinks, shard=shard)
        judged = check_result(results, fail_on_drift=fail_on_drift)
        if not judged.passed:
            raise dg.Failure(description=f"shard {shard}: {judged.description}",
                             metadata=judged.metadata)
        found = sorted(f.id for r in results for f in r.findings)
        return dg.Output({"shard": shard, "findings": found, "description": judged.description},
                         metadata=judged.metadata)

    @dg.job(name=name, partitions_def=dg.StaticPartitionsDefinition(keys))
    def sweep_job() -> None:
        reconcile_shard()

    return sweep_job


def build_contract_checks(
    project_dir: str | os.PathLike[str],
    *,
    sources: Sequence[str] | None = None,
    asset_key_for: Callable[[str], dg.AssetKey] = default_asset_key,
    include_removal: bool = False,
    fail_on_drift: bool | Severity = False,
    blocking: bool = False,
    alert_sinks: Sequence[str] | None = None,
) -> list[dg.AssetChecksDefinition]:
    """One `contract_drift` check per source: `sources`, or every declared source.

    `blocking=True` keeps downstream assets from materializing after a failed check.
    """
    project_dir = os.path.abspath(os.fspath(project_dir))
    if sources is None:
        with project_context(project_dir):
            sources = declared_sources()

    def make(source: str) -> dg.AssetChecksDefinition:
        @dg.asset_check(
            asset=asset_key_for(source),
            name=CHECK_NAME,
            description=f"Schema drift of dlt source `{source}` against its models.",
            blocking=blocking,
        )
        def _check() -> dg.AssetCheckResult:
            return evaluate(
                source,
                project_dir,
                include_removal=include_removal,
                fail_on_drift=fail_on_drift,
                alert_sinks=alert_sinks,
            )

        return _check

    return [make(source) for source in sources]


def build_definitions(project_dir: str | os.PathLike[str], **options: Any) -> dg.Definitions:
    """The checks plus one external asset per source (dlt, not Dagster, loads the tables).

    When your Dagster project already defines the assets, add only `build_contract_checks`.
    """
    checks = build_contract_checks(project_dir, **options)
    keys = {key for check in checks for key in check.check_keys}
    specs = [dg.AssetSpec(k.asset_key, group_name="dlt") for k in sorted(keys, key=str)]
    return dg.Definitions(assets=specs, asset_checks=checks)


def _fail_on_drift(value: str) -> bool | Severity:
    """`CONTRACT_OPS_FAIL_ON_DRIFT`: "1" fails on any finding, a severity on those of it or
    worse, anything else never."""
    return True if value == "1" else (as_severity(value) if value in SEVERITIES else False)


@dg.definitions
def defs() -> dg.Definitions:
    """For `dagster dev -f`: read on load, so importing this module reads no project.
    `CONTRACT_OPS_SHARDS=N` adds the sharded sweep job (`build_shard_job`)."""
    project_dir = os.environ.get("CONTRACT_OPS_PROJECT_DIR", ".")
    options: dict[str, Any] = {
        "include_removal": os.environ.get("CONTRACT_OPS_INCLUDE_REMOVAL") == "1",
        "fail_on_drift": _fail_on_drift(os.environ.get("CONTRACT_OPS_FAIL_ON_DRIFT", "")),
    }
    checks = build_definitions(project_dir, **options)
    shards = os.environ.get("CONTRACT_OPS_SHARDS")
    if not shards:
        return checks
    job = build_shard_job(project_dir, shards=int(shards), **options)
    return dg.Definitions.merge(checks, dg.Definitions(jobs=[job]))
