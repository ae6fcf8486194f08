"""The detector registry: every detector as a value, in output order.

The reconciler runs them, the CLI builds its `--include-*` flags from them, the text
renderer takes its headings and quiet rules from them, and `DriftFinding.drift_type` /
`ReconcileResult.detector` are checked against them. Adding a detector means one runner
module under `dlt_contract_ops/runners/` and one entry here.

A runner has one signature, `(SourceContext, Emitter, SourceSettings) -> ReconcileResult`:
the source's context (built once per run), the sweep's emitter, and the source's settings
with the caller's overrides applied. Runners are named by import path and imported on first
use, so reading the registry loads no driver and no dlt.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt_contract_ops.context import SourceContext
    from dlt_contract_ops.findings import ReconcileResult
    from dlt_contract_ops.settings.project import SourceSettings
    from dlt_contract_ops.sinks.emitter import Emits

    Runner = Callable[[SourceContext, Emits, SourceSettings], ReconcileResult]


@dataclass(frozen=True)
class Detector:
    """One detector: its name (the JSON `detector` and `drift_type`), its runner, whether
    every reconcile runs it or a flag turns it on, and how the text output treats it."""

    name: str
    runner: str  # "module:function"; empty for a kind of finding no reconcile produces
    summary: str
    #: None: runs on every reconcile; else the `reconcile` flag that turns it on
    flag: str | None = None
    #: the text output prints its block only when it has findings, an error or notes
    quiet_when_clean: bool = False
    #: the finding is a kind of drift the reconciler looks for (False: gate-only kinds)
    reconcile: bool = True
    #: a combiner reads the other detectors' findings instead of querying
    #: (`(ctx, results, settings, min_confidence) -> (results, result)`); it runs after them
    combines: bool = False
    #: what the text output says of a block without findings
    clean_text: str = "No drift"

    @property
    def default(self) -> bool:
        return self.flag is None

    def load(self) -> Any:
        """The runner (or combiner) function, imported on first use."""
        module, _, attr = self.runner.partition(":")
        return getattr(importlib.import_module(module), attr)


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "additive",
        "dlt_contract_ops.runners.additive:run_additive",
        "live columns the model does not know",
    ),
    Detector(
        "removal",
        "dlt_contract_ops.runners.removal:run_removal",
        "declared columns whose non-NULL coverage collapsed in the recent window",
        flag="--include-removal",
    ),
    Detector(
        "missing",
        "dlt_contract_ops.runners.declared:run_missing",
        "declared columns the live table lacks",
        quiet_when_clean=True,
    ),
    Detector(
        "type",
        "dlt_contract_ops.runners.declared:run_type",
        "live columns whose type cannot hold the model's type",
        quiet_when_clean=True,
    ),
    Detector(
        "rename",
        "dlt_contract_ops.runners.rename:fold_renames",
        "an added column that took over from a vanished one at one load boundary",
        quiet_when_clean=True,
        combines=True,
    ),
    Detector(
        "gate",
        "",  # no runner: the gate runs at load time (`gated_run`), not in a reconcile
        "a batch the ingest gate rejected before it was loaded",
        reconcile=False,
    ),
    Detector(
        "contract",
        "dlt_contract_ops.runners.contract:run_contract",
        "live data breaking the models' declared semantics (required, code sets, ranges, "
        "patterns, keys)",
        # not part of a reconcile: it scans every row of every modelled table, where the
        # reconcile detectors read metadata and one windowed aggregate; `contract verify`
        # runs it (`reconcile.run(detectors=("contract",))`). Registered last, so the SARIF
        # rule index of every earlier detector stays put.
        reconcile=False,
        clean_text="The data keeps every declared contract",
    ),
    Detector(
        "distribution",
        "dlt_contract_ops.runners.distribution:run_distribution",
        "per-load shifts in NULL rate, distinct count and category shares (load profiles)",
        flag="--include-distribution",
        quiet_when_clean=True,
        # registered after `contract`, so every earlier SARIF rule index stays put
    ),
)


@cache
def detector_names() -> tuple[str, ...]:
    """Every registered detector name, in output order.

    >>> detector_names()
    ('additive', 'removal', 'missing', 'type', 'rename', 'gate', 'contract', 'distribution')
    """
    return tuple(d.name for d in DETECTORS)


def get(name: str) -> Detector:
    """The detector registered as `name`; KeyError naming the registered ones."""
    for d in DETECTORS:
        if d.name == name:
            return d
    raise KeyError(f"unknown detector {name!r}; registered: {', '.join(detector_names())}")


def selected(include: Any = ()) -> tuple[str, ...]:
    """The default detectors plus those whose flag is in `include` (names or flags), in
    registry order.

    >>> selected()
    ('additive', 'missing', 'type', 'rename')
    >>> selected({"removal"})
    ('additive', 'removal', 'missing', 'type', 'rename')
    """
    chosen = set(include)
    return tuple(
        d.name
        for d in DETECTORS
        if d.reconcile and (d.default or d.name in chosen or d.flag in chosen)
    )
