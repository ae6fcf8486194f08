"""`gated_run`: extract and normalize a batch locally, compare what the source sent with the
contract, and load only an admissible batch.

The shape compared is the one the source *sent*: each resource gets a tap in front of its
Pydantic validator, and the raw items go through a scratch dlt pipeline (its own temporary
folder, no hints, no model) whose normalizer infers names, types and variant columns exactly
as dlt would. The contract is the resource's `columns=` model, or the latest contract
snapshot (`dlt-contract-ops contract snapshot`) for a resource without one.

A rejected batch never reaches the destination: its extracted package is copied to a
quarantine folder with `diff.json`, then dlt's own `abort_packages()` deletes it and restores
the pipeline's local state and schemas (incremental cursors included) to where they were, so
nothing is left pending and the next run starts clean.
"""

from __future__ import annotations

import functools
import json
import logging
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dlt_contract_ops.errors import ContractOpsError, GateRejected
from dlt_contract_ops.gate.compare import ColumnShape, GatePolicy, Shape, compare
from dlt_contract_ops.gate.report import GateReport, reason_of

log = logging.getLogger("dlt_contract_ops")

#: columns dlt adds to every row; never part of a contract
_DLT_COLUMNS = ("_dlt_id", "_dlt_load_id", "_dlt_parent_id", "_dlt_list_idx", "_dlt_root_id")
#: keyword arguments of `pipeline.run` that belong to extract, and those that pick the target
_EXTRACT_KWARGS = frozenset({
    "table_name", "write_disposition", "columns", "primary_key", "schema",
    "loader_file_format", "table_format", "schema_contract", "refresh",
})
_TARGET_KWARGS = frozenset({"destination", "staging", "dataset_name", "credentials"})


class _Tap:
    """A pipe step that keeps a copy of every item the resource yields, before its
    validator coerces or drops anything."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def __call__(self, item: Any, meta: Any = None) -> Any:
        if isinstance(item, list):
            self.items.extend(dict(i) if isinstance(i, Mapping) else i for i in item)
        else:
            self.items.append(dict(item) if isinstance(item, Mapping) else item)
        return item


def _resources(data: Any) -> list[Any]:
    from dlt.extract import DltResource, DltSource

    if isinstance(data, DltSource):
        return list(data.selected_resources.values())
    if isinstance(data, DltResource):
        return [data]
    raise ContractOpsError(
        f"gated_run takes a dlt source or resource, got {type(data).__name__}: wrap the data "
        'in `dlt.resource(data, name="orders", columns=Model)` so the gate knows its contract.'
    )


def _tap(resource: Any) -> _Tap:
    from dlt.extract.items_transform import ValidateItem

    tap = _Tap()
    at = resource._pipe.find(ValidateItem)  # the tap goes right before the validator
    resource.add_step(tap, insert_at=at if at >= 0 else None)
    return tap


def _admit_additions(resource: Any) -> Any:
    """Let the resource's model keep fields it does not declare, so that an addition the gate
    approves lands in the destination instead of being reported loaded and silently dropped.

    A model that does not set `extra` gets dlt's default column mode `discard_value` (pydantic's
    `extra="ignore"`). Under the gate the policy decides additions: an unapproved one rejects
    the whole batch before anything loads. A model that sets `extra`, or an explicit
    `schema_contract` that is not dlt's default, is the user's choice and is kept.
    Returns the contract it replaced (for `_restore`), or None.
    """
    from dlt.extract.validation import PydanticValidator

    validator = resource.validator
    if not isinstance(validator, PydanticValidator):
        return None
    if validator.original_model.model_config.get("extra") is not None:
        return None
    contract = resource._hints.get("schema_contract")
    if contract != {"tables": "evolve", "columns": "discard_value", "data_type": "freeze"}:
        return None  # set by the user (dlt stores the expanded default when none is given)
    resource.apply_hints(schema_contract={**contract, "columns": "evolve"})
    return contract


def _restore(resource: Any, contract: Any) -> None:
    """Give the caller's resource back its own contract and validator: one that refuses
    nothing must not outlive the gate (a plain `pipeline.run` of it later would load rows
    the model refused)."""
    if contract is not None:
        resource.apply_hints(schema_contract=contract)  # dlt rebuilds the validator
        return
    deferring = resource.validator
    inner = getattr(deferring, "inner", None)
    if inner is not None:
        resource.validator = inner
        if resource._hints and resource._hints.get("validator") is deferring:
            resource._hints["validator"] = inner


def _defer_refusals(resource: Any) -> list[BaseException]:
    """Make the resource's validator record and drop an item it refuses instead of ending the
    extract, so the tap in front of it sees the whole batch: the shape compared and the rows
    quarantined are all of it, not the rows before the first bad one. A refusal still rejects
    the batch (the list returned collects them)."""
    refusals: list[BaseException] = []
    inner = resource.validator
    if inner is not None:
        deferring = _deferring_validator()(inner, refusals)
        resource.validator = deferring
        if resource._hints and resource._hints.get("validator") is not None:
            # dlt re-sets the pipe's validator from the hints when it extracts
            resource._hints["validator"] = deferring
    return refusals


@functools.cache
def _deferring_validator() -> type[Any]:
    from dlt.extract.items_transform import BaseItemTransform, ValidateItem

    class DeferRefusals(ValidateItem):
        def __init__(self, inner: Any, refusals: list[BaseException]) -> None:
            BaseItemTransform.__init__(self)
            self.inner = inner
            self.refusals = refusals

        def bind(self, pipe: Any) -> Any:
            self.inner.bind(pipe)
            self.table_name = pipe.name
            return self

        def __call__(self, item: Any, meta: Any = None) -> Any:
            try:
                return self.inner(item, meta)
            except Exception as exc:  # any refusal: recorded, the batch is rejected later
                self.refusals.append(exc)
                return None

        def compute_table_schema(self, item: Any = None, meta: Any = None) -> Any:
            return self.inner.compute_table_schema(item, meta)

    return DeferRefusals


def _table_of(resource: Any) -> str | None:
    name = resource.table_name
    return name if isinstance(name, str) else None


def _observe(
    pipeline: Any, resources: list[Any], taps: list[_Tap], normalizers: Any
) -> tuple[Shape, dict[str, set[str]]]:
    """The shape the raw items take in dlt: a scratch pipeline extracts and normalizes them
    with no hints. Returns the shape and, per resource, the tables it produced."""
    import dlt
    from dlt.common.schema import Schema

    shape: dict[str, dict[str, ColumnShape]] = {}
    tables: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="dlt-contract-ops-gate-") as scratch_dir:
        scratch = dlt.pipeline(
            pipeline_name=f"{pipeline.pipeline_name}_gate_observe",
            pipelines_dir=scratch_dir,
            destination=pipeline.destination,
        )
        schema = Schema(pipeline.default_schema_name or "gate", normalizers=normalizers)
        scratch_resources = []
        for resource, tap in zip(resources, taps, strict=True):
            table = _table_of(resource) or resource.name
            scratch_resources.append(
                dlt.resource(tap.items, name=resource.name, table_name=table,
                             max_table_nesting=resource.max_table_nesting)
            )
        scratch.extract(scratch_resources, schema=schema)
        scratch.normalize()
        observed = scratch.default_schema
        for resource in resources:
            root = observed.naming.normalize_table_identifier(_table_of(resource) or resource.name)
            own = {t for t in observed.tables if t == root or t.startswith(root + "__")}
            tables[resource.name] = own
            for t in own:
                shape[t] = {
                    name: ColumnShape(col.get("data_type"), bool(col.get("nullable", True)))
                    for name, col in observed.tables[t].get("columns", {}).items()
                    if name not in _DLT_COLUMNS
                }
        scratch.drop()
    return shape, tables


def _expected(
    resources: list[Any], naming: Any, source_name: str, contracts_dir: Path | None
) -> tuple[Shape, list[str], set[str]]:
    """The contract per table: the resource's model, else its latest snapshot. Returns the
    shape, notes, and the resources that have no contract (not gated)."""
    from dlt_contract_ops.core.naming import expected_table

    shape: dict[str, dict[str, ColumnShape]] = {}
    notes: list[str] = []
    ungated: set[str] = set()
    for resource in resources:
        table = naming.normalize_table_identifier(_table_of(resource) or resource.name)
        model = resource._hints.get("original_columns") if resource._hints else None
        if isinstance(model, type) and hasattr(model, "model_fields"):
            exp = expected_table(resource.name, table, model, naming)
            cols = shape.setdefault(table, {})
            for c in exp.columns:
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


def _quarantine(
    pipeline: Any, folder: Path, report: dict[str, Any], raw: Mapping[str, list[Any]]
) -> Path:
    """Copy the batch's extracted packages, write the rows as the source sent them
    (`raw/<resource>.jsonl`: a model that refused the batch leaves no package, and one that
    coerced it changed the values) and `diff.json`; the folder's path."""
    from dlt.common import json as dlt_json

    from dlt_contract_ops.contracts.store import resource_filename

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    # absolute: the report and the alert name it long after the cwd changed
    target: Path = (folder / str(pipeline.pipeline_name) / stamp).absolute()
    target.mkdir(parents=True, exist_ok=True)
    for load_id in pipeline.list_extracted_load_packages():
        info = pipeline.get_load_package_info(load_id)
        shutil.copytree(info.package_path, target / load_id)
    (target / "raw").mkdir()
    for resource, items in raw.items():
        path = target / "raw" / (resource_filename(resource)[: -len(".json")] + ".jsonl")
        path.write_text("".join(dlt_json.dumps(i) + "\n" for i in items), encoding="utf-8")
    (target / "diff.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False, default=str), encoding="utf-8"
    )
    return target


def check_batch(
    pipeline: Any,
    data: Any,
    *,
    policy: GatePolicy | None = None,
    load: bool = True,
    quarantine_dir: Path | None = None,
    contracts_dir: Path | None = None,
    source_name: str | None = None,
    **run_kwargs: Any,
) -> GateReport:
    """Extract `data` into `pipeline`, compare, then load it (admissible, `load=True`) or
    abort it (rejected, or `load=False`). Never raises for a rejection: see `gated_run`."""
    unknown = sorted(set(run_kwargs) - _EXTRACT_KWARGS - _TARGET_KWARGS)
    if unknown:
        raise ContractOpsError(
            f"gated_run does not take {', '.join(f'`{k}`' for k in unknown)}; it takes "
            f"`pipeline.run` keywords: {', '.join(sorted(_EXTRACT_KWARGS | _TARGET_KWARGS))}."
        )
    policy = policy or GatePolicy()
    target = {k: v for k, v in run_kwargs.items() if k in _TARGET_KWARGS}
    if target:
        # what `pipeline.run` does with these keywords before it extracts (dlt 1.x)
        pipeline._set_destinations(
            destination=target.get("destination"), staging=target.get("staging"),
            destination_credentials=target.get("credentials"),
        )
        pipeline._set_dataset_name(target.get("dataset_name"))
    if pipeline.has_pending_data:
        raise ContractOpsError(
            f"Pipeline `{pipeline.pipeline_name}` has pending load packages from an earlier "
            "run; the gate cannot tell them from this batch. Load them (`pipeline.load()`) or "
            "drop them (`pipeline.abort_packages()`), then run the gate again."
        )
    resources = _resources(data)
    contracts = [_admit_additions(r) for r in resources]
    refused = [_defer_refusals(r) for r in resources]  # filled while extracting
    taps = [_tap(r) for r in resources]
    source = getattr(data, "name", None) or resources[0].source_name or resources[0].name
    source_name = source_name or str(source)
    extract_error: BaseException | None = None
    try:
        pipeline.extract(data, **{k: v for k, v in run_kwargs.items() if k in _EXTRACT_KWARGS})
    except Exception as exc:  # e.g. an incremental cursor missing: still compare what was sent
        extract_error = exc
    finally:
        for resource, contract in zip(resources, contracts, strict=True):
            _restore(resource, contract)
    refusals = [exc for found in refused for exc in found]
    schema = pipeline.default_schema
    normalizers = schema.to_dict().get("normalizers")
    observed, produced = _observe(pipeline, resources, taps, normalizers)
    expected, notes, ungated = _expected(resources, schema.naming, source_name, contracts_dir)
    for name in ungated:
        for table in produced.get(name, ()):
            observed.pop(table, None)  # type: ignore[attr-defined]  # built as a dict above
    failed = extract_error is not None or bool(refusals)
    differences = compare(observed, expected, policy, coerced=not failed)
    admissible = all(d.approved for d in differences) and not failed
    reason = reason_of(differences)
    if refusals:
        reason += "; the resource's model refused the batch"
        notes.append(
            f"the model refused {len(refusals)} item(s), the first: {_root_message(refusals[0])}"
        )
    if extract_error is not None:
        reason += "; the extract failed" if not refusals else ""
        notes.append(f"extract failed: {_root_message(extract_error)}")
    if admissible and load:
        pipeline.normalize()
        info = pipeline.load()
        return GateReport(
            pipeline=pipeline.pipeline_name, action="loaded", differences=differences,
            reason=reason, schema_version=pipeline.default_schema.version,
            load_info=info.asdict(), notes=notes,
        )
    folder: Path | None = None
    if not admissible:
        doc = {
            "pipeline": pipeline.pipeline_name,
            "reason": reason,
            "differences": [d.model_dump() for d in differences],
            "notes": notes,
        }
        raw = {r.name: t.items for r, t in zip(resources, taps, strict=True)}
        folder = _quarantine(pipeline, quarantine_dir or _default_quarantine(), doc, raw)
    pipeline.abort_packages()  # deletes the packages, restores local state and schemas
    version = pipeline.default_schema.version if pipeline.default_schema_name else None
    return GateReport(
        pipeline=pipeline.pipeline_name,
        action="rejected" if not admissible else "loaded",
        differences=differences,
        reason=reason if not admissible else f"{reason} (checked only, not loaded)",
        schema_version=version,
        quarantine=str(folder) if folder else None,
        notes=notes,
    )


def _root_message(exc: BaseException) -> str:
    """The innermost cause's message on one line (dlt wraps a validation error thrice)."""
    while exc.__cause__ is not None and exc.__cause__ is not exc:
        exc = exc.__cause__
    return " ".join(str(exc).split())


def _default_quarantine() -> Path:
    import dlt

    return Path(str(dlt.current.run_context().data_dir)) / "contract_ops" / "quarantine"


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
    from dlt_contract_ops.gate.alert import alert_rejection
    from dlt_contract_ops.gate.settings import gate_settings

    resources = _resources(data)
    source_name = str(getattr(data, "name", None) or resources[0].source_name or resources[0].name)
    settings = gate_settings(source_name)
    report = check_batch(
        pipeline,
        data,
        policy=policy or settings.policy,
        quarantine_dir=Path(quarantine_dir) if quarantine_dir else settings.quarantine_dir,
        contracts_dir=Path(contracts_dir) if contracts_dir else settings.contracts_dir,
        source_name=source_name,
        **run_kwargs,
    )
    if report.action == "rejected":
        alert_rejection(report, source_name, alert_sinks, dry_run=dry_run)
        if raise_on_reject:
            raise GateRejected(report)
    return report
