"""`dlt-contract-ops models infer`: parse, call `infer.service.infer_models`, render."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from dlt_contract_ops.commands.common import (
    SOURCES_HELP,
    project_dir_option,
    selected_by,
    source_error,
    usage_error,
)

if TYPE_CHECKING:
    from dlt_contract_ops.infer.service import InferReport


def render(report: InferReport, dry_run: bool) -> tuple[str, str]:
    """(stdout, stderr): with `dry_run` stdout is only the binding TOML, so it can be
    redirected into `.dlt/config.toml`."""
    verb = "would write" if dry_run else "wrote"
    lines = [f"{verb} `{m.path}`: model of table `{m.table}` (resource `{m.resource}`)"
             + ("" if m.ref else "; outside the project: bind it by hand")
             for m in report.models]
    lines += [f"note: {n}" for n in report.notes]
    if report.bindings and not dry_run:
        lines.append(f"Bound the models in `{report.config_file}`.")
    summary = "".join(f"{line}\n" for line in lines)
    return (report.bindings, summary) if dry_run else (summary, "")


@click.group()
def models() -> None:
    """Write Pydantic models for what dlt loaded."""


@models.command()
@click.option("-s", "--source", "sources", multiple=True, metavar="NAME", help=SOURCES_HELP)
@click.option("--all", "all_sources", is_flag=True, help="Every declared source.")
@click.option("--pipeline", default=None, metavar="NAME",
              help="A local dlt pipeline, declared as a source or not.")
@click.option("--from-odcs", "from_odcs", default=None, metavar="FILE",
              help="The models an ODCS v3 document (YAML) declares, instead of a loaded table's.")
@click.option("--out", default=None, metavar="DIR",
              help="Folder for the modules, under the project. Default: inferred_models.")
@click.option("--dry-run", is_flag=True,
              help="Write nothing; print the `[sources.X.contract_ops.models]` bindings.")
@click.option("--force", is_flag=True,
              help="Overwrite existing modules; infer again the resources bound by configuration.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--code-set-max-values", type=click.IntRange(min=0), default=None, metavar="N",
              help="A text column with at most N distinct values is a code set. Default: "
              "[contract_ops.infer] code_set_max_values, else 10.")
@click.option("--code-set-min-rows", type=click.IntRange(min=0), default=None, metavar="N",
              help="...over at least N non-NULL rows. Default: [contract_ops.infer] "
              "code_set_min_rows, else 100.")
@project_dir_option
def infer(
    sources: tuple[str, ...], all_sources: bool, pipeline: str | None,
    from_odcs: str | None, out: str | None, dry_run: bool, force: bool, fmt: str,
    code_set_max_values: int | None, code_set_min_rows: int | None, project_dir: str | None,
) -> None:
    """A Pydantic model module for each loaded table whose resource has no model, bound to
    its resource in .dlt/config.toml; or (`--from-odcs FILE`) the models an ODCS document
    declares."""
    from dlt_contract_ops.errors import ConfigError, ContractOpsError, UnsupportedDestinationError
    from dlt_contract_ops.infer.service import infer_models

    if sum((bool(sources), all_sources, pipeline is not None, from_odcs is not None)) != 1:
        usage_error(ValueError(
            "Pass one of `-s SOURCE`, `--all`, `--pipeline NAME` or `--from-odcs FILE`."))
    if sources:
        sources = tuple(selected_by(sources, project_dir))
    try:
        if from_odcs is not None:
            from dlt_contract_ops.infer.odcs_import import import_odcs

            report = import_odcs(from_odcs, out=out, project_dir=project_dir, dry_run=dry_run,
                                 force=force)
        else:
            report = infer_models(
                sources, all_sources=all_sources, pipeline=pipeline, out=out,
                project_dir=project_dir, dry_run=dry_run, force=force,
                code_set_max_values=code_set_max_values, code_set_min_rows=code_set_min_rows,
            )
    except (ConfigError, UnsupportedDestinationError) as exc:  # the request is at fault
        usage_error(exc)
    except ContractOpsError as exc:  # the destination or the source could not answer
        source_error(exc)
    if fmt == "json":
        from dlt_contract_ops.output.documents import infer_json

        click.echo(infer_json(report))
        return
    stdout, stderr = render(report, dry_run)
    click.echo(stdout, nl=False)
    click.echo(stderr, nl=False, err=True)
