"""`dlt-contract-ops init`: parse, call `sources.init.init_project`, render."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from dlt_contract_ops.commands.common import project_dir_option, usage_error

if TYPE_CHECKING:
    from dlt_contract_ops.sources.init import InitReport


def render(report: InitReport, dry_run: bool) -> tuple[str, str]:
    """(stdout, stderr): with `dry_run` stdout is only the TOML, so it can be redirected."""
    lines = []
    for source in report.sources:
        table = f"[sources.{source.name}.contract_ops]"
        if source.declared_in:
            lines.append(f"kept {table}: declared already ({source.declared_in}), not "
                         "overwritten")
            continue
        verb = "would add" if dry_run else "added"
        where = f"pipeline `{source.pipeline_name}`" if source.pipeline_name else "no pipeline"
        if source.source_name:
            where += f", another pipeline of source `{source.source_name}`"
        what = ("no model yet" if source.unmodelled
                else f"{len(source.resources)} modelled resource(s)")
        lines.append(f"{verb} {table}: `{source.ref}` ({what}, {where})")
    lines += [f"note: {n}" for n in report.notes]
    if not report.sources:
        lines.append("No dlt source or resource with a Pydantic model (`columns=Model`), nor "
                     "a source without one that a local pipeline loaded, found.")
    elif report.written:
        lines.append(f"Wrote {len(report.added)} table(s) to `{report.config_file}`.")
    elif not report.added:
        lines.append(f"Nothing to add to `{report.config_file}`.")
    summary = "".join(f"{line}\n" for line in lines)
    return (report.toml, summary) if dry_run else (summary, "")


@click.command()
@project_dir_option
@click.option("--dry-run", is_flag=True, help="Print the TOML tables; write nothing.")
def init(project_dir: str | None, dry_run: bool) -> None:
    """Declare the project's dlt sources in .dlt/config.toml (those with Pydantic models, and
    those without that a local pipeline loaded: `models infer` writes their models)."""
    from dlt_contract_ops.errors import ConfigError
    from dlt_contract_ops.sources.init import init_project

    try:
        report = init_project(project_dir, dry_run=dry_run)
    except ConfigError as exc:
        usage_error(exc)
    out, err = render(report, dry_run)
    click.echo(out, nl=False)
    click.echo(err, nl=False, err=True)
