"""The `dlt-contract-ops` console script; the commands live in `dlt_contract_ops.commands`."""

from __future__ import annotations

import gc
from typing import NoReturn

from dlt_contract_ops.commands import main
from dlt_contract_ops.commands.common import (
    EXIT_DRIFT,
    EXIT_OK,
    EXIT_SOURCE_ERROR,
    EXIT_USAGE,
    exit_process,
)

__all__ = ["EXIT_DRIFT", "EXIT_OK", "EXIT_SOURCE_ERROR", "EXIT_USAGE", "console", "main"]


def console() -> NoReturn:
    """The console script: the click group as the whole process, whose exit code is the
    command's own even where a native library would abort the interpreter's shutdown
    (`exit_process`), with Python's cycle collector held off while the command starts
    (`commands.common.started` lets it run again).

    Start-up makes millions of objects that live until the process exits (dlt's, Pydantic's
    and sqlglot's modules, the settings) and almost no garbage, yet each full collection on
    the way walks all of them: a cron run's start-up spent about a third of its CPU there.
    """
    gc.disable()

    def run() -> None:
        try:
            main.main(prog_name="dlt-contract-ops")
        finally:
            gc.enable()

    exit_process(run, skip_teardown=True)


if __name__ == "__main__":  # pragma: no cover
    console()
