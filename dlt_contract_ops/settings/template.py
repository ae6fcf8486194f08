"""The commented `.dlt/config.toml` kept at the repository root: every `[contract_ops]` key
with its default, made from the specs (`settings.specs`: which keys) and the objects the code
reads them into (`ProjectSettings()` and the others: which defaults), so neither can drift from
the file unnoticed (tests/unit/test_config_template.py). Every line is commented out: dlt reads
that file whenever a process's working directory is the repository root (`make bench`), and it
must change nothing there.

Regenerate it with `python -m dlt_contract_ops.settings.template > .dlt/config.toml`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from dlt_contract_ops.settings.specs import ProjectSpec

#: the text after `# ` that marks a key shown with an example value, not its default
EXAMPLE = "example;"
#: keys whose default is "unset": (an example value, what happens when it is unset)
UNSET: dict[str, tuple[Any, str]] = {
    "load_timestamp_column": (
        "loaded_at", "unset: `[dlt_ops] load_timestamp_column` when set, else no such column"),
    "profile_store": ("profiles.duckdb", "unset: <dlt data dir>/contract_ops/profiles.duckdb"),
    "removal.profiles_min_rows": (0, "unset: the destination's block (DuckDB: a row group)"),
    "dedup.state_file": (
        "alert_state.json",
        "unset: <dlt data dir>/contract_ops/alert_state/<project>-<hash>.json"),
    "gate.quarantine_dir": ("quarantine", "unset: <dlt data dir>/contract_ops/quarantine"),
    "gate.contracts_dir": ("contracts", "unset: ./contracts"),
}
#: keys holding a duration, shown as one (`"5m"`) rather than as seconds
_DURATION_SUFFIXES = ("_timeout", "_window", "_retention", "_after")
HEADER = """\
# dlt-contract-ops: every `[contract_ops]` setting with its default, all commented out, so
# this file changes nothing. Copy a line into your project's .dlt/config.toml and edit it.
# What each key means: docs/configuration.md. Secrets (sink URLs and DSNs, destination
# credentials) go in .dlt/secrets.toml: see .dlt/secrets.toml.example.
# Generated from dlt_contract_ops/settings (python -m dlt_contract_ops.settings.template);
# tests/unit/test_config_template.py fails when it and the code disagree.
"""
#: the sinks' option tables: a table of tables, no defaults (see docs/sinks.md)
SINK_TABLES = """\
# [contract_ops.alert_sink.<name>]   # options of one sink, e.g.:
# [contract_ops.alert_sink.webhook]
# format = "slack"   # example; the url is a secret: .dlt/secrets.toml
# [contract_ops.alert_sink.sentry]
# environment = "prod"   # example; the dsn is a secret: .dlt/secrets.toml
"""

#: the severity table: detector names, no defaults (a detector's own is its default)
SEVERITY_TABLE = """\
# [contract_ops.severity]   # a detector's severity over its default (docs/configuration.md)
# additive = "error"   # example; per source: [sources.<name>.contract_ops.severity]
"""
#: `[contract_ops]` keys that are tables of their own, shown by the texts above
_OWN_TABLES = ("alert_sink", "severity")


def _subtables(spec: type[Any]) -> dict[str, type[Any]]:
    """The embedded specs of `spec` (its sub-tables), by key."""
    from dlt.common.configuration.specs import BaseConfiguration

    return {k: hint for k, hint in spec.get_resolvable_fields().items()
            if isinstance(hint, type) and issubclass(hint, BaseConfiguration)}


def tables() -> dict[str, list[str]]:
    """Table ("" for `[contract_ops]`, else the sub-table's key) -> its keys, in spec order.
    `alert_sink` (a table of tables) and `severity` are left out: `SINK_TABLES` and
    `SEVERITY_TABLE` show them."""
    subtables = _subtables(ProjectSpec)
    out = {"": [k for k in ProjectSpec.get_resolvable_fields()
                if k not in subtables and k not in _OWN_TABLES]}
    for key, spec in subtables.items():
        out[key] = list(spec.get_resolvable_fields())
    return out


def _default_objects() -> dict[str, tuple[Any, ...]]:
    """Where each table's defaults live in the code, by table."""
    from dlt_contract_ops.core.ingest import GatePolicy
    from dlt_contract_ops.settings.gate import GateSettings
    from dlt_contract_ops.settings.infer import (
        DEFAULT_CODE_SET_MAX_VALUES,
        DEFAULT_CODE_SET_MIN_ROWS,
    )
    from dlt_contract_ops.settings.project import ProjectSettings

    project = ProjectSettings()
    return {
        "": (project,),
        "removal": (project.removal,),
        "dedup": (project.dedup,),
        "rename": ({"min_confidence": project.rename_min_confidence},),
        "distribution": (project.distribution,),
        "gate": (GatePolicy(), GateSettings()),
        "infer": ({"code_set_max_values": DEFAULT_CODE_SET_MAX_VALUES,
                   "code_set_min_rows": DEFAULT_CODE_SET_MIN_ROWS},),
    }


def defaults() -> dict[str, dict[str, Any]]:
    """Table -> key -> the code's default (None: unset, see `UNSET`). LookupError naming the
    key for a key of the specs whose default this module cannot find."""
    objects = _default_objects()
    out: dict[str, dict[str, Any]] = {}
    for table, keys in tables().items():
        out[table] = {}
        for key in keys:
            found = [_get(obj, key) for obj in objects.get(table, ()) if _has(obj, key)]
            if not found:
                raise LookupError(
                    f"no default for `{_dotted(table, key)}`: add where it lives to "
                    "`settings.template._default_objects`"
                )
            out[table][key] = found[0]
    return out


def _has(obj: Any, key: str) -> bool:
    return key in obj if isinstance(obj, Mapping) else hasattr(obj, key)


def _get(obj: Any, key: str) -> Any:
    return obj[key] if isinstance(obj, Mapping) else getattr(obj, key)


def _dotted(table: str, key: str) -> str:
    return f"{table}.{key}" if table else key


def _span(seconds: float) -> str:
    """A duration as the settings write one: `"7d"`, `"6h"`, `"5m"`, `"30s"`."""
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("m", 60.0)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def _toml(key: str, value: Any) -> str:
    import tomlkit

    if isinstance(value, timedelta):
        value = _span(value.total_seconds())
    elif isinstance(value, float) and key.endswith(_DURATION_SUFFIXES):
        value = _span(value)
    elif isinstance(value, frozenset):
        value = sorted(value)
    elif isinstance(value, tuple):
        value = list(value)
    return str(tomlkit.item(value).as_string())


def config_template() -> str:
    """The text of the repository's `.dlt/config.toml`; LookupError when a key of the specs
    has neither a default in the code nor an `UNSET` entry."""
    lines = [HEADER]
    for table, values in defaults().items():
        lines.append(f"# [{'.'.join(['contract_ops', table] if table else ['contract_ops'])}]")
        for key, value in values.items():
            if value is None:
                dotted = _dotted(table, key)
                if dotted not in UNSET:
                    raise LookupError(f"`{dotted}` defaults to unset: add it to "
                                      "`settings.template.UNSET` with an example")
                example, unset = UNSET[dotted]
                lines.append(f"# {key} = {_toml(key, example)}   # {EXAMPLE} {unset}")
            else:
                lines.append(f"# {key} = {_toml(key, value)}")
        lines.append("")
    lines.append(SEVERITY_TABLE)
    lines.append(SINK_TABLES)
    return "\n".join(lines)


if __name__ == "__main__":
    print(config_template(), end="")
