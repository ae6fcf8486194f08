"""The project's TOML files as dlt reads them, each parsed once per project context.

dlt's providers hold the merged values; for provenance (which file sets a key), unknown-key
checks and clear syntax errors we read the same files dlt loads, in dlt's order: the project's
`.dlt/` before the global one, `secrets.toml` before `config.toml`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from dlt_contract_ops.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


@dataclass(frozen=True)
class TomlFile:
    """One TOML file dlt reads: where it is, how to show it, whether it holds secrets."""

    path: Path
    shown: str
    secret: bool
    doc: Mapping[str, Any]


def env_name(key: str) -> str:
    """The environment variable dlt reads for the dotted `key`.

    >>> env_name("contract_ops.removal.recent_window")
    'CONTRACT_OPS__REMOVAL__RECENT_WINDOW'
    """
    return "__".join(key.upper().split("."))


def run_dir() -> Path:
    import dlt

    return Path(os.path.abspath(dlt.current.run_context().run_dir))


def shown(path: Path) -> str:
    """`path` relative to the project when inside it (`.dlt/secrets.toml`), else absolute."""
    try:
        return str(path.resolve().relative_to(run_dir().resolve()))
    except ValueError:
        return str(path)


def parse_toml(path: Path) -> Mapping[str, Any]:
    """The document at `path`; ConfigError naming the file, line and column when broken."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"`{path}` is not valid TOML: {exc}. Fix the file (dlt cannot read it either)."
        ) from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read `{path}`: {exc}") from exc


def toml_files() -> list[TomlFile]:
    """Every TOML file dlt's providers load in the current project context, first wins
    (parsed once per `project_context`)."""
    memo = context_memo()
    if memo is not None and "toml_files" in memo:
        return list(memo["toml_files"])
    files = _read_toml_files()
    if memo is not None:
        memo["toml_files"] = tuple(files)
    return files


def _read_toml_files() -> list[TomlFile]:
    import dlt

    base = run_dir()
    out: list[TomlFile] = []
    seen: set[Path] = set()
    for provider in dlt.config.config_providers:
        locations = getattr(provider, "locations", None) or []
        for location in locations:
            path = Path(location)
            path = (path if path.is_absolute() else base / path).resolve()
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            secret = bool(getattr(provider, "supports_secrets", False))
            out.append(TomlFile(path, shown(path), secret, parse_toml(path)))
    return out


def dig(doc: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    """(found, value) of the dotted key in a parsed document."""
    node: Any = doc
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def locate(dotted: str) -> str | None:
    """Where `dotted` is set: an environment variable or a TOML file; None when unset."""
    var = env_name(dotted)
    if var in os.environ:
        return f"environment variable {var}"
    for f in toml_files():
        if dig(f.doc, dotted)[0]:
            return f.shown
    return None


def _check_toml_syntax(target: Path) -> None:
    """Name the broken file before dlt fails on it with a long traceback."""
    import dlt

    names = ("secrets.toml", "config.toml")
    # the project's own files first: dlt's default run context (created on first use, in the
    # current directory, which is usually the project) reads them and raises on a bad one
    for path in (target / ".dlt" / name for name in names):
        if path.is_file():
            parse_toml(path)
    try:
        global_dir = Path(dlt.current.run_context().global_dir)
    except Exception as exc:  # the default context could not read the current directory's
        cwd = Path(os.environ.get("DLT_PROJECT_DIR") or os.getcwd()) / ".dlt"
        for path in (cwd / name for name in names):
            if path.is_file():
                parse_toml(path)
        raise ConfigError(
            f"dlt cannot load its configuration: {' '.join(str(exc).split())}"
        ) from None
    for path in (global_dir / name for name in names):
        if path.is_file():
            parse_toml(path)


#: the innermost `project_context`: its folder and its memo (what was read from its settings)
_ACTIVE: ContextVar[tuple[str, dict[Any, Any]] | None] = ContextVar(
    "dlt_contract_ops_project", default=None
)


def context_memo() -> dict[Any, Any] | None:
    """The memo of the `project_context` the caller runs in, where what is read from the
    project's settings is kept for the rest of the context; None outside one."""
    active = _ACTIVE.get()
    return active[1] if active is not None else None


_T = TypeVar("_T")


def memoized(key: tuple[Any, ...], compute: Callable[[], _T]) -> _T:
    """`compute()` once per project context and environment (a value read from settings:
    dlt's providers are fixed for the context, the environment is part of the key); called
    every time outside a context. A raised error is not kept."""
    memo = context_memo()
    if memo is None:
        return compute()
    full = (key, frozenset(os.environ.items()))
    if full not in memo:
        memo[full] = compute()
    return memo[full]  # type: ignore[no-any-return]


@contextlib.contextmanager
def project_context(project_dir: str | os.PathLike[str] | None) -> Iterator[str]:
    """Point dlt's run context (its `.dlt/` settings and local files) at `project_dir`.

    The previous run directory is restored on exit, so a library caller's own dlt context is
    left as it was. A folder that does not exist and a TOML file with a syntax error are
    ConfigErrors naming the path (and line and column). Inside a context of the same folder
    (the CLI's, around the whole command) it changes nothing: the settings are read once.
    """
    import dlt  # (initializes the default run context)
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    target = os.path.abspath(os.fspath(project_dir)) if project_dir is not None else os.getcwd()
    active = _ACTIVE.get()
    if active is not None and active[0] == target and (
        os.path.abspath(dlt.current.run_context().run_dir) == target
    ):
        yield target
        return
    if not os.path.isdir(target):
        raise ConfigError(
            f"Project directory `{target}` does not exist: pass the folder that holds `.dlt/` "
            "to `--project-dir`."
        )
    _check_toml_syntax(Path(target))
    ctx = Container()[PluggableRunContext]
    previous = ctx.context.run_dir
    # Always reload, even when the run dir already names the target: dlt's default run dir
    # is the relative ".", whose TOML files were read in whatever directory was current at
    # the time, and files edited since then would otherwise go unseen.
    try:
        ctx.reload(target)
    except Exception as exc:  # dlt's provider errors: keep its message, drop the traceback
        ctx.reload(previous)
        raise ConfigError(f"dlt cannot load the configuration of `{target}`: {exc}") from exc
    token = _ACTIVE.set((target, {}))
    try:
        yield target
    finally:
        _ACTIVE.reset(token)
        ctx.reload(previous)
