"""The checks behind `dlt-contract-ops validate`: every problem of a project, each with the
rule it breaks, the file (or environment variable) and key it sits in, and what to do.

Rules:

- `config_keys`: unknown keys in `[contract_ops]`, `[contract_ops.dedup]` and
  `[sources.<name>.contract_ops]`, and values of the wrong type.
- `source_importable`: each declared source's `ref` imports and builds.
- `source_has_models`: each declared source has at least one resource with a Pydantic model.
- `destination_adapter`: each source's destination resolves and a reconciler adapter is
  registered for it (no connection is opened).
- `alert_sink_registered`: every name in `alert_sinks` is registered and its options
  construct the sink (a typo'd option, a secret in config.toml, Sentry without its extra);
  every `[contract_ops.alert_sink.<name>]` table names a registered sink.

Nothing is emitted and no destination is queried.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dlt_contract_ops.config import PROJECT_KEYS, SOURCE_KEYS, ProjectSettings
from dlt_contract_ops.errors import ContractOpsError
from dlt_contract_ops.sinks.dedup import DEDUP_KEYS, DEDUP_SECTION
from dlt_contract_ops.sinks.options import SINK_SECTION

NOT_SET = "(not set)"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the project."""

    rule: str
    file: str
    key: str
    message: str


@dataclass
class Report:
    """Everything `validate` found."""

    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    sinks: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, rule: str, key: str, message: str, file: str | None = None) -> None:
        from dlt_contract_ops.sinks.options import locate

        self.problems.append(Problem(rule, file or locate(key) or NOT_SET, key, message))

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "sources": self.sources,
            "alert_sinks": self.sinks,
            "problems": [p.__dict__ for p in self.problems],
            "notes": self.notes,
        }


def _unknown(
    report: Report, table: Mapping[str, Any], allowed: frozenset[str], prefix: str, origin: str
) -> None:
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
            hint = f" Did you mean `{close[0]}`?" if close else ""
            report.add(
                "config_keys",
                f"{prefix}.{key}",
                f"Unknown key `{key}` in `[{prefix}]`.{hint} Known keys: "
                f"{', '.join(sorted(allowed))}.",
                origin,
            )


def check_config_keys(report: Report) -> None:
    """Unknown keys, each with the file that holds it."""
    from dlt_contract_ops.sinks.options import provider_files, toml_providers

    for provider, _doc in toml_providers():
        for origin, doc in provider_files(provider):
            project = doc.get("contract_ops")
            if isinstance(project, Mapping):
                _unknown(report, project, PROJECT_KEYS, "contract_ops", origin)
                dedup = project.get("dedup")
                if isinstance(dedup, Mapping):
                    _unknown(report, dedup, DEDUP_KEYS, DEDUP_SECTION, origin)
            sources = doc.get("sources")
            if isinstance(sources, Mapping):
                for name, table in sources.items():
                    sect = table.get("contract_ops") if isinstance(table, Mapping) else None
                    if isinstance(sect, Mapping):
                        prefix = f"sources.{name}.contract_ops"
                        _unknown(report, sect, SOURCE_KEYS, prefix, origin)


def load_project(report: Report) -> ProjectSettings:
    """The project settings, or the defaults with a problem when they cannot be read."""
    from dlt_contract_ops.config import load_project_settings
    from dlt_contract_ops.sinks.dedup import load_dedup_settings

    try:
        load_dedup_settings()
    except ContractOpsError as exc:
        report.add("config_keys", DEDUP_SECTION, str(exc))
    try:
        return load_project_settings()
    except ContractOpsError as exc:
        if not any(p.key.startswith("contract_ops.") for p in report.problems):
            report.add("config_keys", "contract_ops", str(exc))
        return ProjectSettings()


def check_source(report: Report, name: str, project: ProjectSettings, project_dir: str) -> None:
    """`source_importable`, `source_has_models` and `destination_adapter` for one source."""
    from dlt_contract_ops.config import load_source_settings
    from dlt_contract_ops.destinations.connect import adapter_class, resolve_target
    from dlt_contract_ops.discovery import build_source

    base = f"sources.{name}.contract_ops"
    try:
        settings = load_source_settings(name, project)
    except ContractOpsError as exc:
        if not any(p.key.startswith(base + ".") for p in report.problems):
            report.add("source_importable", f"{base}.ref", str(exc))
        return
    try:
        built = build_source(name, settings.ref, project_dir)
    except ContractOpsError as exc:
        report.add("source_importable", f"{base}.ref", str(exc))
        return
    if not built.tables:
        why = "; ".join(built.notes) or "it has no resources"
        report.add(
            "source_has_models",
            f"{base}.ref",
            f"Source `{name}` (`{settings.ref}`) has no resource with a Pydantic `columns=` "
            f"model, so there is nothing to reconcile ({why}). Pass `columns=YourModel` to "
            "`@dlt.resource`.",
        )
    try:
        target = resolve_target(
            name,
            settings.pipeline_name or name,
            settings.destination,
            settings.dataset_name,
            project_dir,
        )
        adapter_class(target.destination_type)
    except ContractOpsError as exc:
        report.add("destination_adapter", f"{base}.destination", str(exc))
    except Exception as exc:  # dlt raises its own types for an unknown destination reference
        report.add(
            "destination_adapter",
            f"{base}.destination",
            f"Destination `{settings.destination}` of source `{name}` cannot be resolved: {exc}",
        )


def check_sinks(report: Report, project: ProjectSettings) -> None:
    """`alert_sink_registered`: names registered, options construct the sink."""
    from dlt_contract_ops.registry import SINK_GROUP, closest, registered
    from dlt_contract_ops.sinks.loader import SinkOptionsError, load_sink, unknown_sink_message
    from dlt_contract_ops.sinks.options import (
        SinkOptionError,
        configured_sink_tables,
        read_sink_options,
    )

    known = registered(SINK_GROUP)
    report.sinks = list(project.alert_sinks)
    list_key = "contract_ops.alert_sinks"
    for i, name in enumerate(project.alert_sinks):
        if name not in known:
            report.add("alert_sink_registered", f"{list_key}[{i}]", unknown_sink_message(name),
                       _locate_or_default(list_key))
            continue
        table = f"{SINK_SECTION}.{name}"
        try:
            sink = load_sink(name)
        except SinkOptionsError as exc:
            for p in exc.problems:
                report.add("alert_sink_registered", f"{table}.{p.option}", p.message, p.origin)
            continue
        except SinkOptionError as exc:
            set_at = read_sink_options(name).get(exc.option)
            report.add("alert_sink_registered", f"{table}.{exc.option}", str(exc),
                       set_at.origin if set_at else None)
            continue
        except ContractOpsError as exc:
            report.add("alert_sink_registered", table, str(exc),
                       _locate_or_default(table, _locate_or_default(list_key)))
            continue
        close = getattr(sink, "close", None)
        if callable(close):
            close()
    for name, origin in sorted(configured_sink_tables().items()):
        table = f"{SINK_SECTION}.{name}"
        if name not in known:
            hint = closest(name, sorted(known))
            report.add(
                "alert_sink_registered",
                table,
                f"`[{table}]` configures alert sink '{name}', which is not registered."
                + (f" Did you mean '{hint}'?" if hint else "")
                + f" Registered sinks: {', '.join(sorted(known)) or 'none'}.",
                origin,
            )
        elif name not in project.alert_sinks:
            report.notes.append(
                f"`[{table}]` ({origin}) is set but '{name}' is not in `alert_sinks`: unused."
            )


def _locate_or_default(key: str, default: str = "(default)") -> str:
    from dlt_contract_ops.sinks.options import locate

    return locate(key) or default


def validate_project(project_dir: str | None = None) -> Report:
    """Run every check in the project at `project_dir` (default: the current directory)."""
    from dlt_contract_ops.config import declared_sources, project_context

    report = Report()
    with project_context(project_dir) as pdir:
        check_config_keys(report)
        project = load_project(report)
        report.sources = declared_sources()
        if not report.sources:
            report.notes.append(
                "no source is declared: add a `[sources.<name>.contract_ops]` table with "
                '`ref = "module:attribute"` to .dlt/config.toml'
            )
        for name in report.sources:
            check_source(report, name, project, pdir)
        check_sinks(report, project)
    return report
