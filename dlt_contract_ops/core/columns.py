"""Column values both sides of a diff speak: names as they land at the destination."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: dlt's own columns, as every dlt naming convention keeps them: the load a row came in,
#: the row's id, a nested row's links to its parent and root row, and its list index
LOAD_ID = "_dlt_load_id"
ROW_ID = "_dlt_id"
PARENT_ID = "_dlt_parent_id"
ROOT_ID = "_dlt_root_id"
LIST_IDX = "_dlt_list_idx"
#: the prefix of every column dlt adds; such a column is never drift
DLT_PREFIX = "_dlt_"
DLT_COLUMNS = frozenset({LOAD_ID, ROW_ID, PARENT_ID, ROOT_ID, LIST_IDX})


def free_name(name: str, taken: set[str]) -> str:
    """`name`, or `_name`, `__name`, ...: an alias no column in `taken` is called; added to
    `taken`, so the next helper alias cannot take it too.

    >>> taken = {"_co_rank_0", "x"}
    >>> free_name("_co_rank_0", taken), free_name("_co_rank_0", taken)
    ('__co_rank_0', '___co_rank_0')
    """
    while name in taken:
        name = "_" + name
    taken.add(name)
    return name


@dataclass(frozen=True)
class ExpectedColumn:
    """A column a resource's model makes dlt create, named as it lands."""

    name: str
    data_type: str | None = None  # dlt data type ("bigint", "text", ...)
    nullable: bool = True
    field: str = ""  # the model field it comes from; a field may land under two names
    precision: int | None = None
    scale: int | None = None
    #: the field is marked `Field(deprecated=...)`: no data is expected in it any more
    deprecated: bool = False


@dataclass(frozen=True)
class ExpectedTable:
    """What one resource's Pydantic model declares, already normalized."""

    resource: str
    table: str
    columns: tuple[ExpectedColumn, ...]
    write_disposition: str = "append"
    model_name: str = ""
    #: a nested (child) table: the table it is nested under, and the root table of the
    #: resource ("" for a root table). dlt's `_dlt_*` link columns are never drift.
    parent: str = ""
    root: str = ""

    @property
    def names(self) -> frozenset[str]:
        return frozenset(c.name for c in self.columns)


@dataclass(frozen=True)
class LiveColumn:
    """A column the destination reports, name casefolded the destination's way.

    `data_type` is the destination's type as its catalog spells it, with its precision or
    length where the type has one (`NUMERIC(5,2)`, `VARCHAR(3)`). The size, as
    information_schema reports it (the adapter reads it, `destinations/typesize.py`):
    `precision` in bits when `radix` is 2 (integers, floats), in decimal digits when it is 10
    (decimals); `scale` the digits after the point; `length` the most characters (bytes for
    binary types) a value may have. None: no limit, or none the destination enforces.
    """

    name: str
    data_type: str
    nullable: bool = True
    precision: int | None = None
    scale: int | None = None
    radix: int | None = None
    length: int | None = None


@dataclass(frozen=True)
class LiveTable:
    name: str
    columns: dict[str, LiveColumn] = field(default_factory=dict)
    #: the catalog's estimate of the table's rows, read in the metadata query (None: the
    #: destination reports none); it decides profiles or a scan (`core.profile_choice`)
    estimated_rows: int | None = None

    def has(self, column: str) -> bool:
        return column in self.columns


@dataclass(frozen=True)
class TimeAxis:
    """The column a table is windowed and ordered on.

    `kind="timestamp"`: a timestamp column compared with timestamp parameters.
    `kind="load_id"`: dlt's `_dlt_load_id`, epoch seconds as text. dlt writes them with a
    10-digit integer part (until the year 2286), so comparing the text with a bound epoch
    string orders exactly as comparing the numbers, needs no cast, and lets a destination
    prune on the raw column.
    """

    column: str
    kind: Literal["timestamp", "load_id", "partition"] = "timestamp"
