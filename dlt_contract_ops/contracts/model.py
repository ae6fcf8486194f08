"""The values a contract snapshot holds: versions, columns and resources, all immutable.

Column names are the names as dlt lands them; types are dlt data types with an optional
precision/scale. Nothing here reads files or imports dlt.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from dlt_contract_ops.contracts.rules import Bump

_VERSION = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


class VersionError(ValueError):
    """A version string is not MAJOR.MINOR.PATCH."""


@dataclass(frozen=True, order=True)
class Version:
    """A release version, MAJOR.MINOR.PATCH (ordered numerically).

    >>> Version.parse("1.10.0") > Version.parse("1.9.3")
    True
    """

    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> Version:
        match = _VERSION.match(text.strip())
        if not match:
            raise VersionError(
                f"`{text}` is not a release version: write MAJOR.MINOR.PATCH, e.g. `1.0.0`."
            )
        major, minor, patch = (int(g) for g in match.groups())
        return cls(major, minor, patch)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


def declared_bump(old: Version, new: Version) -> Bump | None:
    """The bump a release declares going from `old` to `new`; None when `new` is lower.

    >>> declared_bump(Version(1, 2, 3), Version(2, 0, 0)).label
    'major'
    >>> declared_bump(Version(1, 2, 3), Version(1, 2, 3)).label
    'none'
    """
    if new < old:
        return None
    if new.major != old.major:
        return Bump.MAJOR
    if new.minor != old.minor:
        return Bump.MINOR
    if new.patch != old.patch:
        return Bump.PATCH
    return Bump.NONE


#: the snapshot format the code writes; format 1 recorded no value constraints, no declarations
#: inside json columns, no dlt hints and no contract metadata
FORMAT_VERSION = 2


@dataclass(frozen=True)
class ColumnContract:
    """One column as a contract declares it. Semantic properties are None when undeclared.

    `categories` is a closed vocabulary (sorted); `category_pattern` an open one (a regular
    expression every value must match); a column declares at most one of the two.

    `ge`/`gt`/`le`/`lt`/`multiple_of` are value bounds as text (`"1"`, `"0.5"`,
    `"2020-01-01"`), `min_length`/`max_length`/`pattern` the length and pattern constraints
    (a text column's `max_length` is its `precision` instead). `members` are the declarations
    on values inside a json column, each a `ColumnContract` named by its path (`[]` a list's
    items, `{}` a mapping's values, `weight` a nested model's field, `[].price` a field of a
    list of models) with no type of its own.
    """

    name: str
    type: str | None
    nullable: bool
    precision: int | None = None
    scale: int | None = None
    unit: str | None = None
    timezone: str | None = None
    categories: tuple[str, ...] | None = None
    category_pattern: str | None = None
    crs: str | None = None
    description: str | None = None
    renamed_from: str | None = None
    value_format: str | None = None
    ge: str | None = None
    gt: str | None = None
    le: str | None = None
    lt: str | None = None
    multiple_of: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    members: tuple[ColumnContract, ...] = ()

    def __post_init__(self) -> None:
        if self.members:
            ordered = tuple(sorted(self.members, key=lambda m: m.name))
            object.__setattr__(self, "members", ordered)

    @property
    def type_label(self) -> str:
        """The type as people write it: `bigint`, `text(255)`, `decimal(10,2)`."""
        base = self.type or "any"
        if self.precision is None and self.scale is None:
            return base
        if self.scale is None:
            return f"{base}({self.precision})"
        return f"{base}({self.precision if self.precision is not None else '?'},{self.scale})"

    def member(self, path: str) -> ColumnContract | None:
        return next((m for m in self.members if m.name == path), None)


def member_label(column: str, path: str) -> str:
    """How a member is named in a diff: `dims[]`, `shipping.weight`, `items[].price`.

    >>> member_label("items", "[].price"), member_label("shipping", "weight")
    ('items[].price', 'shipping.weight')
    """
    return f"{column}{path}" if path.startswith(("[", "{")) else f"{column}.{path}"


#: dlt's own table hints a contract records, each a set of landed column names
HINT_NAMES = ("primary_key", "merge_key", "partition", "cluster", "unique")


@dataclass(frozen=True)
class DltHints:
    """The columns dlt's resource hints mark (`primary_key=`, `merge_key=`, and the
    `partition` / `cluster` / `unique` column hints), landed names, sorted."""

    primary_key: tuple[str, ...] = ()
    merge_key: tuple[str, ...] = ()
    partition: tuple[str, ...] = ()
    cluster: tuple[str, ...] = ()
    unique: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in HINT_NAMES:
            object.__setattr__(self, name, tuple(sorted(set(getattr(self, name)))))

    def columns(self, hint: str) -> tuple[str, ...]:
        value: tuple[str, ...] = getattr(self, hint)
        return value


@dataclass(frozen=True)
class ResourceContract:
    """One resource's contract: its landed table, business key, grain and columns by name,
    dlt's key hints and who owns it.

    `format_version` is the snapshot format it was recorded in: a format 1 snapshot could not
    record constraints, members or hints, so their absence there means "not recorded".
    """

    source: str
    resource: str
    table: str
    columns: tuple[ColumnContract, ...]
    keys: tuple[str, ...] | None = None
    grain: str | None = None
    model: str = ""
    hints: DltHints = field(default_factory=DltHints)
    owner: str | None = None
    consumer_owners: tuple[str, ...] = ()
    change_key: str | None = None
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        # canonical order, whatever order the caller built them in
        object.__setattr__(self, "columns", tuple(sorted(self.columns, key=lambda c: c.name)))
        if self.keys is not None:
            object.__setattr__(self, "keys", tuple(sorted(self.keys)))
        object.__setattr__(self, "consumer_owners", tuple(sorted(set(self.consumer_owners))))

    def column(self, name: str) -> ColumnContract | None:
        return next((c for c in self.columns if c.name == name), None)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


@dataclass(frozen=True)
class Release:
    """Every resource of one source at one version."""

    source: str
    version: Version
    resources: tuple[ResourceContract, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "resources", tuple(sorted(self.resources, key=lambda r: r.resource))
        )

    def resource(self, name: str) -> ResourceContract | None:
        return next((r for r in self.resources if r.resource == name), None)


#: (resource, column or None) -> (file, line): where the models declare a resource and its
#: columns, for a CI annotation to point at
Locations = Mapping[tuple[str, str | None], tuple[str, int]]


TypeRelation = Literal["equal", "widened", "narrowed", "changed"]

# What an undeclared precision means per dlt data type, so `bigint(32)` → `bigint` reads as
# widening: dlt's bigint is 64-bit, its decimal defaults to (38, 9), timestamps to microseconds;
# text and binary without a length are unbounded.
_UNBOUNDED = 1 << 62
_DEFAULT_PRECISION = {
    "bigint": 64,
    "double": 64,
    "text": _UNBOUNDED,
    "binary": _UNBOUNDED,
    "timestamp": 6,
    "time": 6,
    "decimal": 38,
    "wei": 78,
}
_DEFAULT_SCALE = {"decimal": 9, "wei": 0}


def compare_types(old: ColumnContract, new: ColumnContract) -> TypeRelation:
    """How `new`'s type relates to `old`'s: equal, widened (every old value still fits),
    narrowed (some old values may not fit) or changed (another data type).

    >>> compare_types(ColumnContract("x", "bigint", False, precision=32),
    ...               ColumnContract("x", "bigint", False))
    'widened'
    """
    if old.type != new.type:
        return "changed"
    if (old.precision, old.scale) == (new.precision, new.scale):
        return "equal"
    dtype = old.type or ""
    if dtype not in _DEFAULT_PRECISION:
        return "equal"  # precision carries no meaning for this type (bool, date, json)
    default_p = _DEFAULT_PRECISION[dtype]
    p_old = old.precision if old.precision is not None else default_p
    p_new = new.precision if new.precision is not None else default_p
    if dtype in _DEFAULT_SCALE:
        default_s = _DEFAULT_SCALE[dtype]
        s_old = old.scale if old.scale is not None else default_s
        s_new = new.scale if new.scale is not None else default_s
        # a decimal fits when neither its integer digits nor its fraction digits shrink
        dims = [(p_old - s_old, p_new - s_new), (s_old, s_new)]
    else:
        dims = [(p_old, p_new)]
    if all(a == b for a, b in dims):
        return "equal"
    if all(b >= a for a, b in dims):
        return "widened"
    return "narrowed"
