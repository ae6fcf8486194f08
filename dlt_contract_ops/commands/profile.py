"""`dlt-contract-ops profile` (per-load history) and `profiles rebuild` (drop a source's)."""

from __future__ import annotations

import click

from dlt_contract_ops.commands.common import (
    ONE_SOURCE_HELP,
    project_dir_option,
    selected_by,
    source_error,
    usage_error,
)


@click.command()
@click.option("-s", "--source", required=True, metavar="NAME", help=ONE_SOURCE_HELP)
@click.option("--table", default=None, metavar="T", help="Only this table.")
@click.option("--column", default=None, metavar="C", help="Only this column.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@project_dir_option
def profile(
    source: str, table: str | None, column: str | None, fmt: str, project_dir: str | None
) -> None:
    """Profile the source's new loads, then print each root table's per-load history:
    rows, and per column NULL rate, approximate distinct count, min/max and category shares."""
    from dlt_contract_ops.engine.profile_history import profile_history
    from dlt_contract_ops.errors import ConfigError, ContractOpsError, UnknownSourceError

    [source] = selected_by([source], project_dir, one=True)
    try:
        history = profile_history(source, project_dir=project_dir, table=table, column=column)
    except (ConfigError, UnknownSourceError) as exc:  # a wrong name: the request is at fault
        usage_error(exc)
    except ContractOpsError as exc:  # the destination or the store could not answer
        source_error(exc)
    if fmt == "json":
        from dlt_contract_ops.output.documents import profile_json

        click.echo(profile_json(source, history))
        return
    from dlt_contract_ops.core.escaping import visible

    for name, rows in history.items():  # names and values come from the warehouse: escaped
        click.echo(visible(f"Table: {name}  |  loads: {len({r['load_id'] for r in rows})}"))
        for r in rows:
            shares = r["categories"]
            cats = (
                "  " + ", ".join(f"{k}={v:.1%}" for k, v in shares.items()) if shares else ""
            )
            span = f"  [{r['min']} .. {r['max']}]" if r["min"] is not None else ""
            click.echo(visible(
                f"  {r['load_id']}  rows={r['rows']}  {r['column']}: "
                f"null={r['null_rate']:.1%} distinct={r['distinct_count']}{span}{cats}"
            ))


@click.group()
def profiles() -> None:
    """Manage the local load profile store."""


@profiles.command()
@click.option("-s", "--source", required=True, metavar="NAME", help=ONE_SOURCE_HELP)
@project_dir_option
def rebuild(source: str, project_dir: str | None) -> None:
    """Drop the source's stored profiles; the next sweep profiles its tables afresh. A
    broken store file is set aside (renamed `<name>.broken-<UTC stamp>`, a line on stderr
    says so) and a fresh one started."""
    from dlt_contract_ops.errors import ConfigError, ContractOpsError, UnknownSourceError
    from dlt_contract_ops.profiles.service import rebuild_profiles

    [source] = selected_by([source], project_dir, one=True)
    try:
        dropped = rebuild_profiles(source, project_dir=project_dir)
    except (ConfigError, UnknownSourceError) as exc:
        usage_error(exc)
    except ContractOpsError as exc:  # the store is locked, or cannot be moved aside
        source_error(exc)
    click.echo(f"Dropped {dropped} load profile(s) of source `{source}`.")
