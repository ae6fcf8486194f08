"""The configuration specs: what each `[contract_ops...]` table may hold.

dlt resolves them (`resolve_configuration`), so environment variables, `secrets.toml` and
`config.toml` are read in dlt's order with dlt's type coercion and provenance. A table whose
typed value declares its keys (removal: `settings.removal.RemovalSettings`) gets its spec
made from it (`spec_of`), so the keys are declared once. Fields typed
`Any` hold values whose grammar or strictness is ours (durations, name lists, and text, which
dlt would coerce from a number: `ref = 5` must be an error, not "5"); `settings.project`
reads them into typed values. Adding a setting means adding one field here (and reading it there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from dlt.common.configuration import configspec
from dlt.common.configuration.specs import BaseConfiguration

from dlt_contract_ops.settings.removal import spec_hints

# NOTE: dlt's configspec reads the annotations at runtime; `Optional[...]` keeps them
# evaluable on Python 3.10 under `from __future__ import annotations`.


def spec_of(name: str, doc: str, hints: dict[str, Any]) -> type[BaseConfiguration]:
    """A dlt spec whose keys and hints are `hints` (each unset by default): for a table whose
    keys are declared once, by the typed value the code reads it into."""
    namespace: dict[str, Any] = {"__annotations__": dict(hints), "__doc__": doc,
                                 "__module__": __name__, "__qualname__": name}
    namespace.update(dict.fromkeys(hints))
    return configspec(type(name, (BaseConfiguration,), namespace))


if TYPE_CHECKING:
    RemovalSpec = BaseConfiguration
else:
    #: `[contract_ops.removal]` and `[sources.<X>.contract_ops.removal]`: the keys of
    #: `settings.removal.RemovalSettings`
    RemovalSpec = spec_of(
        "RemovalSpec", "`[contract_ops.removal]` and `[sources.<X>.contract_ops.removal]`.",
        spec_hints(),
    )


@configspec
class DedupSpec(BaseConfiguration):
    """`[contract_ops.dedup]`."""

    enabled: Optional[bool] = None  # noqa: UP045
    realert_after: Optional[Any] = None  # noqa: UP045
    state_file: Optional[Any] = None  # noqa: UP045


@configspec
class RenameSpec(BaseConfiguration):
    """`[contract_ops.rename]`: when an added and a vanished column count as one rename."""

    min_confidence: Optional[Any] = None  # noqa: UP045


@configspec
class GateSpec(BaseConfiguration):
    """`[contract_ops.gate]` and `[sources.<X>.contract_ops.gate]`: the ingest gate's policy."""

    allow_nullable_additions: Optional[bool] = None  # noqa: UP045
    approved_additions: Optional[Any] = None  # noqa: UP045
    allow_coercion: Optional[bool] = None  # noqa: UP045
    quarantine_dir: Optional[Any] = None  # noqa: UP045
    contracts_dir: Optional[Any] = None  # noqa: UP045


@configspec
class DistributionSpec(BaseConfiguration):
    """`[contract_ops.distribution]` and `[sources.<X>.contract_ops.distribution]`: the
    distribution detector's baseline and rule."""

    baseline_loads: Optional[int] = None  # noqa: UP045
    baseline_window: Optional[Any] = None  # noqa: UP045
    min_baseline_loads: Optional[int] = None  # noqa: UP045
    max_categories: Optional[int] = None  # noqa: UP045
    threshold: Optional[Any] = None  # noqa: UP045
    min_change: Optional[Any] = None  # noqa: UP045
    min_rows: Optional[Any] = None  # noqa: UP045  (read by `settings.distribution`)


@configspec
class InferSpec(BaseConfiguration):
    """`[contract_ops.infer]`: when `models infer` declares a text column's code set."""

    code_set_max_values: Optional[Any] = None  # noqa: UP045
    code_set_min_rows: Optional[Any] = None  # noqa: UP045


@configspec
class ProjectSpec(BaseConfiguration):
    """`[contract_ops]`: project-wide settings."""

    alert_sinks: Optional[Any] = None  # noqa: UP045
    injected_columns: Optional[Any] = None  # noqa: UP045
    load_timestamp_column: Optional[Any] = None  # noqa: UP045
    query_timeout: Optional[Any] = None  # noqa: UP045
    lock_timeout: Optional[Any] = None  # noqa: UP045
    sample_window: Optional[Any] = None  # noqa: UP045
    sample_rows: Optional[int] = None  # noqa: UP045
    profile_store: Optional[Any] = None  # noqa: UP045
    profile_retention: Optional[Any] = None  # noqa: UP045
    source_cache: Optional[bool] = None  # noqa: UP045
    source_build_timeout: Optional[Any] = None  # noqa: UP045
    severity: Optional[Any] = None  # noqa: UP045  (a table, read by `settings.severity`)
    removal: RemovalSpec = None  # type: ignore[assignment]  # dlt fills embedded specs
    dedup: DedupSpec = None  # type: ignore[assignment]  # dlt fills embedded specs
    gate: GateSpec = None  # type: ignore[assignment]  # dlt fills embedded specs
    rename: RenameSpec = None  # type: ignore[assignment]  # dlt fills embedded specs
    distribution: DistributionSpec = None  # type: ignore[assignment]  # dlt fills embedded specs
    infer: InferSpec = None  # type: ignore[assignment]  # dlt fills embedded specs
    #: per-sink option tables, read by `sinks.options` with provenance and secret rules
    alert_sink: Optional[dict[str, Any]] = None  # noqa: UP045


@configspec
class SourceSpec(BaseConfiguration):
    """`[sources.<X>.contract_ops]`: one declared source and its overrides."""

    ref: Optional[Any] = None  # noqa: UP045
    #: the dlt source this table declares for one more pipeline (`-s <source_name>` selects
    #: every table of it); unset: the table's own name
    source_name: Optional[Any] = None  # noqa: UP045
    pipeline_name: Optional[Any] = None  # noqa: UP045
    destination: Optional[Any] = None  # noqa: UP045
    dataset_name: Optional[Any] = None  # noqa: UP045
    injected_columns: Optional[Any] = None  # noqa: UP045
    load_timestamp_column: Optional[Any] = None  # noqa: UP045
    #: `[sources.<X>.contract_ops.models]`: resource -> "module:Class" (its model, bound)
    models: Optional[dict[str, Any]] = None  # noqa: UP045
    severity: Optional[Any] = None  # noqa: UP045  (a table, read by `settings.severity`)
    removal: RemovalSpec = None  # type: ignore[assignment]  # dlt fills embedded specs
    gate: GateSpec = None  # type: ignore[assignment]  # dlt fills embedded specs
    distribution: DistributionSpec = None  # type: ignore[assignment]  # dlt fills embedded specs


def fields_of(spec: type[BaseConfiguration]) -> frozenset[str]:
    """The keys a table of `spec` may hold (the unknown-key check's allowed set)."""
    return frozenset(spec.get_resolvable_fields())


PROJECT_KEYS = fields_of(ProjectSpec)
SOURCE_KEYS = fields_of(SourceSpec)
REMOVAL_KEYS = fields_of(RemovalSpec)
DEDUP_KEYS = fields_of(DedupSpec)
GATE_KEYS = fields_of(GateSpec)
RENAME_KEYS = fields_of(RenameSpec)
DISTRIBUTION_KEYS = fields_of(DistributionSpec)
INFER_KEYS = fields_of(InferSpec)
