"""Find, check and construct an alert sink by name from the `dlt_contract_ops.alert_sinks`
entry-point group (built-ins take the same path as third-party sinks)."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from dlt_contract_ops.errors import (
    AlertSinkError,
    OptionProblem,
    SinkOptionError,
    did_you_mean,
)
from dlt_contract_ops.registry import SINK_GROUP, load, registered
from dlt_contract_ops.sinks.base import AlertSink
from dlt_contract_ops.sinks.options import (
    OptionValue,
    env_name,
    read_sink_options,
    table_name,
)
from dlt_contract_ops.sinks.spec import resolve_options

log = logging.getLogger("dlt_contract_ops")


def unknown_sink_message(name: str) -> str:
    """"Unknown alert sink 'sentri'. Did you mean 'sentry'?" plus what is registered."""
    names = sorted(registered(SINK_GROUP))
    return (
        f"Unknown alert sink '{name}'.{did_you_mean(name, names, show=quoted)}"
        f" Registered sinks: {', '.join(names) or 'none'}."
    )


def quoted(name: str) -> str:
    """A sink name as the sink messages show it: `'sentry'` (their own quoting, kept)."""
    return f"'{name}'"


def _distribution(name: str) -> str | None:
    ep = registered(SINK_GROUP).get(name)
    dist = getattr(ep, "dist", None)
    return getattr(dist, "name", None)


def load_factory(name: str) -> Any:
    """Import the object registered as `name`; AlertSinkError naming the fix when impossible."""
    try:
        return load(SINK_GROUP, name)
    except KeyError:
        raise AlertSinkError(unknown_sink_message(name)) from None
    except Exception as exc:  # an entry point can fail to import in any way
        dist = _distribution(name) or "the package that provides it"
        raise AlertSinkError(
            f"Alert sink '{name}' cannot be imported: {type(exc).__name__}: {exc}. "
            f"Reinstall {dist}."
        ) from exc


def _parameters(factory: Any) -> tuple[set[str], set[str], bool]:
    """(accepted option names, required option names, accepts **kwargs)."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or C callable: let construction decide
        return set(), set(), True
    accepted: set[str] = set()
    required: set[str] = set()
    var_kw = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            var_kw = True
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            accepted.add(p.name)
            if p.default is p.empty:
                required.add(p.name)
    return accepted, required, var_kw


def _check_options(name: str, factory: Any, options: Mapping[str, OptionValue]) -> None:
    """Unknown, missing and misplaced-secret options, each named with its file."""
    accepted, required, var_kw = _parameters(factory)
    secret = frozenset(getattr(factory, "secret_options", ()) or ())
    problems: list[OptionProblem] = []
    if not var_kw:
        for key, opt in sorted(options.items()):
            if key not in accepted:
                hint = did_you_mean(key, accepted)
                problems.append(OptionProblem(key, opt.origin, (
                    f"Unknown option `{key}` for alert sink '{name}' in `{table_name(name)}` "
                    f"({opt.origin}).{hint} Known options: {', '.join(sorted(accepted)) or 'none'}."
                )))
    for key in sorted(secret & set(options)):
        opt = options[key]
        if not opt.secret:
            problems.append(OptionProblem(key, opt.origin, (
                f"Option `{key}` of alert sink '{name}' is a secret but is set in {opt.origin}: "
                f"move it to `{table_name(name)}` in .dlt/secrets.toml (or the environment "
                f"variable `{env_name(f'contract_ops.alert_sink.{name}.{key}')}`)."
            )))
    for key in sorted(required - set(options)):
        where = ".dlt/secrets.toml" if key in secret else ".dlt/config.toml"
        problems.append(OptionProblem(key, "(not set)", (
            f"Alert sink '{name}' needs option `{key}`: set it in `{table_name(name)}` in "
            f"{where} (or the environment variable "
            f"`{env_name(f'contract_ops.alert_sink.{name}.{key}')}`)."
        )))
    if problems:
        raise SinkOptionError.of(name, problems)


def construct(name: str, factory: Any, options: Mapping[str, Any]) -> AlertSink:
    """Call `factory(**options)` and check the result implements AlertSink."""
    try:
        sink = factory(**options)
    except AlertSinkError:
        raise
    except (TypeError, ValueError) as exc:
        raise AlertSinkError(
            f"Alert sink '{name}' rejected its options from `{table_name(name)}`: {exc}"
        ) from exc
    except Exception as exc:
        raise AlertSinkError(
            f"Alert sink '{name}' failed to start: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(sink, AlertSink):
        missing = [m for m in ("emit_drift", "emit_error", "flush") if not hasattr(sink, m)]
        raise AlertSinkError(
            f"Alert sink '{name}' ({getattr(factory, '__qualname__', factory)!r}) does not "
            f"implement the AlertSink protocol: missing {', '.join(missing)}."
        )
    return sink


def load_sink(name: str, options: Mapping[str, Any] | None = None) -> AlertSink:
    """Construct the sink registered as `name`.

    With `options=None` the options are read from `[contract_ops.alert_sink.<name>]` (config
    and secrets, with the checks above); a mapping is passed to the sink as given.

    >>> load_sink("logging")  # doctest: +ELLIPSIS
    <dlt_contract_ops.sinks.logging_sink.LoggingSink object at ...>
    """
    factory = load_factory(name)
    if options is None:
        resolved = read_sink_options(name)
        _check_options(name, factory, resolved)
        options = resolve_options(name, factory, {k: v.value for k, v in resolved.items()})
    return construct(name, factory, options)


def load_sinks(
    names: Sequence[str],
    given: Mapping[str, AlertSink],
    options: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    strict: bool = False,
) -> list[tuple[str, AlertSink]]:
    """(name, sink) of each of `names` (a name listed twice is one sink): the instance
    `given` under that name, else the sink loaded with `options[name]` (or its table).

    A sink that cannot be loaded raises its `AlertSinkError` when `strict` (the sinks built
    so far closed, never used); otherwise it is dropped with a WARNING naming it and why.
    """
    loaded: list[tuple[str, AlertSink]] = []
    for name in dict.fromkeys(names):
        if name in given:
            loaded.append((name, given[name]))
            continue
        try:
            loaded.append((name, load_sink(name, (options or {}).get(name))))
        except AlertSinkError as exc:
            if strict:
                for built, sink in loaded:
                    close = getattr(sink, "close", None)
                    if built not in given and callable(close):
                        close()
                raise
            log.warning("alert sink '%s' dropped for this run: %s", name, exc)
    return loaded
