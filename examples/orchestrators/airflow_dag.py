"""An Airflow DAG that reconciles every declared dlt source, one mapped task per shard.

Copy this file into your DAGs folder and set `CONTRACT_OPS_PROJECT_DIR` to the dlt project
(the folder that holds `.dlt/`). The sweep is cut into the run's `shards` param (default
`CONTRACT_OPS_SHARDS`, else 4) by dynamic task mapping: task I of N reconciles shard I/N of the
(source, table) pairs (`reconcile --all --shard I/N`), and the N tasks together find what one
sweep finds. The tasks share one state dir (alert dedup, the finding index, the load
profiles): on several workers, a shared path (docs/cli.md#shards). A task fails when the
reconciler could not check its part, and on drift when the run's `fail_on_drift` param is
true (any finding) or a severity (`"error"`, `"warning"`: findings of that severity or
worse); a finding acknowledged with `dlt-contract-ops ack`, not expired, never fails it.
Otherwise it returns the findings (the `--format json` document plus a summary) as its XCom.

The task bodies are plain functions (`declared_source_names`, `shard_specs`,
`reconcile_task`), importable and testable without Airflow; the DAG object is built only when
Airflow is installed.
Needs `pip install 'dlt-contract-ops[airflow]'`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dlt_contract_ops.detectors.registry import selected
from dlt_contract_ops.engine.reconcile import run
from dlt_contract_ops.errors import ContractOpsError
from dlt_contract_ops.model.findings import ReconcileResult, by_severity, results_document
from dlt_contract_ops.model.severity import SEVERITIES, Severity, as_severity
from dlt_contract_ops.settings import declared_sources, project_context

# AirflowFailException fails the task at once, whatever its retries: re-running a check finds
# the same drift, and a missing dataset or an unknown source does not fix itself either.
try:  # Airflow 3
    from airflow.sdk import dag, task
    from airflow.sdk.exceptions import AirflowFailException as _TaskFailure
except ImportError:
    try:  # Airflow 2
        from airflow.decorators import dag, task  # type: ignore[no-redef]
        from airflow.exceptions import AirflowFailException as _TaskFailure  # type: ignore[no-redef]
    except ImportError:  # no Airflow (CI, a notebook): the task functions still run
        dag = task = None  # type: ignore[assignment]
        _TaskFailure = RuntimeError  # type: ignore[assignment,misc]

PROJECT_DIR = os.environ.get("CONTRACT_OPS_PROJECT_DIR", ".")
#: how many tasks share a sweep unless the run's `shards` param says otherwise
SHARDS = int(os.environ.get("CONTRACT_OPS_SHARDS", "4"))


class ContractCheckFailed(_TaskFailure):  # type: ignore[valid-type,misc]
    """A source has drift (and the run asked to fail on it), or could not be checked.

    `document` is what the task would have returned.
    """

    def __init__(self, message: str, document: dict[str, Any]) -> None:
        super().__init__(message)
        self.document = document


def declared_source_names(project_dir: str | os.PathLike[str] = PROJECT_DIR) -> list[str]:
    """Every source with a `[sources.<name>.contract_ops]` table, sorted."""
    with project_context(project_dir):
        return declared_sources()


def shard_specs(count: int = SHARDS) -> list[str]:
    """The shards of a sweep cut into `count` tasks, as `run(shard=...)` takes them.

    >>> shard_specs(3)
    ['1/3', '2/3', '3/3']
    """
    return [f"{i}/{count}" for i in range(1, max(1, int(count)) + 1)]


def reconcile_task(
    project_dir: str | os.PathLike[str] = PROJECT_DIR,
    fail_on_drift: bool | Severity = False,
    *,
    sources: Sequence[str] | None = None,
    include_removal: bool = False,
    alert_sinks: Sequence[str] | None = None,
    shard: str | None = None,
) -> dict[str, Any]:
    """Reconcile `sources` (every declared source when None), only shard `shard` ("2/3") of
    their tables when given; the JSON-safe document.

    Raises ContractCheckFailed on a reconciler error, and on unacknowledged drift with
    `fail_on_drift` (True: any finding; a severity: findings of it or worse).

    >>> reconcile_task("path/to/project", sources=["shop"])["summary"]  # doctest: +SKIP
    {'findings': 2, 'acknowledged': 0, 'by_detector': {'additive': 2},
     'by_severity': {'error': 0, 'warning': 2, 'info': 0},
     'tables': ['order_items', 'plain_tbl'], 'errors': []}
    """
    try:
        results = run(
            sources,
            detectors=selected({"removal"} if include_removal else ()),
            project_dir=project_dir,
            alert_sinks=alert_sinks,
            shard=shard,
        )
    except ContractOpsError as exc:  # the sweep could not start (a bad project, a bad sink)
        results = [
            ReconcileResult(source=", ".join(sources or ["*"]), error=str(exc), error_kind="config")
        ]
    document = results_document(results)
    document["summary"] = _summary(results)
    errors = document["summary"]["errors"]
    if errors:
        raise ContractCheckFailed("reconciler error: " + "; ".join(errors), document)
    threshold: Severity | None = (
        "info" if fail_on_drift is True else as_severity(fail_on_drift) if fail_on_drift else None
    )
    failing = by_severity(
        [f for r in results for f in r.failing_at(threshold)] if threshold else []
    )
    if failing:
        drifted = ", ".join(
            f"`{f.table}` ({f.drift_type}: {', '.join(f.columns)})"
            for f in failing
        )
        raise ContractCheckFailed(f"{len(failing)} drift finding(s): {drifted}", document)
    return document


def _summary(results: Sequence[ReconcileResult]) -> dict[str, Any]:
    by_detector = Counter(f.drift_type for r in results for f in r.findings)
    return {
        "findings": sum(by_detector.values()),
        "acknowledged": sum(1 for r in results for f in r.findings if f.acknowledged),
        "by_detector": dict(by_detector),
        "by_severity": {s: sum(1 for r in results for f in r.findings if f.severity == s)
                        for s in SEVERITIES},
        "tables": sorted({f.table for r in results for f in r.findings}),
        "errors": [f"{r.source} ({r.detector}): {r.error}" for r in results if r.error],
    }


if dag is not None:

    @dag(
        dag_id="dlt_contract_ops_reconcile",
        schedule="@daily",
        start_date=datetime(2026, 1, 1),
        catchup=False,
        params={"fail_on_drift": False, "include_removal": False, "shards": SHARDS},
        tags=["dlt", "contract-ops"],
    )
    def dlt_contract_ops_reconcile() -> None:
        # context arrives as keyword arguments (`params` is the run's params)
        @task
        def list_shards(**context: Any) -> list[str]:
            return shard_specs(int(context["params"]["shards"]))

        @task
        def reconcile(shard: str, **context: Any) -> dict[str, Any]:
            params = context["params"]
            fail = params["fail_on_drift"]  # true, false, or a severity ("error")
            return reconcile_task(
                PROJECT_DIR,
                fail if fail in SEVERITIES else bool(fail),
                include_removal=bool(params["include_removal"]),
                shard=shard,
            )

        reconcile.expand(shard=list_shards())

    DAG = dlt_contract_ops_reconcile()
else:
    DAG = None
