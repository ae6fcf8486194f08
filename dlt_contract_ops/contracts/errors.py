"""Errors of the contracts feature. All are configuration errors: the CLI exits 2 on them."""

from __future__ import annotations

from dlt_contract_ops.errors import ConfigError


class DeclarationError(ConfigError):
    """A model's semantic declaration is invalid (a key that names no field, say)."""


class SnapshotError(ConfigError):
    """A snapshot file or folder is missing, malformed, or contradicts a released one."""


class WaiverError(ConfigError):
    """A waiver file is malformed."""
