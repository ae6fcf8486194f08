"""`dlt-contract-ops report`: parse, gather what a sweep finds (`engine.report.Gatherer`, never
alerting), render HTML, exit."""

from __future__ import annotations

from typing import Any

import click

from dlt_contract_ops.commands.common import SOURCES_HELP, project_dir_option, started
from dlt_contract_ops.commands.reconcile import (
    DetectorFlags,
    check_output,
    finish,
    included,
    progress_printer,
    sweep,
    write_document,
)


class ReportFlags(DetectorFlags):
    """`--include-<name>` for every opt-in detector but removal, which a report always runs."""

    always = frozenset({"removal"})


@click.command(cls=ReportFlags)
@click.option("--html", "html_file", required=True, metavar="FILE",
              type=click.Path(dir_okay=False), help="Write the HTML page to FILE.")
@click.option("-s", "--source", "sources", multiple=True, metavar="NAME", help=SOURCES_HELP)
@click.option("--all", "all_sources", is_flag=True,
              help="Every declared source (the default).")
@project_dir_option
def report(
    html_file: str, sources: tuple[str, ...], all_sources: bool, project_dir: str | None,
    **options: Any,
) -> None:
    """Write one self-contained HTML page of what a scheduled sweep finds (read-only; sends
    no alerts, records nothing).

    Runs what `reconcile` runs: the default detectors and removal, the `--include-<name>`
    ones, and distribution once a profile store exists. The page opens with what is new and
    what was resolved since the last recorded sweep, then shows every finding with its
    details, each declared column's coverage per load, distribution and rename
    pictures, and each finding's history from the finding index (`reconcile` runs that are
    not dry runs record it).
    """
    if sources and all_sources:
        raise click.UsageError("Give either -s/--source NAME (repeatable) or --all, not both.")
    from dlt_contract_ops.engine.report import Gatherer
    from dlt_contract_ops.model.findings import ReconcileResult
    from dlt_contract_ops.output.html import to_html
    from dlt_contract_ops.settings.files import project_context

    check_output(html_file)
    gatherer = Gatherer(project_dir)

    def call() -> list[ReconcileResult]:
        # one project context: the settings are read once (as for `reconcile`)
        with project_context(project_dir):
            return gatherer.run(sources, included(options), progress_printer(), started)

    results, interrupted = sweep(call)
    report = gatherer.report(results)
    write_document(to_html(results, report=report), html_file)
    click.echo(
        f"Wrote {html_file}: {len({r.source for r in results})} source(s), "
        f"{sum(len(r.findings) for r in results)} finding(s), "
        f"{sum(1 for r in results if r.error)} error(s)."
    )
    since = report.since
    if since is not None and since.previous is not None:
        click.echo(f"  since the last sweep: {len(since.arrived)} new, back or grown; "
                   f"{len(since.resolved)} resolved")
    finish(results, interrupted)
