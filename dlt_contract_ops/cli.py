"""The `dlt-contract-ops` command. It parses, calls one function, and renders."""

from __future__ import annotations

import logging
import sys

import click

from dlt_contract_ops.commands.sinks import sinks
from dlt_contract_ops.commands.validate import validate
from dlt_contract_ops.contracts.cli import contract

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
@click.option("--include-removal", is_flag=True,
              help="Also detect declared columns whose non-NULL coverage collapsed.")
@click.option("--recent-window", metavar="DURATION", default=None,
              help='Removal: the recent window, e.g. "6h" (default 6h).')
@click.option("--baseline-window", metavar="DURATION", default=None,
              help='Removal: the baseline window before it, e.g. "7d" (default 7d).')
@click.option("--baseline-threshold", type=float, default=None,
              help="Removal: baseline coverage must exceed this (default 0.20).")
@click.option("--recent-threshold", type=float, default=None,
              help="Removal: recent coverage must fall below this (default 0.01).")
@click.option("--no-dedup", is_flag=True,
              help="Send every finding to the alert sinks, even one already alerted recently.")
def reconcile(
    sources: tuple[str, ...],
    all_sources: bool,
    dry_run: bool,
    fmt: str,
    fail_on_drift: bool,
    project_dir: str | None,
    include_removal: bool,
    recent_window: str | None,
    baseline_window: str | None,
    baseline_threshold: float | None,
    recent_threshold: float | None,
    no_dedup: bool,
) -> None:
    """Diff the live destination schema against the models (read-only)."""
    if bool(sources) == all_sources:
        raise click.UsageError("Give either -s/--source NAME (repeatable) or --all, not both.")
    from dlt_contract_ops.errors import ConfigError
    from dlt_contract_ops.reconcile import ALL_DETECTORS, DETECTORS, run
    from dlt_contract_ops.render import to_json, to_text
    from dlt_contract_ops.sinks.dedup import recording_alerts

    try:
        flags = {
            "recent_window": recent_window,
            "baseline_window": baseline_window,
            "baseline_threshold": baseline_threshold,
            "recent_threshold": recent_threshold,
        }
        removal = {k: v for k, v in flags.items() if v is not None}
        with recording_alerts() as alerts:
            results = run(
                list(sources) or None,
                detectors=ALL_DETECTORS if include_removal else DETECTORS,
                dry_run=dry_run,
                project_dir=project_dir,
                removal=removal,
                dedup=not no_dedup,
            )
    except ConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if fmt == "json":
        click.echo(to_json(results, alerts=alerts))
    else:
        click.echo(to_text(results, dry_run=dry_run, alerts=alerts), nl=False)
    if any(r.error_kind == "config" for r in results):
        sys.exit(EXIT_USAGE)
    if any(r.error for r in results):
        sys.exit(EXIT_SOURCE_ERROR)
    if fail_on_drift and any(r.findings for r in results):
        sys.exit(EXIT_DRIFT)
    sys.exit(EXIT_OK)


# Subcommands living in their own modules; each keeps its heavy imports inside its body.
main.add_command(contract)
main.add_command(validate)
main.add_command(sinks)


if __name__ == "__main__":  # pragma: no cover
    main()
