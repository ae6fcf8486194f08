"""Policy checks on the contracts the models declare, before anything is released: every
numeric column declares a unit (one the unit table knows), every timestamp a time zone, every
categorical column its code set, every resource an owner. Pure: contracts in, findings out.

A rule's level is `error` (fails the lint), `warning` (reported) or `off`; the defaults are in
`LintRule`, `--severity RULE=LEVEL` overrides them.
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from dlt_contract_ops.contracts.model import ColumnContract, ResourceContract, member_label
from dlt_contract_ops.contracts.timezones import timezone_advice
from dlt_contract_ops.contracts.units import unit_advice
from dlt_contract_ops.errors import ConfigError, did_you_mean

Level = Literal["error", "warning", "off"]
LEVELS: tuple[Level, ...] = ("error", "warning", "off")

#: dlt data types that hold a measure
NUMERIC_TYPES = frozenset({"bigint", "double", "decimal", "wei"})
#: names that say a text column holds codes (fnmatch patterns on the landed name)
CATEGORICAL_NAMES = (
    "status", "*_status", "state", "*_state", "type", "*_type", "kind", "*_kind",
    "category", "*_category", "code", "*_code",
)
#: names that say a number is an identifier, not a measure
IDENTIFIER_NAMES = ("id", "*_id")


class LintRule(enum.Enum):
    """Every lint check: (id, what it found, default level, what to do)."""

    UNIT_MISSING = (
        "lint.unit_missing", "numeric column declares no unit", "error",
        'declare it: `Annotated[float, Semantics(unit="USD")]` (`unit="1"` for a pure number)',
    )
    UNIT_UNKNOWN = (
        "lint.unit_unknown", "unit is not in the unit table", "warning",
        "write it as the table spells it (`m`, `kg`, `USD`, ...) or as a custom unit in braces, "
        "UCUM style (`{seat}`); until then it is compared by its exact text",
    )
    TIMEZONE_MISSING = (
        "lint.timezone_missing", "timestamp declares no time zone", "error",
        'declare it: `Annotated[datetime, Semantics(timezone="UTC")]`',
    )
    TIMEZONE_UNKNOWN = (
        "lint.timezone_unknown", "time zone is not an IANA name, a fixed offset or `local`",
        "warning",
        "write an IANA name (`UTC`, `Europe/Berlin`), a fixed offset (`+05:30`) or `local` for "
        "a wall-clock time in no promised zone; until then it is compared by its exact text",
    )
    CODES_MISSING = (
        "lint.codes_missing", "categorical column declares no code set", "error",
        'declare it: `Literal["paid", "pending"]`, an `Enum`, `Semantics(categories=...)`, or '
        "`Semantics(category_pattern=...)` for an open vocabulary",
    )
    OWNER_MISSING = (
        "lint.owner_missing", "resource declares no owner", "warning",
        'declare it: `@TableSemantics(owner="Order Platform")`',
    )

    def __init__(self, rule_id: str, title: str, default: Level, fix: str) -> None:
        self.rule_id = rule_id
        self.title = title
        self.default = default
        self.fix = fix

    @classmethod
    def by_id(cls, rule_id: str) -> LintRule | None:
        return next((r for r in cls if r.rule_id == rule_id), None)


@dataclass(frozen=True)
class LintFinding:
    """One resource or column that breaks one rule, at the rule's configured level; `advice`
    is what to do for this finding when it says more than the rule's `fix`."""

    rule: LintRule
    level: Level
    resource: str
    column: str | None = None
    advice: str | None = None

    @property
    def rule_id(self) -> str:
        return self.rule.rule_id

    @property
    def subject(self) -> str:
        return f"{self.resource}.{self.column}" if self.column is not None else self.resource

    @property
    def fix(self) -> str:
        return self.advice or self.rule.fix

    @property
    def message(self) -> str:
        return f"{self.rule.title}: {self.fix}"


@dataclass(frozen=True)
class LintReport:
    """Every finding of one source's lint; `failed` when any is at level `error`."""

    source: str
    findings: tuple[LintFinding, ...]
    resources: int
    columns: int
    levels: tuple[tuple[str, Level], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> tuple[LintFinding, ...]:
        return tuple(f for f in self.findings if f.level == "error")

    @property
    def warnings(self) -> tuple[LintFinding, ...]:
        return tuple(f for f in self.findings if f.level == "warning")

    @property
    def failed(self) -> bool:
        return bool(self.errors)

    @property
    def verdict(self) -> str:
        return "FAILED" if self.failed else "PASSED"


def parse_levels(settings: Iterable[str] | Mapping[str, str]) -> dict[LintRule, Level]:
    """`RULE=LEVEL` pairs (or a mapping) as levels by rule; a ConfigError names what is wrong.

    >>> parse_levels(["lint.owner_missing=error"])[LintRule.OWNER_MISSING]
    'error'
    """
    pairs: list[tuple[str, str]] = []
    if isinstance(settings, Mapping):
        pairs = [(str(k), str(v)) for k, v in settings.items()]
    else:
        for item in settings:
            rule_id, sep, level = item.partition("=")
            if not sep:
                raise ConfigError(
                    f"--severity `{item}`: write RULE=LEVEL, e.g. `lint.owner_missing=error`."
                )
            pairs.append((rule_id.strip(), level.strip()))
    out: dict[LintRule, Level] = {}
    ids = [r.rule_id for r in LintRule]
    for rule_id, level in pairs:
        rule = LintRule.by_id(rule_id) or LintRule.by_id(f"lint.{rule_id}")
        if rule is None:
            raise ConfigError(
                f"Unknown lint rule `{rule_id}`."
                + (did_you_mean(rule_id, ids) or f" Rules: {', '.join(ids)}.")
            )
        if level not in LEVELS:
            raise ConfigError(
                f"Lint rule `{rule.rule_id}`: level `{level}` is not one of "
                f"{', '.join(LEVELS)}."
            )
        out[rule] = level
    return out


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _column_rules(col: ColumnContract, keys: frozenset[str]) -> Iterable[LintRule]:
    has_codes = col.categories is not None or col.category_pattern is not None
    if (
        col.type in NUMERIC_TYPES and col.unit is None and not has_codes
        and col.name not in keys and not _matches(col.name, IDENTIFIER_NAMES)
    ):
        yield LintRule.UNIT_MISSING
    if col.type == "timestamp" and col.timezone is None:
        yield LintRule.TIMEZONE_MISSING
    if col.type == "text" and not has_codes and _matches(col.name, CATEGORICAL_NAMES):
        yield LintRule.CODES_MISSING


def _unknown(
    col: ColumnContract, field: Literal["unit", "timezone"], advise: Callable[[str], str | None],
) -> Iterable[tuple[str, str]]:
    """(subject column, advice) for the column's `field` and its members' that `advise` has
    advice for (a unit the table does not know, a zone that is not one)."""
    for name, declared in ((col.name, col), *((member_label(col.name, m.name), m)
                                              for m in col.members)):
        value = getattr(declared, field)
        advice = advise(value) if value is not None else None
        if advice is not None:
            yield name, advice


#: the declarations kept as written when unknown, each with its rule and its advice
_KEPT_AS_TEXT: tuple[tuple[LintRule, Literal["unit", "timezone"],
                           Callable[[str], str | None]], ...] = (
    (LintRule.UNIT_UNKNOWN, "unit", unit_advice),
    (LintRule.TIMEZONE_UNKNOWN, "timezone", timezone_advice),
)


def lint_resources(
    source: str,
    resources: Sequence[ResourceContract],
    levels: Mapping[LintRule, Level] | None = None,
) -> LintReport:
    """Check every resource of `source` against the lint rules.

    >>> from dlt_contract_ops.contracts.model import ColumnContract as C
    >>> r = ResourceContract("erp", "orders", "orders", (C("amount", "double", False),))
    >>> [(f.rule_id, f.level, f.subject) for f in lint_resources("erp", [r]).findings]
    [('lint.owner_missing', 'warning', 'orders'), ('lint.unit_missing', 'error', 'orders.amount')]
    """
    chosen = {rule: (levels or {}).get(rule, rule.default) for rule in LintRule}
    found: list[LintFinding] = []
    for res in resources:
        if res.owner is None:
            found.append(LintFinding(LintRule.OWNER_MISSING, chosen[LintRule.OWNER_MISSING],
                                     res.resource))
        keys = frozenset((res.keys or ()) + res.hints.primary_key + res.hints.merge_key)
        for col in res.columns:
            found += [
                LintFinding(rule, chosen[rule], res.resource, col.name)
                for rule in _column_rules(col, keys)
            ]
            found += [
                LintFinding(rule, chosen[rule], res.resource, name, advice)
                for rule, field, advise in _KEPT_AS_TEXT
                for name, advice in _unknown(col, field, advise)
            ]
    kept = tuple(
        sorted((f for f in found if f.level != "off"),
               key=lambda f: (f.resource, f.column or "", f.rule_id))
    )
    return LintReport(
        source=source,
        findings=kept,
        resources=len(resources),
        columns=sum(len(r.columns) for r in resources),
        levels=tuple((rule.rule_id, chosen[rule]) for rule in LintRule),
    )
