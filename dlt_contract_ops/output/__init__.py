"""Every rendering of a reconcile's results, one pure function per format.

Each renderer takes the same `list[ReconcileResult]` and returns a document as a string:
text and JSON (`dlt_contract_ops.output.text`), JUnit XML, GitHub Actions workflow commands,
SARIF 2.1.0, and the self-contained HTML page of `dlt-contract-ops report`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads FORMATS for `--help`: no pydantic at import time
    from dlt_contract_ops.model.findings import ReconcileResult

#: the `reconcile --format` choices, in the order `--help` shows them
FORMATS: tuple[str, ...] = ("text", "json", "junit", "github", "sarif")
#: the `contract diff/check/lint --format` choices: every one but SARIF, which contracts
#: do not render
CONTRACT_FORMATS: tuple[str, ...] = tuple(f for f in FORMATS if f != "sarif")


def render(results: Sequence[ReconcileResult], fmt: str, *, dry_run: bool = False) -> str:
    """The `fmt` document of `results` (one of `FORMATS`); ValueError naming the known ones.

    >>> render([], "github")
    ''
    """
    # only the writer asked for is imported: a cron run's exit pays for one
    if fmt == "text":
        from dlt_contract_ops.output.text import to_text

        return to_text(results, dry_run=dry_run)
    if fmt == "json":
        from dlt_contract_ops.output.text import to_json

        return to_json(results) + "\n"
    if fmt == "junit":
        from dlt_contract_ops.output.junit import to_junit

        return to_junit(results)
    if fmt == "github":
        from dlt_contract_ops.output.github import to_github

        return to_github(results)
    if fmt == "sarif":
        from dlt_contract_ops.output.sarif import to_sarif

        return to_sarif(results)
    raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
