"""The `dlt-contract-ops` console script; the commands live in `dlt_contract_ops.commands`."""

from __future__ import annotations

from dlt_contract_ops.commands import main
from dlt_contract_ops.commands.common import EXIT_DRIFT, EXIT_OK, EXIT_SOURCE_ERROR, EXIT_USAGE

__all__ = ["EXIT_DRIFT", "EXIT_OK", "EXIT_SOURCE_ERROR", "EXIT_USAGE", "main"]

if __name__ == "__main__":  # pragma: no cover
    main()
