"""What every command shares: exit codes, the `--project-dir` option, error output."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

import click

EXIT_OK = 0
#: a source errored (reconcile), problems found (validate), BLOCKED (contract check)
EXIT_SOURCE_ERROR = 1
EXIT_USAGE = 2
EXIT_DRIFT = 3
#: 128 + the signal number, as shells report a process stopped by SIGINT / SIGTERM
EXIT_SIGINT = 130
EXIT_SIGTERM = 143

#: `-s NAME` of a command that reads one source's tables (`profile`, `gate check`, `contract
#: check`): a declared source, or the tables grouped under one `source_name`
ONE_SOURCE_HELP = ("A source declared in [sources.NAME.contract_ops], or the one table whose "
                   "source_name is NAME.")
#: `-s NAME` of a command that sweeps sources (`reconcile`, `report`), repeatable
SOURCES_HELP = ("A source declared in [sources.NAME.contract_ops] (and the tables of its other "
                "pipelines: source_name = NAME); repeatable.")

project_dir_option = click.option(
    "--project-dir", type=click.Path(file_okay=False), default=None,
    help="The dlt project (holds .dlt/). Default: the current directory.",
)


def error_line(message: str) -> str:
    r"""`message` as printed after `Error: `: one line, every line break and control in it
    escaped (a name holding `\n` or ESC, an id typed with a line break, a driver's
    multi-line text), so nothing can forge or hide a line.

    >>> error_line("Unknown finding id `a\nb\x1b`.\n")
    'Unknown finding id `a\\nb\\u001b`.'
    """
    from dlt_contract_ops.core.escaping import visible

    return visible(message.strip())


def usage_error(exc: BaseException) -> NoReturn:
    """Print `Error: ...` on stderr, on one line (`error_line`), and exit 2."""
    click.echo(f"Error: {error_line(str(exc))}", err=True)
    sys.exit(EXIT_USAGE)


def source_error(exc: BaseException) -> NoReturn:
    """Print `Error: ...` on stderr, on one line, and exit 1: a valid request the destination
    or a local file could not answer (unreachable, timed out, locked)."""
    click.echo(f"Error: {error_line(str(exc))}", err=True)
    sys.exit(EXIT_SOURCE_ERROR)


def selected_by(
    names: Sequence[str], project_dir: str | None, *, one: bool = False
) -> list[str]:
    """The declared tables `-s NAME ...` selects, as `reconcile -s` selects them
    (`sources.onboarding.selected_sources`: a source loaded by several pipelines selects the
    table of each), for a command whose work takes table names; `one` for a command that acts
    on one table. A name nothing declares is kept (the work names it unknown); a name that
    selects several tables for `one` is one line, exit 2."""
    from dlt_contract_ops.errors import ConfigError
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.sources.onboarding import selected_sources

    try:
        with project_context(project_dir):
            return selected_sources(names, one=one)
    except ConfigError as exc:
        usage_error(exc)


def started() -> None:
    """The command's start-up is over (modules imported, settings read). When the console
    script held the cycle collector off (`cli.console`), what start-up made is frozen (it
    lives until exit: no later collection walks it again) and the collector runs again for
    what the work makes. Otherwise (a library caller, a test) nothing changes."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


#: native libraries whose runtime threads can abort the interpreter on its way out, after the
#: command is done (deltalake's: "terminate called without an active exception", exit 134)
ABORTING_AT_EXIT = ("deltalake", "pyiceberg_core")


def exit_process(run: Callable[[], object], *, skip_teardown: bool = False) -> NoReturn:
    """Run a command as the whole process and end the process with the command's own exit
    code. Where a library in `ABORTING_AT_EXIT` was imported, the interpreter's shutdown is
    skipped (`os._exit`) once stdout, stderr and the logging handlers are flushed: by then
    the command has flushed its sinks and written its state, and nothing else is left.

    `skip_teardown` (the console script): the interpreter's teardown is skipped too where
    nothing can be waiting for it. Once the command returned, with no other thread that
    is not a daemon alive, the `atexit` handlers are run (dlt's telemetry, logging, a
    user's own), stdout and stderr flushed, and the process ends with `os._exit`. What that
    leaves out is Python freeing every object one by one (dlt's, Pydantic's and sqlglot's
    modules): 0.03-0.05 s of a cold `reconcile`, measured in docs/performance.md. A caller
    that runs the command in its own process (a test, dlt's CLI) passes nothing."""
    try:
        run()
        code = EXIT_OK
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or EXIT_OK
        else:  # `sys.exit("message")`: printed, and exit 1, as the interpreter does
            print(exc.code, file=sys.stderr)
            code = EXIT_SOURCE_ERROR
    aborting = any(name in sys.modules for name in ABORTING_AT_EXIT)
    if not aborting and not (skip_teardown and _nothing_waits_for_teardown()):
        sys.exit(code)
    import logging

    if not aborting:
        import atexit

        # what the interpreter runs first on its way out; their errors are printed, not
        # raised, as it prints them (`logging.shutdown` is one of them)
        atexit._run_exitfuncs()
    logging.shutdown()
    _flush_standard_streams()
    os._exit(code)


def _flush_standard_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing reaches it
            stream.flush()


def _nothing_waits_for_teardown() -> bool:
    """No thread the interpreter would wait for at exit (one that is not a daemon, a pool's
    worker) is alive, and this Python runs its `atexit` handlers on request."""
    import atexit
    import threading

    if not hasattr(atexit, "_run_exitfuncs"):
        return False
    main = threading.main_thread()
    return all(t is main or t.daemon or not t.is_alive() for t in threading.enumerate())
