"""`gated_run`: stage a batch, compare what the source sent with the contract, and hand only
an accepted batch to the user's pipeline.

The batch is extracted into a staging pipeline of its own (`ingest/staging.py`), never into the
user's: a rejected or interrupted batch cannot reach the trusted tables because no package of
it ever exists in the user's pipeline. The shape compared is the one the source *sent*: each
resource gets a tap in front of its Pydantic validator, and the raw items go through dlt's own
normalizer with no hints and no model (`ingest/observe.py`). The contract is the resource's
`columns=` model, or the latest contract snapshot (`dlt-contract-ops contract snapshot`) for a
resource without one. An accepted batch is normalized once, in staging, and its package handed
over and loaded; a rejected one is copied to the quarantine with `diff.json`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dlt_contract_ops.dlt_private as dlt_private
from dlt_contract_ops.core.ingest import ColumnShape, GatePolicy, Shape, compare
from dlt_contract_ops.errors import NOT_KEPT, ContractOpsError, GateRejected, QuarantineError
from dlt_contract_ops.ingest.observe import Tap, observe
from dlt_contract_ops.ingest.quarantine import default_quarantine, quarantine
from dlt_contract_ops.ingest.resources import (
    _admit_additions,
    _defer_refusals,
    _resources,
    _restore,
    _table_of,
)
from dlt_contract_ops.ingest.staging import (
    DEFAULT_GATE_LOCK_TIMEOUT,
    accepted_ids,
    gate_lock,
    hand_over,
    record_accepted,
    staging_pipeline,
)
from dlt_contract_ops.model.gate import Difference, GateReport, reason_of

log = logging.getLogger("dlt_contract_ops")

#: keyword arguments of `pipeline.run` that belong to extract, and those that pick the target
_EXTRACT_KWARGS = frozenset({
    "table_name", "write_disposition", "columns", "primary_key", "schema",
    "loader_file_format", "table_format", "schema_contract", "refresh",
})
_TARGET_KWARGS = frozenset({"destination", "staging", "dataset_name", "credentials"})



def _expected(
    resources: list[Any], naming: Any, source_name: str, contracts_dir: Path | None,
    observed: Shape,
) -> tuple[Shape, list[str], set[str]]:
    """The contract per table: the resource's model, else its latest snapshot. Returns the
    shape, notes, and the resources that have no contract (not gated).

    A model's child tables (`items: list[Item]` with `skip_nested_types`: `orders__items`)
    are the reconciler's (`core.naming.nested_tables`); one the batch sent no rows to (every
    list empty) is not compared: its required columns are not missing, there are no rows."""
    from dlt_contract_ops.core.naming import expected_table, nested_tables
    from dlt_contract_ops.sources.bindings import resource_model

    shape: dict[str, dict[str, ColumnShape]] = {}
    notes: list[str] = []
    ungated: set[str] = set()
    bound = _bound_models(source_name)
    for resource in resources:
        table = naming.normalize_table_identifier(_table_of(resource) or resource.name)
        model = resource_model(resource, bound)
        if model is not None:
            exp = expected_table(resource.name, table, model, naming)
            children = [c for c in nested_tables(exp, model, naming) if c.table in observed]
            for t in (exp, *children):
                cols = shape.setdefault(t.table, {})
                for c in t.columns:
                    cols.setdefault(c.name, ColumnShape(c.data_type, c.nullable))
            continue
        contract = _snapshot(source_name, resource.name, contracts_dir)
        if contract is None:
            ungated.add(resource.name)
            notes.append(
                f"resource `{resource.name}` has no Pydantic model and no contract snapshot: "
                "not gated. Pass `columns=Model` or run `dlt-contract-ops contract snapshot`."
            )
            continue
        cols = shape.setdefault(table, {})
        for column in contract.columns:
            cols.setdefault(column.name, ColumnShape(column.type, column.nullable))
        notes.append(f"resource `{resource.name}`: contract from snapshot `{contract.model}`")
    return shape, notes, ungated


def _bound_models(source_name: str) -> dict[str, type[Any]]:
    """The models `[sources.<source_name>.contract_ops.models]` binds, imported from the dlt
    project the gate runs in (none when the table is not there)."""
    import dlt

    from dlt_contract_ops.sources.bindings import configured_bindings, import_bound_models

    bound = configured_bindings(source_name)
    return import_bound_models(source_name, bound, dlt.current.run_context().run_dir)


def _snapshot(source: str, resource: str, contracts_dir: Path | None) -> Any:
    from dlt_contract_ops.contracts.store import read_release, released_versions, source_dir

    root = contracts_dir or Path("contracts")
    if not root.is_dir():
        return None
    versions = released_versions(root, source)
    if not versions:
        return None
    release = read_release(source_dir(root, source) / str(versions[-1]))
    return release.resource(resource)


def check_batch(
    pipeline: Any,
    data: Any,
    *,
    policy: GatePolicy | None = None,
    load: bool = True,
    quarantine_dir: Path | None = None,
    contracts_dir: Path | None = None,
    source_name: str | None = None,
    lock_timeout: float = DEFAULT_GATE_LOCK_TIMEOUT,
    **run_kwargs: Any,
) -> GateReport:
    """Stage `data` beside `pipeline`, compare, then hand it over and load it (admissible,
    `load=True`) or keep it out (rejected, or `load=False`). Never raises for a rejection:
    see `gated_run`."""
    unknown = sorted(set(run_kwargs) - _EXTRACT_KWARGS - _TARGET_KWARGS)
    if unknown:
        raise ContractOpsError(
            f"gated_run does not take {', '.join(f'`{k}`' for k in unknown)}; it takes "
            f"`pipeline.run` keywords: {', '.join(sorted(_EXTRACT_KWARGS | _TARGET_KWARGS))}."
        )
    policy = policy or GatePolicy()
    target = {k: v for k, v in run_kwargs.items() if k in _TARGET_KWARGS}
    if target:
        dlt_private.set_target(pipeline, target.get("destination"), target.get("staging"),
                               target.get("credentials"), target.get("dataset_name"))
    resources = _resources(data)
    source_name = source_name or _source_name(data, resources)
    with gate_lock(pipeline, lock_timeout) as root:
        refuse_unchecked_packages(pipeline, root)
        with staging_pipeline(pipeline, root) as staged:
            staged_batch = _stage(staged, data, resources, run_kwargs)
            verdict = _decide(staged, staged_batch, policy, source_name, contracts_dir)
            if verdict.admissible and load:
                staged.normalize()
                # remembered before the hand-over: a crash after it leaves a package the
                # next gate knows it checked (and finishes loading)
                record_accepted(root, list(staged.list_normalized_load_packages()),
                                set(pipeline.list_normalized_load_packages()))
                hand_over(pipeline, staged)
                info = pipeline.load()
                return GateReport(
                    pipeline=pipeline.pipeline_name, action="loaded",
                    differences=verdict.differences, reason=verdict.reason,
                    schema_version=pipeline.default_schema.version,
                    load_info=info.asdict(), notes=verdict.notes,
                )
            folder: Path | None = None
            if not verdict.admissible:
                folder = _keep(staged, staged_batch, verdict, quarantine_dir)
    version = pipeline.default_schema.version if pipeline.default_schema_name else None
    return GateReport(
        pipeline=pipeline.pipeline_name,
        action="rejected" if not verdict.admissible else "loaded",
        differences=verdict.differences,
        reason=(verdict.reason if not verdict.admissible
                else f"{verdict.reason} (checked only, not loaded)"),
        schema_version=version,
        quarantine=str(folder) if folder else None,
        notes=verdict.notes,
    )


@dataclass
class _Staged:
    """What extracting the batch into staging left: the taps' raw items and what went wrong."""

    resources: list[Any]
    taps: list[Tap]
    refusals: list[BaseException]
    extract_error: BaseException | None


@dataclass
class _Verdict:
    differences: list[Difference]
    reason: str
    notes: list[str]
    admissible: bool


def _stage(staged: Any, data: Any, resources: list[Any], run_kwargs: dict[str, Any]) -> _Staged:
    """Extract the batch into the staging pipeline, each resource tapped before its model."""
    contracts = [_admit_additions(r) for r in resources]
    taps = [Tap(r.name, _table_of(r) or r.name, r.max_table_nesting) for r in resources]
    # filled while extracting
    refused = [_defer_refusals(r, t) for r, t in zip(resources, taps, strict=True)]
    extract_error: BaseException | None = None
    try:
        staged.extract(data, **{k: v for k, v in run_kwargs.items() if k in _EXTRACT_KWARGS})
    except Exception as exc:  # e.g. an incremental cursor missing: still compare what was sent
        if _interrupted(exc):
            # Ctrl-C is the user stopping the gate, not the batch failing: nothing is
            # decided, quarantined or alerted (dlt wraps the KeyboardInterrupt)
            raise KeyboardInterrupt from exc
        extract_error = exc
    finally:
        for resource, contract, tap in zip(resources, contracts, taps, strict=True):
            _restore(resource, contract, tap)
    refusals = [exc for found in refused for exc in found]
    return _Staged(resources, taps, refusals, extract_error)


def _source_name(data: Any, resources: list[Any]) -> str:
    """The `@dlt.source` name; a bare resource passed alone is its own source."""
    return str(getattr(data, "name", None) or resources[0].source_name or resources[0].name)


def _interrupted(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _decide(
    staged: Any, batch: _Staged, policy: GatePolicy, source_name: str,
    contracts_dir: Path | None,
) -> _Verdict:
    from dlt.common.schema import Schema

    schema = staged.default_schema if staged.default_schema_name else Schema(source_name)
    normalizers = schema.to_dict().get("normalizers")
    try:
        observed, produced = observe(staged, batch.taps, schema.name, normalizers)
    except Exception as exc:  # a value dlt cannot normalize (a set, a tuple key): rejected
        notes = [] if batch.extract_error is None else [
            f"extract failed: {_root_message(batch.extract_error)}"]
        why = f"{type(_root(exc)).__name__}: {_root_message(exc)}"
        return _Verdict([], f"dlt could not read the batch ({why})", notes, False)
    expected, notes, ungated = _expected(
        batch.resources, schema.naming, source_name, contracts_dir, observed
    )
    for name in ungated:
        for table in produced.get(name, ()):
            observed.pop(table, None)  # type: ignore[attr-defined]  # built as a dict
    failed = batch.extract_error is not None or bool(batch.refusals)
    differences = compare(observed, expected, policy, coerced=not failed)
    reason = reason_of(differences)
    if batch.refusals:
        reason += "; the resource's model refused the batch"
        notes.append(
            f"the model refused {len(batch.refusals)} item(s), the first: "
            f"{_root_message(batch.refusals[0])}"
        )
    if batch.extract_error is not None:
        reason += "; the extract failed" if not batch.refusals else ""
        notes.append(f"extract failed: {_root_message(batch.extract_error)}")
    admissible = all(d.approved for d in differences) and not failed
    return _Verdict(differences, reason, notes, admissible)


def _keep(
    staged: Any, batch: _Staged, verdict: _Verdict, quarantine_dir: Path | None
) -> Path | None:
    """Quarantine a rejected batch. A quarantine that cannot be written does not admit the
    batch: it stays rejected, and the report (so the alert and `GateRejected`) says what was
    not kept and why."""
    doc = {
        "pipeline": staged.pipeline_name,
        "reason": verdict.reason,
        "differences": [d.model_dump() for d in verdict.differences],
        "notes": verdict.notes,
    }
    raw = {t.resource: t.items for t in batch.taps}
    folder = quarantine_dir or default_quarantine()
    try:
        return quarantine(staged, folder, doc, raw)
    except Exception as exc:  # whatever failed, the batch stays rejected and the alert goes
        failed = exc if isinstance(exc, QuarantineError) else QuarantineError(
            folder.absolute(), "the quarantine folder", exc)
        fix = ("fix that (the folder, its space, its permissions) and re-run the source to "
               "keep it" if isinstance(failed.cause, OSError) else "re-run the source to see it")
        verdict.notes.append(f"{NOT_KEPT}: {failed}; {fix}")
        return None


def refuse_unchecked_packages(pipeline: Any, root: Path) -> None:
    """Pending packages of the user's pipeline: a batch this gate accepted whose load was cut
    short is loaded now (it was checked); any other package was never checked, and the gate
    will not load it along with this batch."""
    if not pipeline.has_pending_data:
        return
    pending = set(pipeline.list_extracted_load_packages())
    pending |= set(pipeline.list_normalized_load_packages())
    unchecked = sorted(pending - accepted_ids(root))
    if unchecked:
        raise ContractOpsError(
            f"Pipeline `{pipeline.pipeline_name}` has pending load package(s) "
            f"{', '.join(f'`{u}`' for u in unchecked)} that no gate checked (from a plain "
            "`pipeline.run`/`extract`). The gate will not load them with this batch. Inspect "
            f"them (`dlt pipeline {pipeline.pipeline_name} info`), then drop them "
            "(`pipeline.drop_pending_packages()`) or load them if you trust them, and run "
            "the gate again."
        )
    pipeline.load()  # batches this gate accepted before a crash cut their load short


def _root(exc: BaseException) -> BaseException:
    """The innermost cause (dlt wraps a validation error thrice)."""
    while exc.__cause__ is not None and exc.__cause__ is not exc:
        exc = exc.__cause__
    return exc


def _root_message(exc: BaseException) -> str:
    """The innermost cause's message on one line."""
    return " ".join(str(_root(exc)).split())


def gated_run(
    pipeline: Any,
    data: Any,
    *,
    raise_on_reject: bool = True,
    policy: GatePolicy | None = None,
    quarantine_dir: str | Path | None = None,
    contracts_dir: str | Path | None = None,
    alert_sinks: Iterable[str] | None = None,
    dry_run: bool = False,
    lock_timeout: float = DEFAULT_GATE_LOCK_TIMEOUT,
    **run_kwargs: Any,
) -> GateReport:
    """Load `data` with `pipeline` only if the batch keeps its contract.

    Extracts and normalizes locally, compares the shape the source sent with the resources'
    models (or contract snapshots), and loads only an admissible batch. A rejected batch
    leaves nothing behind: no table, column, row, `_dlt_loads` entry or stored-schema change
    in the destination, no pending package, no advanced incremental cursor; it is kept in a
    local quarantine folder and reported to the alert sinks (`drift_type: "gate"`).
    `run_kwargs` are `pipeline.run`'s (`write_disposition`, `dataset_name`, ...). The policy
    comes from `[contract_ops.gate]` and `[sources.<name>.contract_ops.gate]` unless given.

    >>> report = gated_run(pipeline, orders(), write_disposition="merge")  # doctest: +SKIP
    >>> report.action, report.schema_version  # doctest: +SKIP
    ('loaded', 2)
    """
    from dlt_contract_ops.ingest.alert import alert_rejection, gate_emitter
    from dlt_contract_ops.settings.gate import gate_settings

    source_name = _source_name(data, _resources(data))
    settings = gate_settings(source_name)
    emitter = gate_emitter(alert_sinks, dry_run=dry_run)  # a broken sink: before any work
    try:
        report = check_batch(
            pipeline,
            data,
            policy=policy or settings.policy,
            quarantine_dir=Path(quarantine_dir) if quarantine_dir else settings.quarantine_dir,
            contracts_dir=Path(contracts_dir) if contracts_dir else settings.contracts_dir,
            source_name=source_name,
            lock_timeout=lock_timeout,
            **run_kwargs,
        )
    except BaseException:
        emitter.flush()
        raise
    if report.action != "rejected":
        emitter.flush()
    else:
        delivery = alert_rejection(report, source_name, emitter=emitter)
        if delivery.undelivered:  # a lost page is never silent: the caller sees it too
            report = report.model_copy(update={
                "notes": [*report.notes, delivery.problem(delivery.undelivered)]})
        if raise_on_reject:
            raise GateRejected(report)
    return report
