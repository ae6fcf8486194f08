"""The configuration specs: what each `[contract_ops...]` table may hold.

dlt resolves them (`resolve_configuration`), so environment variables, `secrets.toml` and
`config.toml` are read in dlt's order with dlt's type coercion and provenance. A table whose
typed value declares its keys (`settings.declare`: `ProjectSettings`, `SourceSettings`,
`DedupSettings`, `RemovalSettings`) gets its spec made from it (`spec_for`), so the keys are
declared once. Keys whose values are ours to check hold `RAW` values (durations, name lists,
and text, which dlt would coerce from a number: `ref = 5` must be an error, not "5"). The
tables other modules read keep their specs here (`GateSpec`: `settings.gate`, `InferSpec`:
`settings.infer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

from dlt.common.configuration import configspec
from dlt.common.configuration.specs import BaseConfiguration

from dlt_contract_ops.settings.declare import RAW, Key, keys_of
from dlt_contract_ops.settings.tables import ProjectSettings, SourceSettings

# NOTE: dlt's configspec reads the annotations at runtime; `Optional[...]` keeps them
# evaluable on Python 3.10 under `from __future__ import annotations`.


def spec_of(name: str, doc: str, hints: dict[str, Any]) -> type[BaseConfiguration]:
    """A dlt spec whose keys and hints are `hints` (each unset by default): for a table whose
    keys are declared once, by the typed value the code reads it into."""
    namespace: dict[str, Any] = {"__annotations__": dict(hints), "__doc__": doc,
                                 "__module__": __name__, "__qualname__": name}
    namespace.update(dict.fromkeys(hints))
    return configspec(type(name, (BaseConfiguration,), namespace))


#: the specs of sub-tables made by `spec_for`, by name: one class for a table that two
#: tables embed (`removal`, in the project's and each source's)
_MADE: dict[str, type[BaseConfiguration]] = {}


def spec_for(keys: Mapping[str, Key]) -> dict[str, Any]:
    """The dlt hints of a table declared by `keys` (`settings.declare`), in declaration
    order, its own keys before its sub-tables (as a TOML file writes them): a sub-table's
    (and the keys under one, `Key.at`) as its spec, made once and named `<Table>Spec`."""
    hints: dict[str, Any] = {}
    tables: dict[str, Any] = {}
    under: dict[str, dict[str, Key]] = {}
    for field_name, k in keys.items():
        first, *rest = k.path(field_name)
        if k.keys is not None:
            tables[first] = _made(first, k.keys)
        elif rest:
            under.setdefault(first, {})[rest[0]] = Key(k.read, k.hint)
            tables[first] = None  # placed here, made below with all its keys
        else:
            hints[first] = k.hint
    for table, inner in under.items():
        tables[table] = _made(table, inner)
    return {**hints, **tables}


def _made(table: str, keys: Mapping[str, Key]) -> type[BaseConfiguration]:
    name = f"{table.title()}Spec"
    made = _MADE.get(name)
    if made is None:
        made = _MADE[name] = spec_of(name, f"The `{table}` table.", spec_for(keys))
    if set(made.get_resolvable_fields()) != set(keys):
        raise TypeError(f"two `{table}` tables declare different keys")
    return made


@configspec
class GateSpec(BaseConfiguration):
    """`[contract_ops.gate]` and `[sources.<X>.contract_ops.gate]`: the ingest gate's policy."""

    allow_nullable_additions: Optional[bool] = None  # noqa: UP045
    approved_additions: Optional[Any] = None  # noqa: UP045
    allow_coercion: Optional[bool] = None  # noqa: UP045
    quarantine_dir: Optional[Any] = None  # noqa: UP045
    contracts_dir: Optional[Any] = None  # noqa: UP045


@configspec
class InferSpec(BaseConfiguration):
    """`[contract_ops.infer]`: when `models infer` declares a text column's code set."""

    code_set_max_values: Optional[Any] = None  # noqa: UP045
    code_set_min_rows: Optional[Any] = None  # noqa: UP045


#: `[contract_ops.severity]` and `[sources.<X>.contract_ops.severity]`: detector names, each
#: key read at exactly its table by `settings.severity`
SEVERITY = ("severity", RAW)


def _project_hints() -> dict[str, Any]:
    """`ProjectSettings`' keys, and the tables other modules read where the repository's
    `.dlt/config.toml` shows them: `[contract_ops.gate]` (`settings.gate`) after `dedup`,
    `[contract_ops.infer]` (`settings.infer`), the severity table (`settings.severity`) and
    the sinks' option tables (`sinks.options`, with provenance and secret rules) last."""
    own = list(spec_for(keys_of(ProjectSettings)).items())
    at = [k for k, _ in own].index("dedup") + 1
    return dict([
        *own[:at], ("gate", GateSpec), *own[at:], ("infer", InferSpec), SEVERITY,
        ("alert_sink", Optional[dict[str, Any]]),  # noqa: UP045
    ])


if TYPE_CHECKING:
    ProjectSpec = SourceSpec = BaseConfiguration
    RemovalSpec = DedupSpec = RenameSpec = DistributionSpec = BaseConfiguration
else:
    #: `[contract_ops]`: project-wide settings
    ProjectSpec = spec_of("ProjectSpec", "`[contract_ops]`: project-wide settings.",
                          _project_hints())
    #: `[sources.<X>.contract_ops]`: one declared source and its overrides; its `gate`
    #: table is read by `settings.gate`, its `severity` table by `settings.severity`
    SourceSpec = spec_of(
        "SourceSpec", "`[sources.<X>.contract_ops]`: one declared source and its overrides.",
        dict([*spec_for(keys_of(SourceSettings)).items(), SEVERITY, ("gate", GateSpec)]),
    )
    RemovalSpec, DedupSpec, RenameSpec, DistributionSpec = (
        _MADE[name] for name in ("RemovalSpec", "DedupSpec", "RenameSpec", "DistributionSpec")
    )


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
