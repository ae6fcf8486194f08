"""The built-in detectors, as the `dlt_contract_ops.detectors` entry points register them
(pyproject.toml): the same path a third-party detector takes.

Runners are named by import path, so loading the registry (the CLI's `--help`) imports no
runner, no driver and no dlt. `order` keeps the output order and the SARIF rule index of
every built-in where 0.1.0 had it.

Severities (docs/detectors.md): what breaks a consumer of a declared column is an `error`
(missing, a type that cannot hold the declared one, a column gone dark, a rename, which
takes a declared column away as surely as `missing` would, a broken contract, a rejected
batch); what needs a look but breaks nothing declared is a `warning` (an added column, a
shifted distribution).

One event, one finding: a column gone dark (`removal`) or renamed (`rename`) explains the jump
of its NULL rate, so that `distribution` metric of the same column is folded into the removal
or rename finding (`explains`, `engine.detector_runs.explain`), reported and alerted once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_contract_ops.detection.detector import Detector, Explains

if TYPE_CHECKING:
    from dlt_contract_ops.core.distribution import DistributionRule
    from dlt_contract_ops.settings.project import RemovalSettings, SourceSettings


# The built-ins' settings tables predate the plugin settings: `settings.project` reads and
# checks them (with the caller's overrides), and each detector takes its own part of them.
def removal_settings(source: SourceSettings) -> RemovalSettings:
    """`[contract_ops.removal]` over `[sources.<X>.contract_ops.removal]`, with overrides."""
    return source.removal


def distribution_settings(source: SourceSettings) -> DistributionRule:
    """`[contract_ops.distribution]`."""
    return source.distribution


def rename_settings(source: SourceSettings) -> float:
    """`[contract_ops.rename] min_confidence`."""
    return source.rename_min_confidence


#: a column that went dark (or was renamed away) is why its NULL rate jumped
NULL_RATE = Explains("distribution", ("null_rate",))


ADDITIVE = Detector(
    "additive",
    "dlt_contract_ops.detectors.additive:run_additive",
    "live columns the model does not know",
    order=10,
    severity="warning",
)
REMOVAL = Detector(
    "removal",
    "dlt_contract_ops.detectors.removal:run_removal",
    "declared columns whose non-NULL coverage collapsed in the recent window",
    flag="--include-removal",
    settings=removal_settings,
    order=20,
    severity="error",
    profiles="counts",  # its windows summed from the load profiles (`from_profiles`)
    explains=(NULL_RATE,),
)
MISSING = Detector(
    "missing",
    "dlt_contract_ops.detectors.declared:run_missing",
    "declared columns the live table lacks",
    quiet_when_clean=True,
    order=30,
    severity="error",
)
TYPE = Detector(
    "type",
    "dlt_contract_ops.detectors.declared:run_type",
    "live columns whose type cannot hold the model's type",
    quiet_when_clean=True,
    order=40,
    severity="error",
)
RENAME = Detector(
    "rename",
    "dlt_contract_ops.detectors.rename:run_rename",
    "an added column that took over from a vanished one at one load boundary",
    settings=rename_settings,
    quiet_when_clean=True,
    combines=True,
    explains=(NULL_RATE,),
    order=50,
    severity="error",
)
GATE = Detector(
    "gate",
    "",  # no runner: the gate runs at load time (`gated_run`), not in a reconcile
    "a batch the ingest gate rejected before it was loaded",
    reconcile=False,
    order=60,
    severity="error",
)
CONTRACT = Detector(
    "contract",
    "dlt_contract_ops.detectors.contract:run_contract",
    "live data breaking the models' declared semantics (required, code sets, ranges, "
    "patterns, keys)",
    # not part of a reconcile: it scans every row of every modelled table, where the
    # reconcile detectors read metadata and one windowed aggregate; `contract verify` runs it
    # (`reconcile.run(detectors=("contract",))`)
    reconcile=False,
    clean_text="The data keeps every declared contract",
    order=70,
    severity="error",
)
DISTRIBUTION = Detector(
    "distribution",
    "dlt_contract_ops.detectors.distribution:run_distribution",
    "per-load shifts in NULL rate, distinct count and category shares (load profiles)",
    flag="--include-distribution",
    settings=distribution_settings,
    quiet_when_clean=True,
    order=80,
    severity="warning",
    profiles="detailed",
)
