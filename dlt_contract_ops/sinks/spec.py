"""A sink's options as a dlt configspec, derived from its constructor.

A sink declares its options the Python way: keyword parameters with type hints and defaults,
plus `secret_options` naming the credentials. From that, `options_spec` builds a dlt
`@configspec` (secret options typed `TSecretStrValue`), so dlt resolves the values of
`[contract_ops.alert_sink.<name>]` with its own type coercion: `TIMEOUT=5` from the
environment arrives as the float `5.0`, `SEND_SAMPLES=false` as `False`. The checks dlt does
not make (an unknown option, a secret in config.toml) stay in `sinks.loader`, with the file.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, Optional

SINK_SECTION = "contract_ops.alert_sink"


def _hints(factory: Any) -> dict[str, Any]:
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        return typing.get_type_hints(target)
    except Exception:  # a hint that does not evaluate: let dlt take the value as it is
        return {}


@cache
def options_spec(factory: Any) -> Any:
    """The configspec class of `factory`'s keyword options (cached per factory)."""
    from dlt.common.configuration import configspec
    from dlt.common.configuration.specs import BaseConfiguration
    from dlt.common.typing import TSecretStrValue

    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        params = []  # type: ignore[assignment]  # a C callable: no spec, values as given
    hints = _hints(factory)
    secret = frozenset(getattr(factory, "secret_options", ()) or ())
    annotations: dict[str, Any] = {}
    for p in params:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        hint = TSecretStrValue if p.name in secret else hints.get(p.name, Any)
        annotations[p.name] = Optional[hint]  # noqa: UP045 (dlt evaluates it at runtime)
    namespace: dict[str, Any] = {"__annotations__": annotations}
    namespace.update(dict.fromkeys(annotations))
    name = f"{getattr(factory, '__name__', 'Sink')}Options"
    return configspec(type(name, (BaseConfiguration,), namespace))


def resolve_options(sink: str, factory: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The options set for `sink` (the keys of `given`), typed by dlt through the sink's
    spec.

    >>> from dlt_contract_ops.sinks.webhook import WebhookSink
    >>> sorted(options_spec(WebhookSink)().get_resolvable_fields())[:3]
    ['backoff', 'format', 'headers']
    """
    from dlt.common.configuration.exceptions import ConfigurationValueError

    from dlt_contract_ops.settings.resolve import resolve_exact

    spec = options_spec(factory)
    try:
        resolved = resolve_exact(spec(), tuple(f"{SINK_SECTION}.{sink}".split(".")))
    except ConfigurationValueError:
        # dlt cannot coerce a value: hand the values over as they are, so the sink's own
        # check names the option, what it got and what it takes ("must be true or false")
        return dict(given)
    out = {}
    for key, value in given.items():
        typed = resolved.get(key) if key in resolved else None
        out[key] = value if typed is None else typed
    return out
