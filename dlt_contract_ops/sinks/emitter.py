"""Fan-out to the configured sinks: isolation, fallback, dry-run suppression, flush."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from dlt_contract_ops.errors import AlertSinkError
from dlt_contract_ops.findings import DriftFinding
from dlt_contract_ops.registry import SINK_GROUP, closest, load, registered
from dlt_contract_ops.sinks.base import AlertSink, ErrorEvent

log = logging.getLogger("dlt_contract_ops")

DEFAULT_FLUSH_TIMEOUT = 5.0


def load_sink(name: str, options: dict[str, Any] | None = None) -> AlertSink:
    """Construct the sink registered as `name` with `options`; AlertSinkError when impossible."""
    try:
        factory = load(SINK_GROUP, name)
    except KeyError:
        hint = closest(name, sorted(registered(SINK_GROUP)))
        raise AlertSinkError(
            f"Unknown alert sink '{name}'." + (f" Did you mean '{hint}'?" if hint else "")
        ) from None
    except ImportError as exc:
        raise AlertSinkError(
            f"Alert sink '{name}' cannot be imported: {exc}. Try "
            f"`pip install 'dlt-contract-ops[{name}]'`."
        ) from exc
    try:
        sink = factory(**(options or {}))
    except TypeError as exc:
        raise AlertSinkError(f"Alert sink '{name}' rejected its options: {exc}") from exc
    if not isinstance(sink, AlertSink):
        raise AlertSinkError(
            f"Alert sink '{name}' ({factory!r}) does not implement emit_drift, emit_error "
            "and flush."
        )
    return sink


class Emitter:
    """Sends every event to every sink; one failing sink never starves the others."""

    def __init__(self, sinks: Sequence[tuple[str, AlertSink]], *, dry_run: bool = False) -> None:
        self.sinks = list(sinks)
        self.dry_run = dry_run

    @classmethod
    def from_names(
        cls,
        names: Sequence[str],
        options: dict[str, dict[str, Any]] | None = None,
        *,
        dry_run: bool = False,
    ) -> Emitter:
        loaded: list[tuple[str, AlertSink]] = []
        for name in names:
            try:
                loaded.append((name, load_sink(name, (options or {}).get(name))))
            except AlertSinkError as exc:
                log.warning("alert sink '%s' dropped for this run: %s", name, exc)
        if names and not loaded:
            log.warning("every configured alert sink dropped: falling back to 'logging'")
            from dlt_contract_ops.sinks.logging_sink import LoggingSink

            loaded.append(("logging", LoggingSink()))
        return cls(loaded, dry_run=dry_run)

    def drift(self, finding: DriftFinding) -> None:
        if self.dry_run:
            return
        for name, sink in self.sinks:
            try:
                sink.emit_drift(finding)
            except Exception as exc:
                log.warning("alert sink '%s' failed on a drift event: %s", name, exc)

    def error(self, event: ErrorEvent) -> None:
        # The reconciler's own line is a WARNING without traceback: the sink owns the report,
        # so a logging->Sentry bridge on ERROR records does not report it twice.
        log.warning("reconciler error in source `%s`: %s", event.source, event.message)
        if self.dry_run:
            return
        for name, sink in self.sinks:
            try:
                sink.emit_error(event)
            except Exception as exc:
                log.warning("alert sink '%s' failed on an error event: %s", name, exc)

    def flush(self, timeout: float = DEFAULT_FLUSH_TIMEOUT) -> None:
        for name, sink in self.sinks:
            try:
                sink.flush(timeout)
            except Exception as exc:
                log.warning("alert sink '%s' failed to flush: %s", name, exc)
