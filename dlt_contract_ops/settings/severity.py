"""The severity tables: `detector = "severity"` for the project, and per source over it.

    [contract_ops.severity]
    additive = "error"        # every source
    [sources.shop.contract_ops.severity]
    distribution = "info"     # source `shop` only

Each key is read through dlt's providers at exactly its table, so
`CONTRACT_OPS__SEVERITY__ADDITIVE=error` (or `SOURCES__SHOP__CONTRACT_OPS__SEVERITY__...`)
overrides the TOML as every other setting. A key that names no registered detector, or a
value that is no severity, is one line naming the table and file, with a did-you-mean where
one fits: `reconcile` refuses it (exit 2) before anything is alerted and `validate` lists it
(`settings.problems.table_problems`). A detector's own default is `Detector.severity`
(`detectors.severity` puts the two together).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dlt_contract_ops.errors import ConfigError, did_you_mean
from dlt_contract_ops.model.severity import SEVERITIES, Severity, as_severity
from dlt_contract_ops.settings.files import dig, memoized, toml_files
from dlt_contract_ops.settings.resolve import _exact_value
from dlt_contract_ops.settings.values import where

PROJECT_SECTION = "contract_ops"
#: the table's name under `[contract_ops]` and `[sources.<X>.contract_ops]`
TABLE = "severity"


def _detectors() -> list[str]:
    """Every registered detector's name, read through the entry-point group (settings sit
    below the detector registry, which validates each entry when a run loads it)."""
    from dlt_contract_ops.registry import DETECTOR_GROUP, registered

    return sorted(registered(DETECTOR_GROUP))


def _value_problem(key: str, value: Any) -> str | None:
    """What is wrong with `value` as a severity, naming `key` where it is set; else None.

    >>> _value_problem("contract_ops.severity.additive", "error") is None
    True
    """
    try:
        as_severity(value)
    except ValueError:
        return (f"{where(key)} is {value!r}: a severity is one of {', '.join(SEVERITIES)}."
                + did_you_mean(str(value).lower(), SEVERITIES))
    return None


def _read(sections: tuple[str, ...]) -> tuple[dict[str, Severity], list[str]]:
    """Each detector's severity set at exactly `sections`, and what is wrong with them."""
    values: dict[str, Severity] = {}
    problems: list[str] = []
    for name in _detectors():
        value = _exact_value(name, Any, sections)
        if value is None:
            continue
        problem = _value_problem(".".join((*sections, name)), value)
        if problem:
            problems.append(problem)
        else:
            values[name] = as_severity(value)
    return values, problems


def _table(sections: tuple[str, ...]) -> dict[str, Severity]:
    """`_read`, a problem being a ConfigError; once per project context."""

    def read() -> dict[str, Severity]:
        values, problems = _read(sections)
        if problems:
            raise ConfigError(" ".join(problems))
        return values

    return memoized(("severity", sections), read)


def severity_overrides(source: str) -> dict[str, Severity]:
    """Detector -> severity for `source`: `[sources.<source>.contract_ops.severity]` over
    `[contract_ops.severity]`; a detector neither names is absent (its default holds).
    ConfigError on a value that is no severity."""
    project = _table((PROJECT_SECTION, TABLE))
    own = _table(("sources", source, PROJECT_SECTION, TABLE))
    return {**project, **own}


def severity_problems(section: str) -> list[str]:
    """What is wrong with `[<section>.severity]` (`section`: `contract_ops` or
    `sources.<X>.contract_ops`), one line each: an unknown detector (in every file that
    names one), a value that is no severity (wherever it is set). A table that is no table is
    `settings.problems.not_a_table`'s, as every table's."""
    names = _detectors()
    dotted = f"{section}.{TABLE}"
    problems: list[str] = []
    for f in toml_files():
        found, table = dig(f.doc, dotted)
        if not found or not isinstance(table, Mapping):
            continue
        problems += [
            f"Unknown detector `{key}` in `[{dotted}]` ({f.shown})."
            + (did_you_mean(str(key), names) or f" Registered detectors: {', '.join(names)}.")
            for key in table if key not in names
        ]
    problems += _read(tuple(dotted.split(".")))[1]
    return problems


def check_severity_tables(sources: Iterable[str]) -> None:
    """Every problem of the project's table and of `sources`' tables as one ConfigError,
    before a sweep alerts anything (a mistake in source B's table must not wait until
    source A was paged)."""
    sections = [PROJECT_SECTION, *(f"sources.{s}.{PROJECT_SECTION}" for s in sources)]
    problems = [p for section in sections for p in severity_problems(section)]
    if problems:
        raise ConfigError(" ".join(dict.fromkeys(problems)))
