"""`dlt-contract-ops report`: parse, call `engine.reconcile.run` (never alerting), render HTML,
exit."""

from __future__ import annotations

from typing import Any

import click

from dlt_contract_ops.commands.common import project_dir_option, started
from dlt_contract_ops.commands.reconcile import (
    DetectorFlags,
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
@click.option("-s", "--source", "sources", multiple=True, metavar="NAME",
              help="A source declared in [sources.NAME.contract_ops]; repeatable.")
@click.option("--all", "all_sources", is_flag=True,
              help="Every declared source (the default).")
@project_dir_option
def report(
    html_file: str, sources: tuple[str, ...], all_sources: bool, project_dir: str | None,
    **options: Any,
) -> None:
    """Write one self-contained HTML page of every finding (read-only; sends no alerts).

    Runs every default detector and removal, so declared columns show their coverage; the
    `--include-<name>` flags add the other opt-in detectors.
    """
    if sources and all_sources:
        raise click.UsageError("Give either -s/--source NAME (repeatable) or --all, not both.")
    from datetime import datetime, timezone

    from dlt_contract_ops.detectors.registry import selected
    from dlt_contract_ops.engine.reconcile import check_source_names, run
    from dlt_contract_ops.model.findings import ReconcileResult
    from dlt_contract_ops.output.html import to_html
    from dlt_contract_ops.settings.files import project_context

    def call() -> list[ReconcileResult]:
        # one project context: the settings are read once (as for `reconcile`)
        with project_context(project_dir):
            # a mistyped `-s` is a usage error (exit 2, one line), as for `reconcile`
            check_source_names(sources, project_dir)
            started()
            return run(
                list(sources) or None,
                detectors=selected({"removal", *included(options)}),
                dry_run=True,
                alert_sinks=(),
                project_dir=project_dir,
                progress=progress_printer(),
            )

    results, interrupted = sweep(call)
    generated = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_document(to_html(results, generated=generated), html_file)
    click.echo(
        f"Wrote {html_file}: {len({r.source for r in results})} source(s), "
        f"{sum(len(r.findings) for r in results)} finding(s), "
        f"{sum(1 for r in results if r.error)} error(s)."
    )
    finish(results, interrupted)
