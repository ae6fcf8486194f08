"""The user's resources inside the gate: the ones a source selects, their model loosened so an
addition reaches the gate's observation, a row the model refuses deferred to the verdict, and
each resource's contract restored afterwards."""

from __future__ import annotations

import functools
from typing import Any

import dlt_contract_ops.dlt_private as dlt_private
from dlt_contract_ops.errors import ContractOpsError
from dlt_contract_ops.ingest.observe import Tap


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
    contract = dlt_private.resource_hints(resource).get("schema_contract")
    if contract != {"tables": "evolve", "columns": "discard_value", "data_type": "freeze"}:
        return None  # set by the user (dlt stores the expanded default when none is given)
    resource.apply_hints(schema_contract={**contract, "columns": "evolve"})
    return contract


def _restore(resource: Any, contract: Any, tap: Tap) -> None:
    """Give the caller's resource back its own contract and validator: one that refuses
    nothing must not outlive the gate (a plain `pipeline.run` of it later would load rows
    the model refused), nor a tap (it would keep every item of every later run)."""
    dlt_private.remove_steps(resource, tap)
    if contract is not None:
        resource.apply_hints(schema_contract=contract)  # dlt rebuilds the validator
        return
    deferring = resource.validator
    inner = getattr(deferring, "inner", None)
    if inner is not None:
        resource.validator = inner
        hints = dlt_private.resource_hints(resource)
        if hints and hints.get("validator") is deferring:
            hints["validator"] = inner


def _defer_refusals(resource: Any, tap: Tap) -> list[BaseException]:
    """Make the resource's validator show every item to the tap first, and record and drop an
    item it refuses instead of ending the extract, so the tap sees the whole batch: the shape
    compared and the rows quarantined are all of it, not the rows before the first bad one. A
    refusal still rejects the batch (the list returned collects them). A resource with no
    validator gets the tap as a step of its own. The tap rides in the validator, not in a step
    before it, because dlt's pipe pays per step per item."""
    refusals: list[BaseException] = []
    inner = resource.validator
    if inner is None:
        resource.add_step(tap)
    else:
        deferring = _deferring_validator()(inner, refusals, tap)
        resource.validator = deferring
        hints = dlt_private.resource_hints(resource)
        if hints and hints.get("validator") is not None:
            # dlt re-sets the pipe's validator from the hints when it extracts
            hints["validator"] = deferring
    return refusals


@functools.cache
def _deferring_validator() -> type[Any]:
    from dlt.extract.items_transform import BaseItemTransform, ValidateItem

    class DeferRefusals(ValidateItem):
        def __init__(self, inner: Any, refusals: list[BaseException], tap: Tap) -> None:
            BaseItemTransform.__init__(self)
            self.inner = inner
            self.refusals = refusals
            self.tap = tap

        def bind(self, pipe: Any) -> Any:
            self.inner.bind(pipe)
            self.table_name = pipe.name
            return self

        def __call__(self, item: Any, meta: Any = None) -> Any:
            self.tap(item)
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
