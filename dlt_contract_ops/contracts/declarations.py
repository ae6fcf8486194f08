"""What a model declares, field by field: `_Reader` records every declaration it can place in
the contract and turns the rest into a `DeclarationError`; `_declarations` walks an
annotation for every metadata object in it. Used by `contracts.extract`."""

from __future__ import annotations

import re
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from dlt_contract_ops.contracts.annotations import (
    _constraint,
    _container,
    _declared_values,
    _flatten_metadata,
    _is_declaration,
    _join,
    _strip,
    _unalias,
    _Unreadable,
)
from dlt_contract_ops.contracts.constraints import BOUND_NAMES, bound_text
from dlt_contract_ops.contracts.model import (
    ColumnContract,
    member_label,
)
from dlt_contract_ops.contracts.semantics import Semantics
from dlt_contract_ops.errors import DeclarationError


@dataclass(frozen=True)
class _Level:
    """The declarations at one level of a field's type: the field itself, or its items."""

    where: str  # `Model.field`, plus the path of the values for a member
    semantics: Semantics | None
    metadata: tuple[Any, ...]
    leaves: tuple[Any, ...]
    description: str | None


class _Reader:
    """Reads one model, remembering which declarations it recorded (by field), so that what
    it could not record is an error rather than a silence."""

    def __init__(self, model: type[Any], naming: Any) -> None:
        self.model = model
        self.naming = naming
        self.used: set[tuple[str, int]] = set()
        self.read: set[str] = set()  # top-level fields whose own declarations were read

    # -- one level ------------------------------------------------------------------------

    def level(
        self, top: str, where: str, annotation: Any, extra: list[Any], description: str | None
    ) -> _Level:
        try:
            nested, leaves = _strip(annotation)
        except _Unreadable as exc:
            raise DeclarationError(f"`{where}`: {exc}; write the type out instead.") from exc
        metadata = _flatten_metadata([*extra, *nested])
        found: list[Semantics] = []
        for item in metadata:
            if isinstance(item, Semantics) and not any(item is f for f in found):
                found.append(item)
        if len(found) > 1:
            raise DeclarationError(
                f"`{where}` declares Semantics {len(found)} times: merge them into one "
                "`Semantics(...)`."
            )
        self.used.update((top, id(item)) for item in metadata)
        if where == f"{self.model.__name__}.{top}":
            self.read.add(top)
        sem = found[0] if found else None
        text = (sem.description if sem else None) or description or None
        return _Level(where, sem, tuple(metadata), tuple(leaves), text)

    def unit(self, level: _Level) -> str | None:
        # recorded as written, known to the unit table or not: a unit the table does not know
        # is still a unit, compared by its text; `contract lint` says what to write instead
        return level.semantics.unit if level.semantics else None

    def timezone(self, level: _Level) -> str | None:
        # as the unit: recorded as written, an IANA name or not (`local_no_offset` is still a
        # promise about the column), compared by its text; `contract lint` says what to write
        return level.semantics.timezone if level.semantics else None

    @staticmethod
    def constraints(level: _Level, *, max_length: bool) -> dict[str, Any]:
        """Bounds, multiple_of, lengths and pattern from the level's metadata."""
        out: dict[str, Any] = {}
        for name in (*BOUND_NAMES, "multiple_of"):
            value = next(
                (getattr(m, name) for m in level.metadata if getattr(m, name, None) is not None),
                None,
            )
            out[name] = bound_text(value)
        minimum = _constraint(list(level.metadata), "min_length")
        out["min_length"] = minimum or None  # zero is no minimum
        out["max_length"] = _constraint(list(level.metadata), "max_length") if max_length else None
        pattern = next(
            (m.pattern for m in level.metadata if getattr(m, "pattern", None) is not None),
            None,
        )
        if pattern is not None and not isinstance(pattern, str):
            pattern = getattr(pattern, "pattern", str(pattern))  # a compiled re.Pattern
        out["pattern"] = pattern
        return out

    def vocabulary(self, level: _Level) -> tuple[tuple[str, ...] | None, str | None]:
        sem = level.semantics or Semantics()
        categories = sem.categories
        if categories is None and sem.category_pattern is None:
            categories = _declared_values(list(level.leaves))
        return categories, sem.category_pattern

    # -- members: declarations on values inside a json column --------------------------------

    def members(self, top: str, where: str, annotation: Any) -> tuple[ColumnContract, ...]:
        found: dict[str, ColumnContract] = {}
        for path, member in self._walk_members(top, where, annotation, "", ()):
            if path in found and found[path] != member:
                raise DeclarationError(
                    f"`{where}` declares the values at `{path}` twice, differently (a union "
                    "of two containers?): declare them once."
                )
            found[path] = member
        return tuple(found.values())

    def _walk_members(
        self, top: str, where: str, annotation: Any, prefix: str, models: tuple[type[Any], ...]
    ) -> Iterator[tuple[str, ColumnContract]]:
        try:
            _, leaves = _strip(annotation)
        except _Unreadable as exc:
            raise DeclarationError(f"`{where}`: {exc}; write the type out instead.") from exc
        for leaf in leaves:
            kind, args = _container(leaf)
            inner: list[tuple[str, Any, list[Any], str | None]] = []
            if kind == "items":
                inner.append((_join(prefix, "[]"), args[0], [], None))
            elif kind == "values":
                inner.append((_join(prefix, "{}"), args[1], [], None))
            elif kind == "model" and leaf not in models:
                for name, info in leaf.model_fields.items():
                    path = _join(prefix, info.alias or name)
                    inner.append((path, info.annotation, list(info.metadata), info.description))
            for path, inner_type, extra, description in inner:
                level = self.level(top, member_label(where, path), inner_type, extra, description)
                member = self._member(path, level)
                if member is not None:
                    yield path, member
                below = (*models, leaf) if kind == "model" else models
                yield from self._walk_members(top, where, inner_type, path, below)

    def _member(self, path: str, level: _Level) -> ColumnContract | None:
        sem = level.semantics or Semantics()
        for attribute in ("renamed_from", "precision", "scale"):
            if getattr(sem, attribute) is not None:
                raise DeclarationError(
                    f"`{level.where}`: Semantics({attribute}=...) describes a column, not the "
                    "values inside one: move it to the field's own Semantics or remove it."
                )
        categories, pattern = self.vocabulary(level)
        member = ColumnContract(
            name=path,
            type=None,
            nullable=True,
            unit=self.unit(level),
            timezone=self.timezone(level),
            categories=categories,
            category_pattern=pattern,
            crs=sem.crs,
            description=level.description,
            value_format=sem.value_format,
            **self.constraints(level, max_length=True),
        )
        return None if member == ColumnContract(path, None, True) else member

    # -- what could not be recorded ----------------------------------------------------------

    def unrecorded(self, fields: set[str]) -> None:
        """Raise for the first declaration on `fields` that no column or member recorded."""
        for name in sorted(fields):
            info = self.model.model_fields[name]
            where = f"{self.model.__name__}.{name}"
            items = [(i, "on the field") for i in info.metadata]
            items += list(_declarations(info.annotation, "", ()))
            for item, place in items:
                if not _is_declaration(item) or (name, id(item)) in self.used:
                    continue
                if name not in self.read:
                    raise DeclarationError(
                        f"`{where}` declares `{item!r}`, but dlt lands no column of its own "
                        "for the field (a nested model flattened into columns, or a field "
                        "`skip_nested_types` leaves out), so a contract cannot record it: "
                        "declare it on the nested model's fields, or remove it."
                    )
                raise DeclarationError(
                    f"`{where}` declares `{item!r}` {place}, where a contract cannot "
                    "record it: declare it on the column, on list items (`list[Annotated[...]]`), "
                    "on mapping values or on a nested model's fields, or remove it."
                )


def _declarations(
    annotation: Any, path: str, models: tuple[type[Any], ...]
) -> Iterator[tuple[Any, str]]:
    """Every metadata object anywhere in `annotation`, with where it sits in words."""
    try:
        current = _unalias(annotation)
    except _Unreadable:
        return
    origin, args = get_origin(current), get_args(current)
    if origin is Annotated:
        place = f"on the values at `{path}`" if path else "on the field"
        for item in current.__metadata__:
            yield item, place
            for inner in getattr(item, "metadata", None) or []:
                yield inner, place
        yield from _declarations(args[0], path, models)
        return
    if origin is Union or origin is types.UnionType:
        for arg in args:
            yield from _declarations(arg, path, models)
        return
    kind, inner_args = _container(current)
    if kind == "items":
        yield from _declarations(inner_args[0], _join(path, "[]"), models)
    elif kind == "values":
        yield from _declarations(inner_args[1], _join(path, "{}"), models)
        for item, _ in _declarations(inner_args[0], path, models):
            yield item, f"in the keys of `{_type_name(current)}`"
    elif kind == "model" and current not in models:
        for name, info in current.model_fields.items():
            sub = _join(path, info.alias or name)
            yield from ((i, f"on the values at `{sub}`") for i in info.metadata)
            yield from _declarations(info.annotation, sub, (*models, current))
    elif kind == "tuple" or (kind == "scalar" and inner_args):
        for arg in inner_args:
            for item, _ in _declarations(arg, path, models):
                yield item, f"inside `{_type_name(current)}`"


def _type_name(tp: Any) -> str:
    return re.sub(r"\b(typing|typing_extensions|__main__)\.", "", repr(tp))
