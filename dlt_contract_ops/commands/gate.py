"""`dlt-contract-ops gate check`: would this source's next batch pass the ingest gate?"""

from __future__ import annotations

import sys

import click

from dlt_contract_ops.commands.common import (
    EXIT_DRIFT,
    EXIT_OK,
    ONE_SOURCE_HELP,
    project_dir_option,
    selected_by,
    source_error,
    usage_error,
)


@click.group()
def gate() -> None:
    """The ingest gate: reject a breaking batch before any trusted row changes."""


@gate.command()
@click.option("-s", "--source", required=True, metavar="NAME", help=ONE_SOURCE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--fail-on-drift", is_flag=True, help="Exit 3 when the batch would be rejected.")
@project_dir_option
def check(source: str, fmt: str, fail_on_drift: bool, project_dir: str | None) -> None:
    """Extract, normalize and compare the source's batch with its contract; never load.

    Exit 0 when the batch is admissible (or rejected without --fail-on-drift), 3 when it
    would be rejected with --fail-on-drift, 1 when the source cannot be checked."""
    from dlt_contract_ops.errors import ConfigError, ContractOpsError
    from dlt_contract_ops.ingest.check import check_source

    [source] = selected_by([source], project_dir, one=True)
    try:
        report = check_source(source, project_dir)
    except ConfigError as exc:
        usage_error(exc)
    except ContractOpsError as exc:
        source_error(exc)
    rejected = report.action == "rejected"
    if fmt == "json":
        from dlt_contract_ops.output.documents import gate_json

        click.echo(gate_json(report))
    else:
        verdict = "REJECTED" if rejected else "ADMISSIBLE"
        click.echo(f"Gate: {source} (pipeline {report.pipeline})  |  {verdict}")
        for d in report.differences:
            mark = "✓" if d.approved else "✗"
            types = f"{d.observed_type or '-'} (expected {d.expected_type or '-'})"
            hint = f", renamed from {d.renamed_from}?" if d.renamed_from else ""
            click.echo(f"  {mark} {d.change:<8} {d.label}: {types}{hint}")
        click.echo(f"  Reason: {report.reason}")
        for note in report.notes:
            click.echo(f"  ! {note}")
    sys.exit(EXIT_DRIFT if rejected and fail_on_drift else EXIT_OK)


@gate.command()
@click.option("-s", "--source", required=True, metavar="NAME", help=ONE_SOURCE_HELP)
@project_dir_option
def finish(source: str, project_dir: str | None) -> None:
    """Finish a hand-over a stopped gated run left: install the state that goes with the
    packages the gate accepted, and load them (as the next gated run would, first).

    Exit 0 when done (or nothing was pending), 1 when the load failed or the pipeline also
    holds a package no gate checked, 2 for a configuration error."""
    from dlt_contract_ops.engine.handover import finish_handover_of
    from dlt_contract_ops.errors import ConfigError, ContractOpsError

    [source] = selected_by([source], project_dir, one=True)
    try:
        pipeline, loaded = finish_handover_of(source, project_dir)
    except ConfigError as exc:
        usage_error(exc)
    except ContractOpsError as exc:
        source_error(exc)
    if loaded:
        click.echo(f"Loaded {len(loaded)} package(s) a gate accepted into pipeline "
                   f"`{pipeline}`: {', '.join(loaded)}.")
    else:
        click.echo(f"No hand-over pending on pipeline `{pipeline}`.")
    sys.exit(EXIT_OK)
