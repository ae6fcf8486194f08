"""Reading a field's annotation: aliases unwrapped, `Annotated` metadata and declared values
collected, containers told apart. The type-level helpers of `contracts.extract`."""

from __future__ import annotations

import collections
import collections.abc as cabc
import enum
import types
import typing
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typing_extensions

from dlt_contract_ops.contracts.constraints import CONSTRAINT_NAMES
from dlt_contract_ops.contracts.semantics import Semantics

# typing_extensions re-exports typing's own class from Python 3.12 on
_ALIAS_TYPES: tuple[type, ...] = tuple(
    {
        typing_extensions.TypeAliasType,
        getattr(typing, "TypeAliasType", typing_extensions.TypeAliasType),
    }
)
_ITEMS = {
    list,
    set,
    frozenset,
    collections.deque,
    cabc.Sequence,
    cabc.MutableSequence,
    cabc.Set,
    cabc.MutableSet,
    cabc.Iterable,
    cabc.Collection,
}
_VALUES = {
    dict,
    cabc.Mapping,
    cabc.MutableMapping,
    collections.OrderedDict,
    collections.defaultdict,
}


class _Unreadable(Exception):
    """A type this module cannot read through; re-raised with the model and field."""


def _unalias(tp: Any) -> Any:
    """`tp` with every type alias replaced by what it stands for."""
    for _ in range(64):
        if isinstance(tp, _ALIAS_TYPES):
            tp = tp.__value__  # type: ignore[attr-defined]  # a TypeAliasType
            continue
        origin = get_origin(tp)
        if not isinstance(origin, _ALIAS_TYPES):
            return tp
        args = get_args(tp)
        try:
            tp = origin.__value__[args[0] if len(args) == 1 else args]  # type: ignore[attr-defined]
        except TypeError as exc:
            raise _Unreadable(f"the type alias `{origin}` cannot be applied to {args}") from exc
    raise _Unreadable(f"the type alias `{tp}` refers to itself")


def _strip(annotation: Any) -> tuple[list[Any], list[Any]]:
    """(metadata found in any nested `Annotated`, the non-None leaf types)."""
    metadata: list[Any] = []
    leaves: list[Any] = []
    stack = [annotation]
    while stack:
        current = _unalias(stack.pop())
        origin = get_origin(current)
        if origin is Annotated:
            metadata.extend(current.__metadata__)
            stack.append(get_args(current)[0])
        elif origin is Union or origin is types.UnionType:
            stack.extend(a for a in get_args(current) if a is not type(None))
        elif current is not type(None):
            leaves.append(current)
    return metadata, leaves


def _flatten_metadata(items: list[Any]) -> list[Any]:
    # a nested `Annotated[str, Field(max_length=5)]` keeps a FieldInfo whose own metadata
    # holds the constraint objects
    out: list[Any] = []
    for item in items:
        out.append(item)
        out.extend(getattr(item, "metadata", None) or [])
    return out


def _declared_values(leaves: list[Any]) -> tuple[str, ...] | None:
    """A closed value set the type itself declares: `Literal[...]` or an `Enum`."""
    values: set[str] = set()
    for leaf in leaves:
        if get_origin(leaf) is Literal:
            values.update(str(v) for v in get_args(leaf) if v is not None)
        elif isinstance(leaf, type) and issubclass(leaf, enum.Enum):
            values.update(str(m.value) for m in leaf)
        else:
            return None
    return tuple(sorted(values)) if values else None


def _constraint(metadata: list[Any], attribute: str) -> int | None:
    for item in metadata:
        value = getattr(item, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _is_declaration(item: Any) -> bool:
    """A metadata object that declares something a contract records."""
    if isinstance(item, Semantics):
        return True
    if getattr(item, "min_length", None):  # zero is no minimum
        return True
    return any(
        getattr(item, name, None) is not None for name in CONSTRAINT_NAMES if name != "min_length"
    )


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "model_fields")


def _container(leaf: Any) -> tuple[str, tuple[Any, ...]]:
    """What a leaf type holds: ("items", (item,)), ("values", (key, value)),
    ("model", (model,)), ("tuple", args) for a fixed-length tuple, or ("scalar", args)."""
    if _is_model(leaf):
        return "model", (leaf,)
    origin, args = get_origin(leaf), get_args(leaf)
    if origin in _ITEMS and len(args) == 1:
        return "items", args
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return "items", args[:1]
    if origin is tuple:
        return "tuple", args
    if origin in _VALUES and len(args) == 2:
        return "values", args
    return "scalar", args


def _join(prefix: str, part: str) -> str:
    if part in ("[]", "{}") or not prefix:
        return f"{prefix}{part}"
    return f"{prefix}.{part}"
