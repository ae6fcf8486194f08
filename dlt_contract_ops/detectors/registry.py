"""The detector registry: every `Detector` of the `dlt_contract_ops.detectors` entry-point
group, built-ins included (pyproject.toml), validated as it registers, in output order.

The reconciler runs them, the CLI builds its `--include-*` flags from them, the text, JSON,
JUnit, GitHub, SARIF and HTML renderings take their names, headings and lines from them, and
a runner's `ReconcileResult.detector` and `DriftFinding.drift_type` are checked against them
when the run takes the result (`checked`): the values themselves import no registry. Adding a
detector means one module and one entry point (docs/writing-a-detector.md).

An entry that cannot register is a `DetectorPluginError` naming the distribution, the entry
point and the offending member, pluggy-style; two entries of one name name both. Loading the
registry imports each entry's module (the built-ins' is `detectors.builtin`, which imports no
runner): keep a plugin's module light and name its runner by import path when it is not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from dlt_contract_ops.detection.detector import Detector, Explains
from dlt_contract_ops.detection.needs import PROFILE_NEEDS
from dlt_contract_ops.errors import DetectorPluginError, closest
from dlt_contract_ops.model.findings import ReconcileResult
from dlt_contract_ops.model.severity import SEVERITIES
from dlt_contract_ops.registry import DETECTOR_GROUP, distribution

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*\Z")


def flag_of(name: str) -> str:
    """The flag an opt-in detector must use.

    >>> flag_of("late_rows")
    '--include-late-rows'
    """
    return f"--include-{name.replace('_', '-')}"


def _where(ep: EntryPoint) -> str:
    dist = distribution(ep) or "an unknown distribution"
    return f"entry point `{ep.name} = {ep.value}` of {dist} (group `{DETECTOR_GROUP}`)"


def _member_problem(d: Detector) -> str | None:
    """What is wrong with one member of `d`, naming it; None when it may register."""
    if not _NAME.match(d.name):
        return (f"`name` is {d.name!r}: use lower-case letters, digits and underscores, "
                "starting with a letter")
    if not isinstance(d.summary, str) or not d.summary.strip():
        return "`summary` must be a non-empty string (one line: what the detector finds)"
    runner = d.runner
    if isinstance(runner, str):
        if runner == "" and d.reconcile:
            return "`runner` is empty: give the runner or its import path `module:function`"
        if runner and not _PATH.match(runner):
            return f"`runner` is {runner!r}: write an import path as `module:function`"
    elif not callable(runner):
        return f"`runner` is a {type(runner).__name__}, not a function or `module:function`"
    if d.flag is not None and d.flag != flag_of(d.name):
        return f"`flag` is {d.flag!r}: an opt-in detector's flag is `{flag_of(d.name)}`"
    for member in ("settings", "lines"):
        value = getattr(d, member)
        if isinstance(value, str):
            if not _PATH.match(value):
                return f"`{member}` is {value!r}: write an import path as `module:attribute`"
        elif value is not None and not callable(value):
            return (f"`{member}` is a {type(value).__name__}: give a "
                    + ("pydantic model or a function" if member == "settings" else "function")
                    + " (or its import path)")
    if isinstance(d.order, bool) or not isinstance(d.order, int):
        return f"`order` is {d.order!r}: a whole number"
    if d.severity not in SEVERITIES:
        near = closest(str(d.severity), SEVERITIES)
        return (f"`severity` is {d.severity!r}: use one of {', '.join(SEVERITIES)}"
                + (f" (did you mean `{near}`?)" if near else ""))
    if d.profiles is not None and d.profiles not in PROFILE_NEEDS:
        return (f"`profiles` is {d.profiles!r}: None, or what it reads of the load profiles, "
                + " or ".join(repr(n) for n in PROFILE_NEEDS))
    if not isinstance(d.explains, tuple) or not all(
        isinstance(e, Explains) and isinstance(e.metrics, tuple) for e in d.explains
    ):
        return (f"`explains` is {d.explains!r}: a tuple of `Explains(detector, metrics)`, "
                'e.g. `(Explains("distribution", ("null_rate",)),)`')
    return None


def check(ep: EntryPoint) -> Detector:
    """Load one entry point and check it registers a valid `Detector`; DetectorPluginError
    naming the entry point and the offending member otherwise."""
    try:
        value: Any = ep.load()
    except Exception as exc:  # a plugin can fail to import in any way
        raise DetectorPluginError(
            f"Detector plugin {_where(ep)} cannot be imported: {type(exc).__name__}: {exc}. "
            "Fix or reinstall that package, or uninstall it."
        ) from None
    if not isinstance(value, Detector):
        raise DetectorPluginError(
            f"Detector plugin {_where(ep)} is a `{type(value).__name__}`, not a "
            "`dlt_contract_ops.Detector`: point the entry point at a `Detector(...)` value."
        )
    if value.name != ep.name:
        raise DetectorPluginError(
            f"Detector plugin {_where(ep)} registers a Detector named `{value.name}`: the "
            "entry point's name and `Detector.name` must be the same."
        )
    problem = _member_problem(value)
    if problem:
        raise DetectorPluginError(f"Detector plugin {_where(ep)}: {problem}.")
    return value


def register(eps: Iterable[EntryPoint]) -> tuple[Detector, ...]:
    """Every entry point checked (`check`), duplicates refused first, in output order
    (`order`, then name)."""
    entries = list(eps)
    seen: dict[str, EntryPoint] = {}
    for ep in entries:
        if ep.name in seen:
            raise DetectorPluginError(
                f"Detector `{ep.name}` is registered twice: by {_where(seen[ep.name])} and by "
                f"{_where(ep)}. Uninstall one of them."
            )
        seen[ep.name] = ep
    return tuple(sorted((check(ep) for ep in entries), key=lambda d: (d.order, d.name)))


@cache
def registered_detectors() -> tuple[Detector, ...]:
    """Every registered detector, validated, in output order.

    >>> [d.name for d in registered_detectors()][:5]
    ['additive', 'removal', 'missing', 'type', 'rename']
    """
    found = register(entry_points(group=DETECTOR_GROUP))
    if not any(d.name == "additive" for d in found):
        # an install whose metadata predates the group (an old editable install) has none
        raise DetectorPluginError(
            f"The built-in detectors are not registered in the entry-point group "
            f"`{DETECTOR_GROUP}`: the installed metadata of dlt-contract-ops is out of date. "
            "Reinstall it (`pip install -e .`, or `make install` in a checkout)."
        )
    return found


def clear_cache() -> None:
    """Forget the registered detectors (after installing a plugin in the same process), and
    the entry points read for every group (the settings check reads the detectors' tables
    through them)."""
    from dlt_contract_ops.registry import clear_cache as clear_entry_points

    registered_detectors.cache_clear()
    clear_entry_points()


def detector_names() -> tuple[str, ...]:
    """Every registered detector name, in output order.

    >>> detector_names()[:8]
    ('additive', 'removal', 'missing', 'type', 'rename', 'gate', 'contract', 'distribution')
    """
    return tuple(d.name for d in registered_detectors())


def get(name: str) -> Detector:
    """The detector registered as `name`; KeyError naming the registered ones."""
    for d in registered_detectors():
        if d.name == name:
            return d
    raise KeyError(f"unknown detector {name!r}; registered: {', '.join(detector_names())}")


def checked(result: ReconcileResult) -> ReconcileResult:
    """`result` when its detector and every finding's `drift_type` are registered names; else
    a ValueError naming the unknown one and the registered ones."""
    names = detector_names()
    for name in (result.detector, *(f.drift_type for f in result.findings)):
        if name not in names:
            raise ValueError(f"unknown detector {name!r}; registered: {', '.join(names)}")
    return result


def selected(include: Iterable[str] = ()) -> tuple[str, ...]:
    """The default detectors plus those whose flag (or name) is in `include`, in registry
    order.

    >>> selected()[:4]
    ('additive', 'missing', 'type', 'rename')
    >>> selected({"removal"})[:5]
    ('additive', 'removal', 'missing', 'type', 'rename')
    """
    chosen = set(include)
    return tuple(
        d.name
        for d in registered_detectors()
        if d.reconcile and (d.default or d.name in chosen or d.flag in chosen)
    )


def reconcile_detectors() -> tuple[str, ...]:
    """Every detector a reconcile may run (default or behind a flag), in order."""
    return tuple(d.name for d in registered_detectors() if d.reconcile)
