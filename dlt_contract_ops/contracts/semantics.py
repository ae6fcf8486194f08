"""Declare what a model's columns mean, on the Pydantic models dlt already uses.

Per field, in `typing.Annotated` metadata (Pydantic and dlt ignore it, so rows validate and
land exactly as before)::

    unit_price: Annotated[Decimal, Semantics(unit="USD")]
    updated_at: Annotated[datetime, Semantics(timezone="UTC")]
    status: Annotated[str, Semantics(categories=("paid", "pending"))]

Inside a list, a mapping or a nested model, on the values themselves (recorded as members of
the json column)::

    legs_m: list[Annotated[float, Semantics(unit="m")]]

Per model, with a class decorator::

    @TableSemantics(keys=("order_id", "line_no"), grain="one row per order line",
                    owner="Order Platform", consumer_owners=("Analytics",), change_key="updated_at")
    class OrderLine(BaseModel): ...

Nullability is never declared here: it is the field's own `Optional[...]`, as dlt reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from dlt_contract_ops.errors import DeclarationError

#: the class attribute `TableSemantics` sets on a model
TABLE_ATTRIBUTE = "__contract_semantics__"

M = TypeVar("M", bound=type[Any])


def _opt_text(value: object, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise DeclarationError(f"Semantics({what}=...) must be a non-empty string, got {value!r}.")
    return value


def _opt_size(value: object, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise DeclarationError(f"Semantics({what}=...) must be a non-negative int, got {value!r}.")
    return value


@dataclass(frozen=True, init=False)
class Semantics:
    """What one column means. Every argument is optional; undeclared means "not promised".

    - `unit`: the unit of a measure (`"USD"`, `"USD_cents"`, `"m"`).
    - `timezone`: the zone a timestamp is expressed in (`"UTC"`, `"Europe/Berlin"`).
    - `categories`: the closed set of values the column may hold.
    - `category_pattern`: an open vocabulary: a regular expression every value matches.
    - `crs`: the coordinate reference system of a geometry or coordinate (`"EPSG:4326"`).
    - `description`: what the column is (defaults to the field's `Field(description=...)`).
    - `renamed_from`: the column's previous name, so a diff reports one rename, not a
      removal plus an addition.
    - `precision` / `scale`: the declared storage width when the Python type cannot say it
      (bits for `bigint`/`double`, characters for `text`, digits for `decimal`).
    - `value_format`: how values are written (`"RFC 3339"`, `"E.164"`); documentation, never
      breaking by itself.

    >>> Semantics(unit="USD").unit
    'USD'
    >>> Semantics(categories=["b", "a"]).categories
    ('a', 'b')
    """

    unit: str | None
    timezone: str | None
    categories: tuple[str, ...] | None
    category_pattern: str | None
    crs: str | None
    description: str | None
    renamed_from: str | None
    precision: int | None
    scale: int | None
    value_format: str | None

    def __init__(
        self,
        *,
        unit: str | None = None,
        timezone: str | None = None,
        categories: Iterable[str | int] | None = None,
        category_pattern: str | None = None,
        crs: str | None = None,
        description: str | None = None,
        renamed_from: str | None = None,
        precision: int | None = None,
        scale: int | None = None,
        value_format: str | None = None,
    ) -> None:
        cats: tuple[str, ...] | None = None
        if categories is not None:
            if isinstance(categories, str):
                raise DeclarationError(
                    f"Semantics(categories={categories!r}) must be a collection of values, "
                    f'e.g. categories=("paid", "pending"), not one string.'
                )
            cats = tuple(sorted({str(v) for v in categories}))
            if not cats:
                raise DeclarationError("Semantics(categories=...) is empty: list the values.")
        pattern = _opt_text(category_pattern, "category_pattern")
        if cats is not None and pattern is not None:
            raise DeclarationError(
                "Semantics declares both `categories` (a closed set) and `category_pattern` "
                "(an open vocabulary): keep the one that is true."
            )
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise DeclarationError(
                    f"Semantics(category_pattern={pattern!r}) is not a regular expression: {exc}."
                ) from exc
        set_ = object.__setattr__
        set_(self, "unit", _opt_text(unit, "unit"))
        set_(self, "timezone", _opt_text(timezone, "timezone"))
        set_(self, "categories", cats)
        set_(self, "category_pattern", pattern)
        set_(self, "crs", _opt_text(crs, "crs"))
        set_(self, "description", _opt_text(description, "description"))
        set_(self, "renamed_from", _opt_text(renamed_from, "renamed_from"))
        set_(self, "precision", _opt_size(precision, "precision"))
        set_(self, "scale", _opt_size(scale, "scale"))
        set_(self, "value_format", _opt_text(value_format, "value_format"))

    def __repr__(self) -> str:
        # only what is declared, so an error message quotes the declaration as it was written
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if v is not None)
        return f"Semantics({args})"


@dataclass(frozen=True, init=False)
class TableSemantics:
    """What one row of a model means, and who answers for it. A class decorator.

    `keys` name fields (by field name, alias, or landed column name); `grain` says in words
    what one row is. Contract metadata, shown in a diff but never breaking by itself: `owner`
    (who produces the table), `consumer_owners` (who reads it), `change_key` (the field that
    orders changes, e.g. an `updated_at` an incremental load follows).

    >>> from pydantic import BaseModel
    >>> @TableSemantics(keys=("order_id",), grain="one row per order")
    ... class Order(BaseModel):
    ...     order_id: str
    >>> table_semantics(Order).grain
    'one row per order'
    """

    keys: tuple[str, ...] | None
    grain: str | None
    owner: str | None
    consumer_owners: tuple[str, ...]
    change_key: str | None

    def __init__(
        self,
        *,
        keys: Iterable[str] | None = None,
        grain: str | None = None,
        owner: str | None = None,
        consumer_owners: Iterable[str] | None = None,
        change_key: str | None = None,
    ) -> None:
        key_tuple: tuple[str, ...] | None = None
        if keys is not None:
            key_tuple = (keys,) if isinstance(keys, str) else tuple(keys)
            if not key_tuple or not all(isinstance(k, str) and k for k in key_tuple):
                raise DeclarationError(
                    f"TableSemantics(keys={keys!r}) must list one or more field names."
                )
        readers: tuple[str, ...] = ()
        if consumer_owners is not None:
            readers = (consumer_owners,) if isinstance(consumer_owners, str) else tuple(
                consumer_owners
            )
            if not readers or not all(isinstance(r, str) and r.strip() for r in readers):
                raise DeclarationError(
                    f"TableSemantics(consumer_owners={consumer_owners!r}) must list one or more "
                    "team names."
                )
        object.__setattr__(self, "keys", key_tuple)
        object.__setattr__(self, "grain", _opt_text(grain, "grain"))
        object.__setattr__(self, "owner", _opt_text(owner, "owner"))
        object.__setattr__(self, "consumer_owners", tuple(sorted(set(readers))))
        object.__setattr__(self, "change_key", _opt_text(change_key, "change_key"))

    def __call__(self, model: M) -> M:
        """Attach to `model` (used as `@TableSemantics(...)` above the class)."""
        if not hasattr(model, "model_fields"):
            raise DeclarationError(
                f"@TableSemantics decorates a Pydantic model; `{getattr(model, '__name__', model)}`"
                " is not one."
            )
        setattr(model, TABLE_ATTRIBUTE, self)
        return model


def table_semantics(model: type[Any]) -> TableSemantics | None:
    """The `TableSemantics` declared on `model` (or inherited from a base model), if any."""
    value = getattr(model, TABLE_ATTRIBUTE, None)
    return value if isinstance(value, TableSemantics) else None
