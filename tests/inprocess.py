"""Run the CLI, or a snippet of user code, inside the test process as if it were its own.

A subprocess per assertion costs an interpreter start and the imports of dlt, pydantic and
sqlglot each time; most tests only need what the command prints and its exit code. These
helpers give the same `subprocess.CompletedProcess` (returncode, stdout, stderr kept apart)
from a call in this process, and put back what a process would have thrown away:

- the working directory, `os.environ`, `sys.path` and `sys.argv`;
- the user project's own modules (a later project with a module of the same name must import
  its own, as a fresh interpreter would);
- dlt's run context (which `.dlt/` folder its config providers read);
- the logging set-up the CLI does on start (`logging.basicConfig` on stderr, dlt's level).

What only a process shows stays a process: signals, `os._exit` crashes, console scripts and
the `dlt` executable's start (`Project.cli_process` / `Project.python_process`,
`Loaded.dlt`); `run_dlt` runs dlt's CLI itself in this process, its plugins discovered anew.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path


def _top_level_names(root: Path) -> set[str]:
    """Modules and packages a script in `root` would import from `root` itself."""
    names = set()
    for entry in root.iterdir():
        if entry.suffix == ".py":
            names.add(entry.stem)
        elif entry.is_dir() and (entry / "__init__.py").exists():
            names.add(entry.name)
    return names


#: where the test process's own code comes from: never evicted, whatever a project names
_KEEP = (str(Path(__file__).resolve().parents[1]) + os.sep, sys.prefix + os.sep,
         sys.base_prefix + os.sep)


def _evict(root: Path) -> None:
    """Forget the modules a fresh interpreter in `root` would import from its files: those
    loaded from `root`, and a user module of the same top-level name loaded from another
    project (an earlier test's); never this repository's or an installed package's. One
    pass over `sys.modules` (thousands of names, twice a call)."""
    from dlt_contract_ops.sources.fingerprints import absolute_path

    tops = _top_level_names(root)
    prefix = str(root.resolve()) + os.sep
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        other_copy = (name.partition(".")[0] in tops
                      and not absolute_path(path or "").startswith(_KEEP))
        if other_copy or (path and absolute_path(path).startswith(prefix)):
            del sys.modules[name]


@contextlib.contextmanager
def as_process(
    cwd: Path, argv: Sequence[str], *, read_config: bool, path: Sequence[str] | None = None
) -> Iterator[None]:
    """Enter `cwd` as a fresh process would, and restore this process's state on exit.

    `read_config`: point dlt's run context at `cwd` first (user code); the CLI does that
    itself (`project_context`). `path`: the process's whole `sys.path` (default: this one's
    with `cwd` first, as `python -c` has it)."""
    import dlt  # noqa: F401  (initializes dlt's default run context before we note it)
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    saved_cwd = os.getcwd()
    saved_env = dict(os.environ)
    saved_path = list(sys.path)
    saved_argv = list(sys.argv)
    root = logging.getLogger()
    saved_handlers = list(root.handlers)
    saved_level = root.level
    dlt_logger = logging.getLogger("dlt")
    saved_dlt_level = dlt_logger.level
    run_context = Container()[PluggableRunContext]
    previous_run_dir = run_context.context.run_dir

    try:
        os.chdir(cwd)
        if path is None:
            sys.path.insert(0, str(cwd))
        else:
            sys.path[:] = path
        sys.argv = list(argv)
        _evict(cwd)
        # a fresh process has no root handler: the CLI's `logging.basicConfig` must take
        # effect (pytest's capture handlers are put back afterwards)
        for handler in saved_handlers:
            root.removeHandler(handler)
        root.setLevel(logging.WARNING)
        if read_config:
            # dlt reads `.dlt/` of the cwd when it starts; a broken file fails the user's code
            # where it reads config, as in a fresh process, not this set-up
            with contextlib.suppress(Exception):
                run_context.reload(str(cwd))
        yield
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved_handlers:
            root.addHandler(handler)
        root.setLevel(saved_level)
        dlt_logger.setLevel(saved_dlt_level)
        _evict(cwd)
        sys.argv = saved_argv
        sys.path[:] = saved_path
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        try:
            run_context.reload(previous_run_dir)
        except Exception:  # the previous folder's TOML broke since: read the test's own cwd
            run_context.reload(saved_cwd)


def run_cli(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`dlt-contract-ops ARGS` in `cwd`, in this process: the real click group, the exit
    code it would exit with, stdout and stderr apart; an uncaught exception is exit 1 with
    its traceback on stderr, as the interpreter would print it."""
    from click.testing import CliRunner

    from dlt_contract_ops.commands import main

    argv = ["dlt-contract-ops", *args]
    with as_process(cwd, argv, read_config=False):
        result = CliRunner().invoke(main, list(args), prog_name="dlt-contract-ops")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(argv, result.exit_code, result.stdout, stderr)


def _exit_status(exc: SystemExit) -> int:
    """The status a process ends with on `exc`, as the interpreter computes it: a message
    is printed on stderr (status 1), a negative code wraps (`exit(-1)` is 255)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -c CODE` in `cwd`, in this process (a pipeline run, a query by hand)."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["-c"]
    returncode = 0
    with (
        as_process(cwd, argv, read_config=True),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
        except SystemExit as exc:
            returncode = _exit_status(exc)
        except BaseException:
            traceback.print_exc()
            returncode = 1
    return subprocess.CompletedProcess(argv, returncode, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _fresh_dlt_cli() -> Iterator[None]:
    """dlt's CLI as a new `dlt` process meets it, put back afterwards:

    - its plugins discovered again from the installed entry points, under the environment of
      the call (dlt keeps the discovery in its container for the rest of a process, and reads
      `DLT_DISABLE_PLUGINS` only then);
    - the switches a command sets for the rest of its process at their defaults (prompts,
      `--debug`, the host name, the telemetry action);
    - an empty stdin that is no terminal (the console script's `exit()` closes it);
    - no library loaded whose shutdown makes `exit_process` end the process with `os._exit`
      (an earlier test in this process may have imported one; a `dlt` process that does
      not import it exits through `SystemExit`, which is what is caught here)."""
    from dlt._workspace.cli import _debug, _dlt
    from dlt._workspace.cli import echo as fmt
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.plugins import PluginContext

    from dlt_contract_ops.commands.common import ABORTING_AT_EXIT

    container = Container()
    # not `container.get`: it would create the context it is asked for
    plugins = container[PluginContext] if PluginContext in container else None  # noqa: SIM401
    switches = [(module, name, getattr(module, name)) for module, name in (
        (fmt, "ALWAYS_CHOOSE_DEFAULT"), (fmt, "ALWAYS_CHOOSE_VALUE"), (fmt, "ALWAYS_CONFIRM"),
        (fmt, "_CLI_HOST"), (_debug, "_DEBUG_FLAG"), (_dlt, "ACTION_EXECUTED"),
    )]
    aborting = {name: module for name, module in sys.modules.items()
                if name.partition(".")[0] in ABORTING_AT_EXIT}
    saved_stdin = sys.stdin
    try:
        if plugins is not None:
            del container[PluginContext]
        for name in aborting:
            del sys.modules[name]
        sys.stdin = io.StringIO()
        yield
    finally:
        sys.stdin = saved_stdin
        sys.modules.update(aborting)
        for module, name, value in switches:
            setattr(module, name, value)
        if PluginContext in container:
            del container[PluginContext]
        if plugins is not None:
            container[PluginContext] = plugins


def run_dlt(
    args: Sequence[str], cwd: Path, env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    """`dlt ARGS` in `cwd` with `env` added to the environment, in this process: the `dlt`
    console script's own function (`dlt._workspace.cli._dlt:_main`) with the plugins it
    discovers (`_fresh_dlt_cli`), the status the process would exit with, stdout and stderr
    apart; an uncaught exception is exit 1 with its traceback on stderr.

    What only the executable shows (its interpreter's start, a plugin imported afresh)
    stays `Loaded.dlt`, a real process."""
    from dlt._workspace.cli._dlt import _main

    out, err = io.StringIO(), io.StringIO()
    argv = ["dlt", *args]
    # a console script's `sys.path`: its own folder, then the interpreter's (never the test
    # run's folders: dlt finds its plugins along `sys.path`, and this checkout holds the
    # project's `.egg-info` too, which would change the order the commands are listed in)
    installed = tuple(prefix + os.sep for prefix in (sys.prefix, sys.base_prefix))
    path = [str(Path(sys.executable).parent),
            *(entry for entry in sys.path if os.path.abspath(entry).startswith(installed))]
    saved_env = dict(os.environ)
    os.environ.update(env)
    try:
        with (
            _fresh_dlt_cli(),
            as_process(cwd, argv, read_config=True, path=path),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                _main()
                returncode = 0
            except SystemExit as exc:
                returncode = _exit_status(exc)
            except BaseException:
                traceback.print_exc()
                returncode = 1
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(argv, returncode, out.getvalue(), err.getvalue())
