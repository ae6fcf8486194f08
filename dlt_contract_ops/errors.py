"""One exception tree for everything dlt-contract-ops raises on purpose.

Messages say what went wrong, where (file, key, table, column in backticks) and what to do.
"""

from __future__ import annotations


class ContractOpsError(Exception):
    """Base class of every error this package raises deliberately."""


class ConfigError(ContractOpsError):
    """The project configuration is invalid or incomplete (CLI exit code 2)."""


class UnknownSourceError(ContractOpsError):
    """A source name has no `[sources.<name>.contract_ops]` table."""

    def __init__(self, name: str, known: list[str]) -> None:
        hint = f" Declared sources: {', '.join(sorted(known))}." if known else ""
        super().__init__(
            f"Unknown source `{name}`: add a `[sources.{name}.contract_ops]` table with `ref = "
            f'"module:attribute"` to .dlt/config.toml.{hint}'
        )
        self.name = name


class SourceImportError(ContractOpsError):
    """The source's `ref` cannot be imported or built."""


class SourceConfigMissingError(SourceImportError):
    """The source's own configuration (an API token, say) cannot be resolved."""


class DestinationError(ContractOpsError):
    """The destination cannot be reached or queried."""


class UnsupportedDestinationError(DestinationError):
    """dlt supports the destination, but no reconciler adapter covers it ("core tier")."""


class UnsafeQueryError(ContractOpsError):
    """The renderer refused a statement that is not a read-only SELECT."""


class AlertSinkError(ContractOpsError):
    """An alert sink could not be found, loaded or constructed."""


class DeliveryError(ContractOpsError):
    """A sink could not deliver one event. The one delivery-failure signal: a synchronous sink
    raises it from `emit_drift`/`emit_error`; an asynchronous sink reports the findings it
    could not deliver from `undelivered()` after `flush`."""
