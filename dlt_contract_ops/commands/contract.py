"""`dlt-contract-ops contract`: snapshot, diff and check semantic contracts.

Top-level imports stay at click only, so `dlt-contract-ops --help` stays fast; each command
imports its work when it runs. Exit codes: 0 READY, 1 BLOCKED, 2 usage or configuration error.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from dlt_contract_ops.commands.common import ONE_SOURCE_HELP, SOURCES_HELP

# light: the package's FORMATS module imports no pydantic
from dlt_contract_ops.output import CONTRACT_FORMATS

EXIT_READY = 0
EXIT_BLOCKED = 1
EXIT_USAGE = 2

_format_option = click.option(
    "--format", "fmt", type=click.Choice(CONTRACT_FORMATS), default="text", show_default=True,
    help="text for people; json for machines; junit and github for CI systems.",
)
_perspective_option = click.option(
    "--perspective", type=click.Choice(["consumer", "producer"]), default="consumer",
    show_default=True,
    help="Whose code must keep working: readers of the data, or writers to it.",
)
_schema_only_option = click.option(
    "--schema-only", is_flag=True,
    help="Judge only names and types, as a schema-only check would (shows its blind spot).",
)
_waivers_option = click.option(
    "--waivers", type=click.Path(dir_okay=False), default=None,
    help="TOML file of accepted breaks ([[waivers]] rule, resource, column, reason, expires).",
)
_project_option = click.option(
    "--project-dir", type=click.Path(file_okay=False), default=None,
    help="The dlt project (holds .dlt/). Default: the current directory.",
)


def _one(source: str, project_dir: str | None) -> str:
    """The one declared table `-s SOURCE` names (`commands.common.selected_by`)."""
    from dlt_contract_ops.commands.common import selected_by

    [table] = selected_by([source], project_dir, one=True)
    return table


def _fail(exc: Exception) -> None:
    from dlt_contract_ops.commands.common import usage_error

    usage_error(exc)


def _shown(path: Any) -> str:
    """`path` relative to the current directory when it is below it."""
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


def _emit(report: Any, fmt: str, locations: Any = None) -> None:
    from dlt_contract_ops.output.contract import render

    click.echo(render(report, fmt, locations), nl=False)
    sys.exit(EXIT_READY if report.ready else EXIT_BLOCKED)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def contract() -> None:
    """Semantic contracts: snapshot models, diff releases, check a release in CI, export ODCS."""


@contract.command()
@click.option("-s", "--source", required=True, metavar="NAME", help=ONE_SOURCE_HELP)
@click.option("--version", "version", required=True, metavar="X.Y.Z",
              help="The release version to file the snapshot under.")
@click.option("--out", type=click.Path(file_okay=False), default="contracts", show_default=True,
              help="Root folder of snapshots; files go to OUT/SOURCE/VERSION/RESOURCE.json.")
@click.option("--force", is_flag=True, help="Overwrite a snapshot of this version that differs.")
@_project_option
def snapshot(source: str, version: str, out: str, force: bool, project_dir: str | None) -> None:
    """Write the source's declared contracts as release X.Y.Z (canonical JSON per resource)."""
    from dlt_contract_ops.contracts.service import snapshot as run_snapshot
    from dlt_contract_ops.errors import ContractOpsError

    source = _one(source, project_dir)
    try:
        result = run_snapshot(source, version, out, project_dir=project_dir, force=force)
    except ContractOpsError as exc:
        _fail(exc)
        return
    click.echo(f"Contract snapshot `{result.source}` {result.version}:")
    for f in result.files:
        digest = f"  {f.content_hash[:19]}" if f.content_hash else ""
        click.echo(f"  {f.status:<9} {_shown(f.path)}{digest}")
    for note in result.notes:
        click.echo(f"  ! {note}")


@contract.command()
@click.option("--format", "fmt", type=click.Choice(["odcs"]), default="odcs", show_default=True,
              help="odcs: an Open Data Contract Standard v3.1 document (YAML) per source.")
@click.option("-s", "--source", "sources", multiple=True, metavar="NAME", help=SOURCES_HELP)
@click.option("--all", "all_sources", is_flag=True, help="Every declared source.")
@click.option("--out", type=click.Path(), default=None,
              help="A folder (files OUT/SOURCE.odcs.yaml) or, for one source, a .yaml file. "
                   "Default: print to standard output.")
@click.option("--version", "version", default=None, metavar="X.Y.Z",
              help="The contract version the document states (status active). Default: "
                   "0.0.0, status draft.")
@click.option("--destination", default=None, metavar="NAME",
              help="Write each column's type on this dlt destination (duckdb, postgres, ...) as "
                   "its physicalType. Default: the source's configured destination.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@_project_option
def export(
    fmt: str, sources: tuple[str, ...], all_sources: bool, out: str | None,
    version: str | None, destination: str | None, force: bool, project_dir: str | None,
) -> None:
    """Write the sources' declared contracts as Open Data Contract Standard documents: types,
    nullability, keys, units, time zones, code sets; the rest as custom properties."""
    from dlt_contract_ops.contracts.export import export_odcs
    from dlt_contract_ops.errors import ConfigError, ContractOpsError

    if bool(sources) == all_sources:
        raise click.UsageError("Give either -s/--source NAME (repeatable) or --all, not both.")
    try:
        if all_sources:
            from dlt_contract_ops.settings.files import project_context
            from dlt_contract_ops.settings.project import declared_sources

            with project_context(project_dir):
                sources = tuple(declared_sources())
            if not sources:
                raise ConfigError(
                    "No source is declared, so there is nothing to export: add a "
                    '`[sources.<name>.contract_ops]` table with `ref = "module:attribute"` to '
                    "`.dlt/config.toml`."
                )
        else:
            from dlt_contract_ops.commands.common import selected_by

            sources = tuple(selected_by(sources, project_dir))
        exports = export_odcs(sources, out, version=version, destination=destination,
                              project_dir=project_dir, force=force,
                              skip_unmodelled=all_sources)
    except ContractOpsError as exc:
        _fail(exc)
        return
    printed = [e.text for e in exports if e.path is None and not e.skipped]
    if printed:  # several documents to standard output: one YAML stream
        click.echo("---\n".join(printed), nl=False)
    for e in exports:
        if e.skipped:
            click.echo(f"Skipped `{e.source}`: {e.skipped}.", err=True)
        elif e.path is not None:
            click.echo(f"Exported `{e.source}` ({fmt}): {_shown(e.path)}", err=bool(printed))


@contract.command()
@click.argument("old", type=click.Path())
@click.argument("new", type=click.Path())
@_format_option
@_perspective_option
@_schema_only_option
@_waivers_option
def diff(
    old: str, new: str, fmt: str, perspective: str, schema_only: bool, waivers: str | None
) -> None:
    """Diff two snapshots (version folders or files) and check the release: exit 1 if BLOCKED."""
    from dlt_contract_ops.contracts.service import diff as run_diff
    from dlt_contract_ops.errors import ContractOpsError

    try:
        report = run_diff(
            old, new, perspective=perspective,  # type: ignore[arg-type]  # click.Choice
            schema_only=schema_only, waivers=waivers,
        )
    except ContractOpsError as exc:
        _fail(exc)
        return
    _emit(report, fmt)


@contract.command()
@click.option("-s", "--source", required=True, metavar="NAME", help=ONE_SOURCE_HELP)
@click.option("--against", type=click.Path(file_okay=False), default="contracts",
              show_default=True, help="Root folder of released snapshots.")
@click.option("--version", "version", default=None, metavar="X.Y.Z",
              help="The version this change will be released as. Default: the latest release "
                   "(so any change that needs a bump blocks).")
@click.option("--transitive", is_flag=True,
              help="Check against every released version, not only the latest.")
@_format_option
@_perspective_option
@_schema_only_option
@_waivers_option
@_project_option
def check(
    source: str,
    against: str,
    version: str | None,
    transitive: bool,
    fmt: str,
    perspective: str,
    schema_only: bool,
    waivers: str | None,
    project_dir: str | None,
) -> None:
    """Check the current models against released snapshots: exit 1 if BLOCKED.

    Waivers default to AGAINST/SOURCE/waivers.toml when that file exists.
    """
    from dlt_contract_ops.contracts.service import check as run_check
    from dlt_contract_ops.errors import ContractOpsError

    source = _one(source, project_dir)
    try:
        report, locations = run_check(
            source, against, version=version, transitive=transitive,
            perspective=perspective,  # type: ignore[arg-type]  # click.Choice
            schema_only=schema_only, waivers=waivers, project_dir=project_dir,
        )
    except ContractOpsError as exc:
        _fail(exc)
        return
    _emit(report, fmt, locations)


@contract.command()
@click.option("-s", "--source", required=True, metavar="NAME", help=ONE_SOURCE_HELP)
@_format_option
@click.option("--severity", "severities", multiple=True, metavar="RULE=LEVEL",
              help="Set a lint rule to error, warning or off, e.g. "
                   "`lint.owner_missing=error` (repeatable).")
@_project_option
def lint(source: str, fmt: str, severities: tuple[str, ...], project_dir: str | None) -> None:
    """Check the declared contracts before a release: every numeric column declares a unit,
    every timestamp a time zone, every categorical column its code set, every resource an
    owner. Exit 1 when a rule at level error finds something.
    """
    from dlt_contract_ops.contracts.service import lint as run_lint
    from dlt_contract_ops.errors import ContractOpsError
    from dlt_contract_ops.output.contract_lint import render_lint

    source = _one(source, project_dir)
    try:
        report, locations = run_lint(source, severities=severities, project_dir=project_dir)
    except ContractOpsError as exc:
        _fail(exc)
        return
    click.echo(render_lint(report, fmt, locations), nl=False)
    sys.exit(EXIT_BLOCKED if report.failed else EXIT_READY)


@contract.command()
@click.option("-s", "--source", "sources", required=True, multiple=True, metavar="NAME",
              help=SOURCES_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text for people; json as `reconcile --format json`.")
@click.option("--dry-run", is_flag=True, help="Print and return findings; emit no alerts.")
@click.option("--fail-on-drift", is_flag=True, help="Exit 3 when the data breaks a contract.")
@_project_option
def verify(
    sources: tuple[str, ...], fmt: str, dry_run: bool, fail_on_drift: bool,
    project_dir: str | None,
) -> None:
    """Check the live data against the models' declared semantics (read-only).

    One aggregate query per table: NULLs in required columns, values outside code sets and
    ranges, text not matching patterns, duplicate keys. Findings go to the alert sinks like
    reconcile's; exit codes as reconcile's (1 a source errored, 2 usage, 3 --fail-on-drift).
    """
    from dlt_contract_ops.commands.reconcile import finish, sweep
    from dlt_contract_ops.engine.reconcile import run
    from dlt_contract_ops.output import render

    # reconcile's sweep: SIGTERM unwinds it, a configuration error exits 2
    results, interrupted = sweep(
        lambda: run(list(sources), detectors=("contract",), dry_run=dry_run,
                    project_dir=project_dir)
    )
    click.echo(render(results, fmt, dry_run=dry_run), nl=False)
    finish(results, interrupted, fail_on_drift=fail_on_drift)
