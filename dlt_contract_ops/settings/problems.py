"""What is wrong with the configuration tables, each problem naming the file and the key.

One schema of the tables (which keys each may hold, which sub-tables it has) drives the
unknown-key check of `reconcile` (fails on the table it reads), and of `validate` (lists all).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from dlt_contract_ops.errors import ConfigError, closest, did_you_mean
from dlt_contract_ops.settings.files import dig, env_name, toml_files
from dlt_contract_ops.settings.keys import unknown_key_messages
from dlt_contract_ops.settings.specs import (
    DEDUP_KEYS,
    DISTRIBUTION_KEYS,
    GATE_KEYS,
    INFER_KEYS,
    PROJECT_KEYS,
    REMOVAL_KEYS,
    RENAME_KEYS,
    SOURCE_KEYS,
)

PROJECT_SECTION = "contract_ops"

#: sub-tables per table kind: name -> allowed keys (None: checked by its owner, the sinks)
_PROJECT_SUBTABLES: dict[str, frozenset[str] | None] = {
    "removal": REMOVAL_KEYS,
    "dedup": DEDUP_KEYS,
    "gate": GATE_KEYS,
    "rename": RENAME_KEYS,
    "distribution": DISTRIBUTION_KEYS,
    "infer": INFER_KEYS,
    "alert_sink": None,
}
#: `models`: resource names, read as bindings (`settings.values.as_bindings`)
_SOURCE_SUBTABLES: dict[str, frozenset[str] | None] = {
    "removal": REMOVAL_KEYS, "gate": GATE_KEYS, "distribution": DISTRIBUTION_KEYS,
    "models": None,
}


def _detector_tables() -> dict[str, frozenset[str]]:
    """`[contract_ops.<detector>]` of each registered detector with a settings model (a
    plugin's): name -> its keys. The built-ins' tables are in the specs above."""
    # read through the entry-point group, not the detector registry: settings sit below the
    # detectors (the registry validates each entry when the run loads it)
    from dlt_contract_ops.registry import DETECTOR_GROUP, load, registered
    from dlt_contract_ops.settings.detectors import model_keys

    tables = {}
    for name in registered(DETECTOR_GROUP):
        try:
            d = load(DETECTOR_GROUP, name)
        except Exception:  # the registry reports it, naming the distribution and entry point
            continue
        if not (hasattr(d, "name") and hasattr(d, "settings")):
            continue  # not a Detector: the registry reports it the same way
        keys = model_keys(d)
        if keys is not None:
            if d.name in PROJECT_KEYS | SOURCE_KEYS:
                raise ConfigError(
                    f"Detector `{d.name}` has a settings model, but `[{PROJECT_SECTION}] "
                    f"{d.name}` is a setting of dlt-contract-ops already: rename the detector."
                )
            tables[d.name] = keys
    return tables


def _schema(section: str) -> tuple[frozenset[str], dict[str, frozenset[str] | None]]:
    keys, subtables = (
        (PROJECT_KEYS, _PROJECT_SUBTABLES) if section == PROJECT_SECTION
        else (SOURCE_KEYS, _SOURCE_SUBTABLES)
    )
    plugins = _detector_tables()
    return keys | frozenset(plugins), {**subtables, **plugins}


def table_problems(section: str) -> list[str]:
    """Unknown keys in `[section]` and its known sub-tables, in every file that sets them;
    and the severity table's unknown detectors and severities (`settings.severity`)."""
    keys, subtables = _schema(section)
    problems: list[str] = []
    for f in toml_files():
        found, table = dig(f.doc, section)
        if not found or not isinstance(table, Mapping):
            continue
        problems += unknown_key_messages(table, keys, section, f.shown)
        for sub, allowed in subtables.items():
            inner = table.get(sub)
            if allowed is not None and isinstance(inner, Mapping):
                problems += unknown_key_messages(inner, allowed, f"{section}.{sub}", f.shown)
    from dlt_contract_ops.settings.severity import severity_problems

    return problems + severity_problems(section)


def _near(name: str) -> bool:
    folded = name.replace("-", "_").lower()
    return name != PROJECT_SECTION and closest(folded, [PROJECT_SECTION], cutoff=0.8) is not None


def misplaced_sections() -> list[str]:
    """Tables that look like ours but are misspelled: `[contract_op]`,
    `[sources.X.contractops]`. Nothing in them is read."""
    out: list[str] = []
    for f in toml_files():
        for key, value in f.doc.items():
            if isinstance(value, Mapping) and _near(str(key)):
                out.append(
                    f"Section `[{key}]` in {f.shown} is not read. Did you mean "
                    f"`[{PROJECT_SECTION}]`?"
                )
        for key, value in f.doc.items():
            # `[source.X.contract_ops]`: the sources table misspelled (dlt reads `sources`)
            if key == "sources" or not isinstance(value, Mapping):
                continue
            if closest(str(key).lower(), ["sources"], cutoff=0.8) is None:
                continue
            for name, table in value.items():
                if isinstance(table, Mapping) and any(
                    isinstance(v, Mapping) and (k == PROJECT_SECTION or _near(str(k)))
                    for k, v in table.items()
                ):
                    out.append(
                        f"Section `[{key}.{name}.{PROJECT_SECTION}]` in {f.shown} is not read. "
                        f"Did you mean `[sources.{name}.{PROJECT_SECTION}]`?"
                    )
        sources = f.doc.get("sources")
        if isinstance(sources, Mapping):
            for name, table in sources.items():
                if not isinstance(table, Mapping):
                    continue
                for key, value in table.items():
                    if isinstance(value, Mapping) and _near(str(key)):
                        out.append(
                            f"Section `[sources.{name}.{key}]` in {f.shown} is not read. Did you "
                            f"mean `[sources.{name}.{PROJECT_SECTION}]`?"
                        )
    return out


def no_source_message(config_file: str) -> str:
    """What to say when no source is declared (`reconcile` refuses, `validate` fails): where
    to declare one, and the misspelled sections that may have been meant."""
    misplaced = misplaced_sections()
    return (
        "No source is declared, so there is nothing to reconcile: add a "
        f'`[sources.<name>.{PROJECT_SECTION}]` table with `ref = "module:attribute"` to '
        f"`{config_file}`" + (f" ({'; '.join(misplaced)})" if misplaced else "") + "."
    )


def config_problems(sources: list[str]) -> list[str]:
    """Every unknown key and misspelled section of the project, for `validate`."""
    problems = table_problems(PROJECT_SECTION)
    for name in sources:
        problems += table_problems(f"sources.{name}.{PROJECT_SECTION}")
    return problems + misplaced_sections()


def raise_problems(problems: list[str]) -> None:
    if problems:
        raise ConfigError(" ".join(problems))


def not_a_table(section: str) -> Any:
    """A message when `section` is set to something other than a table, else None; with
    the setting it was likely meant as (`alert_sink = ["webhook"]`: `alert_sinks`).

    >>> _meant("contract_ops.alert_sink")
    ' Did you mean `alert_sinks`?'
    """
    var = env_name(section)
    raw = os.environ.get(var)
    if raw is not None and not isinstance(_json_or_text(raw), Mapping):
        # the environment comes first: dlt would fail on it ("cannot be coerced into dict")
        return (f"`[{section}]` must be a table: environment variable `{var}` sets it to "
                f"{raw!r}." + (_meant(section, env=raw) or _what_goes_in(section)))
    for f in toml_files():
        found, value = dig(f.doc, section)
        if found and not isinstance(value, Mapping):
            return (f"`[{section}]` must be a table: {f.shown} sets it to {value!r}."
                    + (_meant(section) or _what_goes_in(section)))
    return None


def _what_goes_in(section: str) -> str:
    """What a table holds, where a line says it better than a near key (the severity table:
    a severity per detector)."""
    if section.rpartition(".")[2] == "severity":
        return (f' Name a detector\'s severity in it, e.g. `[{section}]` '
                '`additive = "error"`.')
    return ""


#: the sinks' options: read one environment variable each (`sinks.options`), never as a table
_SINK_TABLE = f"{PROJECT_SECTION}.alert_sink"
#: the tables read key by key, by name under the one above (`*`: any name, a sink's); a key
#: of a table read whole (`models`, a dict) or of no table is a leaf: `{}`
_Tree = Mapping[str, "_Tree"]


def _tree(section: str) -> dict[str, _Tree]:
    """The tables under `section` (`contract_ops` or `sources.<X>.contract_ops`) that dlt
    reads one variable a key: its sub-tables (a plugin detector's too) and the severity
    table; the sinks' table holds one table of options per sink."""
    _, subtables = _schema(section)
    tree: dict[str, _Tree] = {name: {} for name, keys in subtables.items() if keys is not None}
    tree["severity"] = {}
    if section == PROJECT_SECTION:
        tree["alert_sink"] = {"*": {}}
    return tree


def tables_of(section: str) -> list[str]:
    """`section` (`contract_ops` or `sources.<X>.contract_ops`) and every table under it that
    dlt reads key by key: what `not_a_table` checks, the project's and each source's alike.

    >>> "contract_ops.gate" in tables_of("contract_ops")
    True
    """
    return [section, *(f"{section}.{name}" for name in _tree(section))]


def _table_of(var: str) -> tuple[str, _Tree, list[str]] | None:
    """(dotted table, its tree, the names below it in `var`) when `var` is under one of our
    tables: `CONTRACT_OPS...` or `SOURCES__<X>__CONTRACT_OPS...`; else None."""
    parts = var.split("__")
    if parts[0] == PROJECT_SECTION.upper():
        return PROJECT_SECTION, {"": _tree(PROJECT_SECTION)}, ["", *parts[1:]]
    if len(parts) >= 3 and parts[0] == "SOURCES" and parts[1] and parts[2] == "CONTRACT_OPS":
        section = f"sources.{parts[1].lower()}.{PROJECT_SECTION}"
        return section, {"": _tree(section)}, ["", *parts[3:]]
    return None


def _examples(var: str, given: Any, tree: _Tree) -> list[str]:
    """The variables `given` (a table's value, as JSON) is set in, one a key, as
    `VAR__KEY=...` (a sub-table's keys one level down); `<KEY>` where it names none."""
    if not isinstance(given, Mapping) or not given:
        return [f"`{var}__{'<NAME>__' if '*' in tree else ''}<KEY>=...`"]
    out = []
    for key, value in given.items():
        name = f"{var}__{str(key).upper()}"
        sub = tree.get(str(key).lower(), tree.get("*"))
        out += [f"`{name}=...`"] if sub is None else _examples(name, value, sub)
    return out


def unread_table_variables() -> list[str]:
    """Environment variables under our tables that dlt does not read, each with what to write
    instead. dlt reads a table one variable a key (`CONTRACT_OPS__REMOVAL__RECENT_WINDOW`):
    a table set as one value (JSON: `CONTRACT_OPS__REMOVAL='{"recent_window": "1h"}'`, a
    source's `SOURCES__<X>__CONTRACT_OPS__DISTRIBUTION`, the sinks' options, one sink's) is
    ignored, and so is a key under a sink's option (an option is set whole): each would be a
    setting that silently does not hold. The values (a url, a dsn) may be secrets and are
    never shown. A table set to a value that is no table is `not_a_table`'s.

    >>> os.environ["CONTRACT_OPS__ALERT_SINK__WEBHOOK"] = '{"url": "https://x"}'
    >>> unread_table_variables()[0].rpartition(": ")[2]
    '`CONTRACT_OPS__ALERT_SINK__WEBHOOK__URL=...`.'
    >>> del os.environ["CONTRACT_OPS__ALERT_SINK__WEBHOOK"]
    """
    out = []
    sink_head = env_name(_SINK_TABLE)
    for var in sorted(os.environ):
        found = _table_of(var)
        if found is None:
            continue
        table, tree, names = found
        depth = 0  # how many of `names` are tables
        for name in names:
            sub = tree.get(name.lower(), tree.get("*"))
            if sub is None:
                break
            tree, depth = sub, depth + 1
            table = f"{table}.{name.lower()}" if name else table
        given = _json_or_text(os.environ[var])
        sink = table.startswith(_SINK_TABLE)
        if depth < len(names) - 1 and sink:  # a key under a sink's option
            name, option, *under = var[len(sink_head) + 2:].split("__")
            out.append(
                f"Environment variable `{var}` is not read: option `{option.lower()}` of alert "
                f"sink '{name.lower()}' is set whole, as JSON: `{sink_head}__{name}__{option}="
                f"""'{{"{'__'.join(under)}": "..."}}'`."""
            )
            continue
        named_sink = sink and table != _SINK_TABLE
        if depth < len(names) or not (isinstance(given, Mapping) or named_sink):
            continue  # a key; or a table set to no table: `not_a_table` says what was meant
        word, each = (
            ("option", f"{sink_head}__<NAME>__<KEY>") if sink else ("key", f"{var}__<KEY>")
        )
        out.append(
            f"Environment variable `{var}` sets `[{table}]` as one value, which is not read: "
            f"set each {word} in a variable of its own, `{each}`: "
            + ", ".join(_examples(var, given, tree)) + "."
        )
    return out


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _meant(section: str, *, env: str | None = None) -> str:
    """The closest setting of `[contract_ops]` that is not a table, for a sub-table set to
    a value (its name set where a near key was meant); for `env` (the value the environment
    gave the table), as its environment variable holding those names as a JSON list (the one
    way a list is written there).

    >>> print(_meant("contract_ops.alert_sink", env="logging, webhook"))
     Did you mean `CONTRACT_OPS__ALERT_SINKS='["logging", "webhook"]'`?
    """
    parent, _, name = section.rpartition(".")
    if parent != PROJECT_SECTION:
        return ""
    choices = PROJECT_KEYS - set(_PROJECT_SUBTABLES) - {name}
    if env is None:
        return did_you_mean(name, choices)
    meant = closest(name, choices)
    if meant is None:
        return ""
    given = _json_or_text(env)
    if isinstance(given, str):
        given = [p for p in re.split(r"[,\s]+", given) if p]
    example = _ENV_EXAMPLES.get(meant, "...")
    listed = isinstance(given, list) and given and all(isinstance(g, str) for g in given)
    if meant in _ENV_EXAMPLES and listed:
        example = f"'{json.dumps(given)}'"
    return f" Did you mean `{env_name(f'{parent}.{meant}')}={example}`?"


#: a value of each list setting as its environment variable holds it (JSON)
_ENV_EXAMPLES = {
    "alert_sinks": """'["logging", "webhook"]'""",
    "injected_columns": """'["ingested_by"]'""",
}
