"""What a detector is (`Detector`) and what its runner is given (`DetectorRun`).

A detector is registered as a `Detector` value in the `dlt_contract_ops.detectors`
entry-point group (the built-ins too, see pyproject.toml); `detectors.registry` validates
each entry when it loads the group. Every runner, a combiner included, has ONE
signature: `runner(run: DetectorRun) -> ReconcileResult`. What a runner needs of the others
it declares on its `Detector` (`combines`: their results; `profiles`: the source's load
profiles; `explains`: what its findings account for of another's), never looks up by name.
See docs/writing-a-detector.md.

At run time this module imports only `registry` and `detection.needs`, which import nothing
heavy: the registry, the CLI's `--help` and a plugin's module may import it without loading
pydantic, dlt or a driver.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dlt_contract_ops.detection.needs import ProfileNeed
from dlt_contract_ops.registry import resolve

if TYPE_CHECKING:
    from dlt_contract_ops.detection.source_input import SourceInput
    from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
    from dlt_contract_ops.settings.project import SourceSettings
    from dlt_contract_ops.sinks.base import Emits

#: `order` of a detector that sets none: after every built-in (their rule indexes stay put)
DEFAULT_ORDER = 1000


@dataclass(frozen=True)
class DetectorRun:
    """What a runner gets for one source.

    - `ctx`: the source's input (`SourceInput`: built source, adapter, live columns, clock,
      load profiles, ...), frozen, shared by every detector of the source.
    - `emitter`: where errors go (`emitter.error(ctx.error_event(...))`); findings are
      returned in the result and alerted by the sweep once every combiner ran.
    - `settings`: the detector's own settings (see `Detector.settings`); None without any.
    - `source`: the source's resolved settings (`[sources.<X>.contract_ops]` over
      `[contract_ops]`, with the caller's overrides), for what detectors share.
    - `results`: for a combiner, the other detectors' results of this source; else empty.

    >>> DetectorRun(detector="freshness", ctx=None, emitter=None, settings=None,
    ...             source=None).results
    ()
    """

    detector: str
    ctx: SourceInput
    emitter: Emits
    settings: Any
    source: SourceSettings
    results: tuple[ReconcileResult, ...] = ()


#: the one runner signature, of runners and combiners alike
Runner = Callable[[DetectorRun], "ReconcileResult"]


@dataclass(frozen=True)
class Explains:
    """What a detector's finding accounts for of another detector's findings of the same
    table: the per-column `metrics` (entries `{"column", "metric", ...}` of that detector's
    `metrics`) of the columns the finding names. A column gone dark explains its NULL rate's
    jump: `Explains("distribution", ("null_rate",))` on `removal`.

    >>> Explains("distribution", ("null_rate",)).metrics
    ('null_rate',)
    """

    detector: str
    metrics: tuple[str, ...]


@dataclass(frozen=True)
class Detector:
    """One detector, as its entry point registers it.

    - `name`: the JSON `detector` / `drift_type`, the SARIF rule id, the entry point's name,
      and the settings table `[contract_ops.<name>]`.
    - `runner`: `(DetectorRun) -> ReconcileResult`, or its import path `"module:function"`
      (imported on first run, so `--help` loads none of its imports); empty for a kind of
      finding no reconcile produces (`gate`).
    - `summary`: what it finds, one line (`--help`, SARIF rule, docs).
    - `flag`: None to run on every reconcile; else `"--include-<name>"` turns it on.
    - `settings`: its own settings, read per source and handed over as `DetectorRun.settings`:
      a pydantic model validated from `[contract_ops.<name>]` overlaid by
      `[sources.<X>.contract_ops.<name>]` (unknown keys and bad values are configuration
      errors naming the key and file); or a function of the source's resolved settings (the
      built-ins, whose tables `settings.project` reads); or the import path of either.
    - `order`: output order, and so the SARIF rule index (built-ins 10..80).
    - `combines`: runs after the others and reads their results (`DetectorRun.results`); a
      finding of it that lists `components` (`{"id", ...}`) takes its columns out of those
      component findings, which are then not alerted on their own.
    - `explains`: `Explains` values: what its findings account for of another detector's
      findings of the same table. After the combiners, those metrics of the finding's columns
      are folded into it (its `metrics`, and a `components` entry naming the finding they came
      from, with the `metrics` taken), at the higher of the two severities; the other finding
      keeps the rest, and is dropped when nothing is left. One event, one finding.
    - `lines`: `(DriftFinding) -> list[str]`, the detail lines of its findings in text, HTML
      and the CI formats' messages (or its import path); None: the built-in lines.
    - `quiet_when_clean`, `reconcile`, `clean_text`: how the text output treats its block,
      whether a reconcile runs it, what a clean block says.
    - `profiles`: what it reads of the source's load profiles (`profiles.shared`): None, or
      `"counts"` (rows and non-NULL values per load) or `"detailed"` (distinct counts,
      ranges, categories too). The sweep profiles each source once a run, as detailed as
      its detectors declared, for all of them.

    >>> Detector("freshness", "freshness_detector:run", "tables not loaded lately",
    ...          flag="--include-freshness").default
    False
    """

    name: str
    runner: Runner | str
    summary: str
    flag: str | None = None
    settings: Any = None
    order: int = DEFAULT_ORDER
    combines: bool = False
    explains: tuple[Explains, ...] = ()
    lines: Callable[[DriftFinding], list[str]] | str | None = None
    quiet_when_clean: bool = False
    reconcile: bool = True
    clean_text: str = "No drift"
    severity: str = "warning"  # its findings' severity unless configured: error, warning, info
    profiles: ProfileNeed | None = None

    @property
    def default(self) -> bool:
        """Runs on every reconcile (no flag turns it on)."""
        return self.flag is None

    def load(self) -> Runner:
        """The runner, imported on first use."""
        runner: Runner = resolve(self.runner)
        return runner

    def line_renderer(self) -> Callable[[DriftFinding], list[str]] | None:
        """The `lines` function, imported on first use; None when the detector has none."""
        return resolve(self.lines) if self.lines else None
