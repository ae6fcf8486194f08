"""Configuration: one resolution path (dlt configspecs), one duration grammar, one
unknown-key helper, one reader of the project's TOML files."""

from dlt_contract_ops.settings.duration import parse_duration
from dlt_contract_ops.settings.files import project_context
from dlt_contract_ops.settings.project import (
    DedupSettings,
    ProjectSettings,
    RemovalSettings,
    SourceSettings,
    declared_sources,
    load_project_settings,
    load_source_settings,
)

__all__ = [
    "DedupSettings",
    "ProjectSettings",
    "RemovalSettings",
    "SourceSettings",
    "declared_sources",
    "load_project_settings",
    "load_source_settings",
    "parse_duration",
    "project_context",
]
