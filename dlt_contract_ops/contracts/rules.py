"""The compatibility policy as data: every kind of contract change, classified once.

`Rule` is the closed set of change kinds. Each member carries its stable id, a title, whether a
names-and-types diff can see it, and its `Direction`; the direction decides the severity from
either side of the contract:

- the **consumer** reads rows written under the new contract with code written for the old one,
  so a weaker guarantee (a column that became nullable, a unit nobody declares any more) breaks it;
- the **producer** writes rows under the old habits that must satisfy the new contract, so a
  stronger guarantee (a new required column, a newly closed vocabulary) breaks it.

A severity maps to the semantic-version bump it requires: breaking → major, additive → minor,
safe → patch.
"""

from __future__ import annotations

import enum
from typing import Literal

Perspective = Literal["consumer", "producer"]
PERSPECTIVES: tuple[Perspective, ...] = ("consumer", "producer")


class Severity(str, enum.Enum):
    """How a change affects existing readers or writers of a contract."""

    BREAKING = "breaking"
    ADDITIVE = "additive"
    SAFE = "safe"

    @property
    def bump(self) -> Bump:
        """The smallest version bump a release with this change must declare."""
        return _SEVERITY_BUMP[self]


class Bump(enum.IntEnum):
    """A semantic-version bump, ordered so that a larger bump covers a smaller one."""

    NONE = 0
    PATCH = 1
    MINOR = 2
    MAJOR = 3

    @property
    def label(self) -> str:
        return self.name.lower()


_SEVERITY_BUMP = {
    Severity.BREAKING: Bump.MAJOR,
    Severity.ADDITIVE: Bump.MINOR,
    Severity.SAFE: Bump.PATCH,
}


class Direction(enum.Enum):
    """What a change does to the guarantee a contract gives; fixes its severity per side."""

    #: something new a reader may use and a writer may ignore
    EXTEND = (Severity.ADDITIVE, Severity.ADDITIVE)
    #: the guarantee got stronger: readers gain, writers must now comply
    TIGHTEN = (Severity.ADDITIVE, Severity.BREAKING)
    #: the guarantee got weaker: writers gain freedom, readers lose an assumption
    LOOSEN = (Severity.BREAKING, Severity.ADDITIVE)
    #: the meaning moved: nobody's code is right any more
    CHANGE = (Severity.BREAKING, Severity.BREAKING)
    #: documentation only
    DOCUMENT = (Severity.SAFE, Severity.SAFE)

    def severity(self, perspective: Perspective) -> Severity:
        consumer, producer = self.value
        return consumer if perspective == "consumer" else producer


class Rule(enum.Enum):
    """Every change kind the diff reports: (id, title, structural, direction).

    `structural` marks what a names-and-types diff sees; everything else is the blind spot a
    schema-only check has.
    """

    RESOURCE_ADDED = ("resource.added", "resource added", True, Direction.EXTEND)
    RESOURCE_REMOVED = ("resource.removed", "resource removed", True, Direction.CHANGE)
    TABLE_CHANGED = ("resource.table_changed", "lands in another table", True, Direction.CHANGE)
    COLUMN_REMOVED = ("column.removed", "column removed", True, Direction.CHANGE)
    COLUMN_ADDED_NULLABLE = (
        "column.added_nullable", "nullable column added", True, Direction.EXTEND,
    )
    COLUMN_ADDED_REQUIRED = (
        "column.added_required", "required column added", True, Direction.TIGHTEN,
    )
    COLUMN_RENAMED = ("column.renamed", "column renamed", False, Direction.CHANGE)
    TYPE_WIDENED = ("type.widened", "type widened", True, Direction.EXTEND)
    TYPE_NARROWED = ("type.narrowed", "type narrowed", True, Direction.CHANGE)
    TYPE_CHANGED = ("type.changed", "type changed", True, Direction.CHANGE)
    BECAME_NULLABLE = ("nullability.relaxed", "became nullable", False, Direction.LOOSEN)
    BECAME_REQUIRED = ("nullability.tightened", "became required", False, Direction.TIGHTEN)
    CATEGORIES_ADDED = ("categories.added", "category added", False, Direction.EXTEND)
    CATEGORIES_REMOVED = ("categories.removed", "category removed", False, Direction.CHANGE)
    VOCABULARY_OPENED = (
        "vocabulary.opened", "closed vocabulary became open", False, Direction.LOOSEN,
    )
    VOCABULARY_CLOSED = (
        "vocabulary.closed", "open vocabulary became closed", False, Direction.TIGHTEN,
    )
    PATTERN_CHANGED = (
        "vocabulary.pattern_changed", "category pattern changed", False, Direction.CHANGE,
    )
    VOCABULARY_DECLARED = (
        "vocabulary.declared", "vocabulary declared", False, Direction.TIGHTEN,
    )
    VOCABULARY_DROPPED = ("vocabulary.dropped", "vocabulary dropped", False, Direction.LOOSEN)
    UNIT_CHANGED = ("unit.changed", "unit changed", False, Direction.CHANGE)
    UNIT_DECLARED = ("unit.declared", "unit declared", False, Direction.TIGHTEN)
    UNIT_DROPPED = ("unit.dropped", "unit dropped", False, Direction.LOOSEN)
    TIMEZONE_CHANGED = ("timezone.changed", "time zone changed", False, Direction.CHANGE)
    TIMEZONE_DECLARED = ("timezone.declared", "time zone declared", False, Direction.TIGHTEN)
    TIMEZONE_DROPPED = ("timezone.dropped", "time zone dropped", False, Direction.LOOSEN)
    CRS_CHANGED = ("crs.changed", "CRS changed", False, Direction.CHANGE)
    CRS_DECLARED = ("crs.declared", "CRS declared", False, Direction.TIGHTEN)
    CRS_DROPPED = ("crs.dropped", "CRS dropped", False, Direction.LOOSEN)
    KEYS_CHANGED = ("keys.changed", "business key changed", False, Direction.CHANGE)
    KEYS_DECLARED = ("keys.declared", "business key declared", False, Direction.TIGHTEN)
    KEYS_DROPPED = ("keys.dropped", "business key dropped", False, Direction.LOOSEN)
    PRIMARY_KEY_CHANGED = (
        "primary_key.changed", "dlt primary_key changed", False, Direction.CHANGE,
    )
    PRIMARY_KEY_DECLARED = (
        "primary_key.declared", "dlt primary_key declared", False, Direction.TIGHTEN,
    )
    PRIMARY_KEY_DROPPED = (
        "primary_key.dropped", "dlt primary_key dropped", False, Direction.LOOSEN,
    )
    MERGE_KEY_CHANGED = ("merge_key.changed", "dlt merge_key changed", False, Direction.CHANGE)
    MERGE_KEY_DECLARED = (
        "merge_key.declared", "dlt merge_key declared", False, Direction.TIGHTEN,
    )
    MERGE_KEY_DROPPED = ("merge_key.dropped", "dlt merge_key dropped", False, Direction.LOOSEN)
    PARTITION_CHANGED = (
        "partition.changed", "dlt partition hint changed", False, Direction.DOCUMENT,
    )
    CLUSTER_CHANGED = ("cluster.changed", "dlt cluster hint changed", False, Direction.DOCUMENT)
    UNIQUE_CHANGED = ("unique.changed", "dlt unique hint changed", False, Direction.DOCUMENT)
    GRAIN_CHANGED = ("grain.changed", "grain changed", False, Direction.CHANGE)
    GRAIN_REWORDED = (
        "grain.reworded", "grain reworded, key unchanged", False, Direction.DOCUMENT,
    )
    GRAIN_DECLARED = ("grain.declared", "grain declared", False, Direction.TIGHTEN)
    GRAIN_DROPPED = ("grain.dropped", "grain dropped", False, Direction.LOOSEN)
    RANGE_TIGHTENED = ("range.tightened", "value range tightened", False, Direction.TIGHTEN)
    RANGE_LOOSENED = ("range.loosened", "value range loosened", False, Direction.LOOSEN)
    RANGE_CHANGED = ("range.changed", "value range changed", False, Direction.CHANGE)
    LENGTH_TIGHTENED = ("length.tightened", "length limit tightened", False, Direction.TIGHTEN)
    LENGTH_LOOSENED = ("length.loosened", "length limit loosened", False, Direction.LOOSEN)
    VALUE_PATTERN_DECLARED = (
        "pattern.declared", "value pattern declared", False, Direction.TIGHTEN,
    )
    VALUE_PATTERN_DROPPED = (
        "pattern.dropped", "value pattern dropped", False, Direction.LOOSEN,
    )
    VALUE_PATTERN_CHANGED = (
        "pattern.changed", "value pattern changed", False, Direction.CHANGE,
    )
    VALUE_FORMAT_CHANGED = (
        "value_format.changed", "value format changed", False, Direction.DOCUMENT,
    )
    OWNER_CHANGED = ("owner.changed", "owner changed", False, Direction.DOCUMENT)
    CONSUMER_OWNERS_CHANGED = (
        "consumer_owners.changed", "consumer owners changed", False, Direction.DOCUMENT,
    )
    CHANGE_KEY_CHANGED = ("change_key.changed", "change key changed", False, Direction.DOCUMENT)
    DESCRIPTION_CHANGED = (
        "description.changed", "description changed", False, Direction.DOCUMENT,
    )

    def __init__(self, rule_id: str, title: str, structural: bool, direction: Direction) -> None:
        self.rule_id = rule_id
        self.title = title
        self.structural = structural
        self.direction = direction

    def severity(self, perspective: Perspective = "consumer") -> Severity:
        """Severity of this change kind for `perspective`.

        >>> Rule.COLUMN_ADDED_REQUIRED.severity("consumer").value
        'additive'
        >>> Rule.COLUMN_ADDED_REQUIRED.severity("producer").value
        'breaking'
        """
        return self.direction.severity(perspective)

    @classmethod
    def by_id(cls, rule_id: str) -> Rule | None:
        """The rule with id `rule_id`, or None."""
        return _BY_ID.get(rule_id)


_BY_ID = {r.rule_id: r for r in Rule}

#: the per-property rule triples (changed, declared, dropped), by snapshot property
SEMANTIC_PROPERTY_RULES: dict[str, tuple[Rule, Rule, Rule]] = {
    "unit": (Rule.UNIT_CHANGED, Rule.UNIT_DECLARED, Rule.UNIT_DROPPED),
    "timezone": (Rule.TIMEZONE_CHANGED, Rule.TIMEZONE_DECLARED, Rule.TIMEZONE_DROPPED),
    "crs": (Rule.CRS_CHANGED, Rule.CRS_DECLARED, Rule.CRS_DROPPED),
}

#: the dlt key hints' rule triples (changed, declared, dropped); the other hints are one rule
KEY_HINT_RULES: dict[str, tuple[Rule, Rule, Rule]] = {
    "primary_key": (Rule.PRIMARY_KEY_CHANGED, Rule.PRIMARY_KEY_DECLARED, Rule.PRIMARY_KEY_DROPPED),
    "merge_key": (Rule.MERGE_KEY_CHANGED, Rule.MERGE_KEY_DECLARED, Rule.MERGE_KEY_DROPPED),
}
OTHER_HINT_RULES: dict[str, Rule] = {
    "partition": Rule.PARTITION_CHANGED,
    "cluster": Rule.CLUSTER_CHANGED,
    "unique": Rule.UNIQUE_CHANGED,
}
