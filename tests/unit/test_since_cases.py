"""What the report says of one removal finding since the recorded sweeps, case by case: each
finding is compared with the last sweep that ran its detector over its table, and resolved by
the alert lifecycle's own rule (`Swept.resolves`) over what the report's run checked. A line
of an older version, which does not name its detectors, counts as running every detector: a
missing record never makes a finding resolved. (The same on real loads, through the command
line: `tests/formats/test_since_detectors.py`.)"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from dlt_contract_ops.core.history import Sweep, summarize
from dlt_contract_ops.engine.report import since_last_sweep
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.sinks.lifecycle import Swept

T0 = datetime(2026, 12, 6, 2, tzinfo=timezone.utc)
X = DriftFinding(drift_type="removal", source="s", resource="t", table="t", columns=["c"])
KNOWN = {X.id: {"source": "s", "table": "t", "detector": "removal", "columns": ["c"]}}
NIGHTLY = ("additive", "removal")
HOURLY = ("additive",)
OLD = None  # a line of an older version: it names no detector

#: the report's run looked at the table for both detectors
BOTH = frozenset({("s", "additive", "t"), ("s", "removal", "t")})


Line = tuple[bool, tuple[str, ...] | None] | tuple[bool, tuple[str, ...] | None, str]


def _sweeps(*lines: Line) -> list[Sweep]:
    """One sweep an hour, oldest first: (whether it saw X, the detectors its line names[, the
    one source it checked, `s` unless said])."""
    return [Sweep(T0 + timedelta(hours=n), (X.id,) if line[0] else (),
                  sources=(line[2] if len(line) > 2 else "s",), detectors=line[1])
            for n, line in enumerate(lines)]


def _word(sweeps: list[Sweep], found: bool, looked: frozenset[tuple[str, str, str]]) -> str:
    """What the report calls X: new, reopened, resolved, unswept, or nothing."""
    results = [ReconcileResult(source="s", detector="removal", findings=[X] if found else [])]
    history = summarize(sweeps, sweeps[-1].at + timedelta(hours=1))
    run = Swept(looked, frozenset({X.id} if found else ()))
    since = since_last_sweep(results, history, sweeps, KNOWN, run)
    words = [w for w in ("new", "reopened", "resolved", "unswept")
             if any(getattr(f, "id", None) == X.id for f in getattr(since, w))]
    assert len(words) <= 1, words
    return words[0] if words else "nothing"


@pytest.mark.parametrize(
    ("case", "lines", "found", "looked", "word"),
    [
        ("the nightly saw it, the hourly ran no removal: still there",
         [(True, NIGHTLY), (False, HOURLY)], True, BOTH, "nothing"),
        ("the nightly saw it, the hourly ran no removal: gone now",
         [(True, NIGHTLY), (False, HOURLY)], False, BOTH, "resolved"),
        ("gone, but the report's run did not check removal there",
         [(True, NIGHTLY), (False, HOURLY)], False, frozenset({("s", "additive", "t")}),
         "nothing"),
        ("the last nightly had not seen it: resolved before, not since",
         [(True, NIGHTLY), (False, NIGHTLY), (False, HOURLY)], False, BOTH, "nothing"),
        ("the last nightly did not see it, an earlier one did: back again",
         [(True, NIGHTLY), (False, NIGHTLY), (False, HOURLY)], True, BOTH, "reopened"),
        ("the last nightly did not see it, none ever did: new",
         [(False, NIGHTLY), (False, HOURLY)], True, BOTH, "new"),
        ("no sweep ever ran removal: neither new nor resolved",
         [(False, HOURLY), (False, HOURLY)], True, BOTH, "unswept"),
        ("removal ran, never over this table (a source declared since): new",
         [(False, HOURLY), (False, NIGHTLY, "other")], True, BOTH, "new"),
        ("old lines: the one after the sighting counts as having looked",
         [(True, OLD), (False, OLD)], False, BOTH, "nothing"),
        ("an old line after a nightly's sighting counts as having looked",
         [(True, NIGHTLY), (False, OLD)], False, BOTH, "nothing"),
        ("an old line that saw it ran removal: an hourly after it says nothing",
         [(True, OLD), (False, HOURLY)], False, BOTH, "resolved"),
        ("old lines, found again after a line without it: back again, as before",
         [(True, OLD), (False, OLD)], True, BOTH, "reopened"),
    ],
)
def test_since_the_last_sweep_that_looked(
    case: str, lines: list[Line], found: bool,
    looked: frozenset[tuple[str, str, str]], word: str,
) -> None:
    assert _word(_sweeps(*lines), found, looked) == word, case


def test_previous_is_the_last_sweep_that_looked_at_what_the_run_checked() -> None:
    sweeps = _sweeps((True, NIGHTLY), (False, HOURLY))
    other = Sweep(T0 + timedelta(hours=5), (), sources=("elsewhere",), detectors=NIGHTLY)
    results = [ReconcileResult(source="s", detector="removal", findings=[X])]
    since = since_last_sweep(results, summarize(sweeps, T0), [*sweeps, other], KNOWN,
                             Swept(BOTH, frozenset({X.id})))
    assert since.previous == sweeps[-1].at
