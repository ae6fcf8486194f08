"""The gate's policy from `[contract_ops.gate]`, overridden per source by
`[sources.<name>.contract_ops.gate]`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dlt_contract_ops.core.ingest import GatePolicy
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.settings.resolve import resolve_exact
from dlt_contract_ops.settings.specs import GateSpec
from dlt_contract_ops.settings.values import as_names, as_text, where


@dataclass(frozen=True)
class GateSettings:
    policy: GatePolicy = field(default_factory=GatePolicy)
    quarantine_dir: Path | None = None
    contracts_dir: Path | None = None


def _flag(value: Any, key: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"{where(key)} must be true or false, got {value!r}.")
    return value


def _approvals(value: Any, key: str) -> frozenset[str]:
    names = as_names(value, key)
    bad = [n for n in names if n.count(":") != 1 or "." not in n.split(":")[0]]
    if bad:
        raise ConfigError(
            f"{where(key)}: {', '.join(repr(b) for b in bad)} must read `table.column:type`, "
            'e.g. "orders.currency:text".'
        )
    return frozenset(names)


def gate_settings(source: str | None) -> GateSettings:
    """The gate settings in the current dlt project context (the cwd's `.dlt/`)."""
    from dlt_contract_ops.settings.problems import (
        not_a_table,
        raise_problems,
        table_problems,
        unread_table_variables,
    )

    sections: list[tuple[str, ...]] = [("contract_ops", "gate")]
    if source:
        sections.append(("sources", source, "contract_ops", "gate"))
    raise_problems(unread_table_variables())  # `CONTRACT_OPS__GATE='{...}'` is not read
    # `CONTRACT_OPS__GATE=true` or `gate = "strict"` reads as no gate settings at all
    raise_problems([m for m in map(not_a_table, (".".join(p) for p in sections)) if m])
    settings = GateSettings()
    for path in sections:
        dotted = ".".join(path)
        raise_problems([p for p in table_problems(".".join(path[:-1])) if "`[" + dotted in p])
        spec = resolve_exact(GateSpec(), path)
        p = settings.policy
        policy = GatePolicy(
            allow_nullable_additions=_flag(
                spec.allow_nullable_additions, f"{dotted}.allow_nullable_additions",
                p.allow_nullable_additions,
            ),
            approved_additions=(
                p.approved_additions if spec.approved_additions is None
                else _approvals(spec.approved_additions, f"{dotted}.approved_additions")
            ),
            allow_coercion=_flag(spec.allow_coercion, f"{dotted}.allow_coercion",
                                 p.allow_coercion),
        )
        quarantine = as_text(spec.quarantine_dir, f"{dotted}.quarantine_dir")
        contracts = as_text(spec.contracts_dir, f"{dotted}.contracts_dir")
        settings = GateSettings(
            policy,
            Path(quarantine) if quarantine else settings.quarantine_dir,
            Path(contracts) if contracts else settings.contracts_dir,
        )
    return settings
