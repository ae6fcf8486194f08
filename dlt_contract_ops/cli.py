"""The `dlt-contract-ops` console script; the commands live in `dlt_contract_ops.commands`."""

from __future__ import annotations

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
    command's own even where a native library would abort the interpreter's shutdown."""
    exit_process(lambda: main.main(prog_name="dlt-contract-ops"))


if __name__ == "__main__":  # pragma: no cover
    console()
