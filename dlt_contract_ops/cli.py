"""The `dlt-contract-ops` command. It parses, calls one function, and renders."""

from __future__ import annotations

import logging
import sys

import click

EXIT_OK = 0
EXIT_SOURCE_ERROR = 1
EXIT_USAGE = 2
EXIT_DRIFT = 3


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s|[%(levelname)s]|%(name)s|%(message)s",
    )
    # dlt is chatty about dataset-name normalization; keep stderr about drift
    logging.getLogger("dlt").setLevel(logging.ERROR)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dlt-contract-ops")
@click.option("-v", "--verbose", is_flag=True, help="Debug logging on stderr.")
def main(verbose: bool) -> None:
    """Find and report drift between dlt resources' Pydantic models and the warehouse."""
    _setup_logging(verbose)


@main.command()
@click.option("-s", "--source", "sources", multiple=True, metavar="NAME",
              help="A source declared in [sources.NAME.contract_ops]; repeatable.")
@click.option("--all", "all_sources", is_flag=True, help="Every declared source.")
@click.option("--dry-run", is_flag=True, help="Print and return findings; emit no alerts.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--fail-on-drift", is_flag=True, help="Exit 3 when there are findings.")
@click.option("--project-dir", type=click.Path(file_okay=False), default=None,
              help="The dlt project (holds .dlt/). Default: the current directory.")
def reconcile(
    sources: tuple[str, ...],
    all_sources: bool,
    dry_run: bool,
    fmt: str,
    fail_on_drift: bool,
    project_dir: str | None,
) -> None:
    """Diff the live destination schema against the models (read-only)."""
    if bool(sources) == all_sources:
        raise click.UsageError("Give either -s/--source NAME (repeatable) or --all, not both.")
    from dlt_contract_ops.errors import ConfigError
    from dlt_contract_ops.reconcile import run
    from dlt_contract_ops.render import to_json, to_text

    try:
        results = run(list(sources) or None, dry_run=dry_run, project_dir=project_dir)
    except ConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if fmt == "json":
        click.echo(to_json(results))
    else:
        click.echo(to_text(results, dry_run=dry_run), nl=False)
    if any(r.error_kind == "config" for r in results):
        sys.exit(EXIT_USAGE)
    if any(r.error for r in results):
        sys.exit(EXIT_SOURCE_ERROR)
    if fail_on_drift and any(r.findings for r in results):
        sys.exit(EXIT_DRIFT)
    sys.exit(EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()
