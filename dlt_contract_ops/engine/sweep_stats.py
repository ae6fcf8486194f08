"""What a sweep did, for whoever asks: queries per kind, their time, sources built.

The seam for the query budget tests and `make bench`: instead of wrapping `Sweep.close`, a
caller observes the sweeps that close inside a `with` block (this thread or task only):

>>> from dlt_contract_ops.engine.sweep_stats import observe_sweeps
>>> with observe_sweeps() as seen:
...     pass  # run(...) here
>>> seen
[]
"""

from __future__ import annotations

import contextvars
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class SweepStats:
    """Counters of one sweep, read just before its adapters close."""

    queries: Counter[str] = field(default_factory=Counter)
    query_seconds: Counter[str] = field(default_factory=Counter)
    sources_built: int = 0
    #: where each adapter read (a DuckDB file, a host), as the adapter names it
    locations: set[str] = field(default_factory=set)
    #: data files the adapters scanned (path -> scans), where an adapter reads files
    #: (`FilesystemAdapter.files_read`)
    files_read: Counter[str] = field(default_factory=Counter)


_OBSERVERS: contextvars.ContextVar[tuple[list[SweepStats], ...]] = contextvars.ContextVar(
    "dlt_contract_ops_sweep_observers", default=()
)


@contextmanager
def observe_sweeps() -> Iterator[list[SweepStats]]:
    """Collect the `SweepStats` of every sweep that closes inside the block, in order."""
    seen: list[SweepStats] = []
    token = _OBSERVERS.set((*_OBSERVERS.get(), seen))
    try:
        yield seen
    finally:
        _OBSERVERS.reset(token)


def observed() -> bool:
    """Whether anyone observes sweeps here (else a sweep skips gathering its stats)."""
    return bool(_OBSERVERS.get())


def record(stats: SweepStats) -> None:
    """Hand one closing sweep's stats to every observer."""
    for seen in _OBSERVERS.get():
        seen.append(stats)
