"""`dlt-contract-ops validate`: check the project; exit 2 on what `reconcile` refuses, else 1
when anything is wrong."""

from __future__ import annotations

import sys

import click

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2


@click.command()
@click.option("--project-dir", type=click.Path(file_okay=False), default=None,
              help="The dlt project (holds .dlt/). Default: the current directory.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def validate(project_dir: str | None, fmt: str) -> None:
    """Check every declared source (importable, with models, destination resolved as
    `reconcile` resolves it, with an adapter) and every alert sink (registered, options
    construct it). Lists every problem with its file and key; exits 2 when any is one
    `reconcile` refuses with exit 2, else 1 when there is any."""
    from dlt_contract_ops.commands.common import usage_error
    from dlt_contract_ops.engine.validation import validate_project
    from dlt_contract_ops.errors import ConfigError

    try:
        report = validate_project(project_dir)
    except ConfigError as exc:
        usage_error(exc)
    if fmt == "json":
        from dlt_contract_ops.output.documents import validation_json

        click.echo(validation_json(report))
    else:
        for p in report.problems:
            click.echo(f"✗ {p.rule}: {p.key} ({p.file}): {p.message}")
        for note in report.notes:
            click.echo(f"! {note}")
        checked = (
            f"{len(report.sources)} source(s); alert sinks: {', '.join(report.sinks) or 'none'}"
        )
        if report.ok:
            click.echo(f"✓ project is valid: {checked}")
        else:
            click.echo(f"{len(report.problems)} problem(s) found: {checked}")
    if report.unusable:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_OK if report.ok else EXIT_PROBLEMS)
