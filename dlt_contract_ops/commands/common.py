"""What every command shares: exit codes, the `--project-dir` option, error output."""

from __future__ import annotations

import gc
import sys
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

project_dir_option = click.option(
    "--project-dir", type=click.Path(file_okay=False), default=None,
    help="The dlt project (holds .dlt/). Default: the current directory.",
)


def error_lines(message: str) -> str:
    r"""`message` as printed: each of its lines with any name's controls escaped, the lines
    after the first indented (dlt's own multi-line text, such as the keys it tried, stays
    readable and cannot pass for a line of ours).

    >>> error_lines("Bad `a\x1b`.\n  tried: x")
    'Bad `a\\u001b`.\n      tried: x'
    """
    from dlt_contract_ops.core.escaping import visible

    first, *rest = message.strip().splitlines() or [""]
    return "\n".join([visible(first), *(f"    {visible(line)}" for line in rest if line.strip())])


def usage_error(exc: BaseException) -> NoReturn:
    """Print `Error: ...` on stderr (one line, unless dlt's message has its own), any name's
    controls escaped, and exit 2."""
    click.echo(f"Error: {error_lines(str(exc))}", err=True)
    sys.exit(EXIT_USAGE)


def source_error(exc: BaseException) -> NoReturn:
    """Print `Error: ...` on stderr, on one line, and exit 1: a valid request the destination
    or a local file could not answer (unreachable, timed out, locked)."""
    click.echo(f"Error: {error_lines(str(exc))}", err=True)
    sys.exit(EXIT_SOURCE_ERROR)


def started() -> None:
    """The command's start-up is over (modules imported, settings read). When the console
    script held the cycle collector off (`cli.console`), what start-up made is frozen (it
    lives until exit: no later collection walks it again) and the collector runs again for
    what the work makes. Otherwise (a library caller, a test) nothing changes."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
