"""Lazy entry-point registries: alert sinks, destination adapters and detectors (its own
module, `detectors`, validates those), built-ins included."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

SINK_GROUP = "dlt_contract_ops.alert_sinks"
DESTINATION_GROUP = "dlt_contract_ops.destinations"
DETECTOR_GROUP = "dlt_contract_ops.detectors"


@cache
def _every() -> Any:  # EntryPoints (SelectableGroups before Python 3.12): both `select`
    # one scan of the installed distributions for every group (each `entry_points(group=)`
    # call scans them all again)
    return entry_points()


@cache
def _group(group: str) -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in _every().select(group=group)}


def registered(group: str) -> dict[str, EntryPoint]:
    """Registered names of `group`, nothing imported."""
    return dict(_group(group))


def entry_point(group: str, name: str) -> EntryPoint:
    """The entry point registered as `name` in `group`, nothing imported; KeyError when
    absent."""
    eps = _group(group)
    if name not in eps:
        raise KeyError(name)
    return eps[name]


def load(group: str, name: str) -> Any:
    """Import and return the object registered as `name` in `group`; KeyError when absent."""
    return entry_point(group, name).load()


def distribution(ep: EntryPoint) -> str | None:
    """"name version" of the distribution that registers `ep`, when known."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None
    name = dist.metadata["Name"] if dist.metadata is not None else None
    return f"{name} {dist.version}" if name else None


@dataclass(frozen=True)
class SinkInfo:
    """One registered alert sink; nothing of it is imported to list it."""

    name: str
    object: str
    distribution: str | None
    version: str | None
    enabled: bool


def sink_catalog(enabled: tuple[str, ...] = ()) -> list[SinkInfo]:
    """Every entry point of `dlt_contract_ops.alert_sinks`, sorted by name; `enabled` the
    names a project enables (`dlt-contract-ops sinks`)."""
    out = []
    for name, ep in sorted(registered(SINK_GROUP).items()):
        dist = getattr(ep, "dist", None)
        out.append(
            SinkInfo(
                name=name,
                object=ep.value,
                distribution=getattr(dist, "name", None),
                version=getattr(dist, "version", None),
                enabled=name in enabled,
            )
        )
    return out


def resolve(member: Any) -> Any:
    """`member` itself, or the object its import path `"module:attr"` names.

    >>> resolve("os.path:join") is __import__("os").path.join
    True
    """
    if not isinstance(member, str):
        return member
    import importlib

    module, _, attr = member.partition(":")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


def clear_cache() -> None:
    """Forget the cached entry points (after installing a plugin in the same process)."""
    _every.cache_clear()
    _group.cache_clear()
