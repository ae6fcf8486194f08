"""What a sharded sweep (`run(shard="2/3")`, `reconcile --shard 2/3`) adds to a sweep: the
shard read from its I/N spelling, and a source that could not be checked reported (paged)
by one shard only (`core.shard.Shard.owns_source`) while every shard still shows it.

Every shard that could not check its part of a source carries the error on its result (so
the task exits 1: the guard never goes quiet), and only the shard of the source name sends
it to the sinks: one failure, one page. The tables of a sharded sweep are cut in
`engine.context.Sweep`.
"""

from __future__ import annotations

from typing import Any

from dlt_contract_ops.core.shard import Shard
from dlt_contract_ops.errors import ConfigError
from dlt_contract_ops.model.findings import ReconcileResult

__all__ = ["UNSENT", "parse_shard", "reported_elsewhere"]


def parse_shard(shard: Shard | str | None) -> Shard | None:
    """`run(shard=...)` read (`"2/3"` or a Shard); ConfigError (exit 2 in the CLI), one line
    saying what a shard looks like, for one that is not I/N with 1 <= I <= N.

    >>> parse_shard("2/3"), parse_shard(None)
    (Shard(index=2, count=3), None)
    """
    try:
        return None if shard is None else Shard.parse(shard)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


class _Unsent:
    """Where a shard's error about a source another shard reports goes: nowhere (that shard
    sends it); the error stays on this shard's result."""

    def drift(self, finding: Any) -> None:
        pass

    def error(self, event: Any) -> None:
        pass


UNSENT = _Unsent()


def reported_elsewhere(shard: Shard | None, result: ReconcileResult) -> ReconcileResult:
    """`result` (a source this shard could not check) saying which shard sent the alert."""
    if result.error is None or shard is None:
        return result
    owner = shard.source_owner(result.source)
    return result.model_copy(update={"error": (
        f"{result.error} (shard {shard} could not check its tables of this source; "
        f"shard {owner} sends the alert)")})
