"""`dlt-contract-ops sinks`: the registered alert sinks and where each comes from."""

from __future__ import annotations

import click


def _project_sinks(project_dir: str | None) -> tuple[tuple[str, ...], str | None]:
    """The project's `alert_sinks`, or () and why they could not be read."""
    from dlt_contract_ops.errors import ContractOpsError
    from dlt_contract_ops.settings import load_project_settings, project_context

    try:
        with project_context(project_dir):
            return load_project_settings().alert_sinks, None
    except ContractOpsError as exc:
        return (), str(exc)


@click.command()
@click.option("--project-dir", type=click.Path(file_okay=False), default=None,
              help="Mark the sinks this project enables. Default: the current directory.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def sinks(project_dir: str | None, fmt: str) -> None:
    """List the registered alert sinks and the distribution each comes from."""
    from dlt_contract_ops.registry import sink_catalog

    enabled, problem = _project_sinks(project_dir)
    catalog = sink_catalog(enabled)
    missing = [n for n in enabled if n not in {s.name for s in catalog}]
    if fmt == "json":
        from dlt_contract_ops.output.documents import sinks_json

        click.echo(sinks_json(catalog, missing))
        return
    width = max([len(s.name) for s in catalog] + [4])
    for s in catalog:
        mark = "*" if s.enabled else " "
        dist = f"{s.distribution} {s.version}" if s.distribution else "(unknown distribution)"
        click.echo(f"{mark} {s.name:<{width}}  {dist:<28}  {s.object}")
    for name in missing:
        click.echo(f"✗ {name:<{width}}  enabled in alert_sinks but not registered "
                   "(run `dlt-contract-ops validate`)")
    click.echo("* enabled in this project's `[contract_ops] alert_sinks`")
    if problem:
        click.echo(f"! cannot read the project's alert_sinks: {problem}", err=True)
