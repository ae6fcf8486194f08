"""`ack`, `acks`, `unack`: accept a drift until a date, list and withdraw acceptances."""

from __future__ import annotations

import sys

import click

from dlt_contract_ops.commands.common import (
    EXIT_OK,
    EXIT_SOURCE_ERROR,
    error_line,
    project_dir_option,
    usage_error,
)


@click.command()
@click.argument("finding_id")
@click.option("--until", "until", required=True, metavar="DATE|DURATION",
              help="2026-12-31 (through that day, UTC), a date-time, or 14d / 1w / PT12H.")
@click.option("--reason", required=True, help="Why the drift is accepted (the audit trail).")
@click.option("--by", "by", default=None, help="Who accepts it. Default: $USER.")
@click.option("--force", is_flag=True,
              help="Record an id no recent run has seen (a drift you expect).")
@project_dir_option
def ack(
    finding_id: str, until: str, reason: str, by: str | None, force: bool,
    project_dir: str | None,
) -> None:
    """Acknowledge FINDING_ID (shown by `reconcile`): still reported, not alerted and not
    failing `--fail-on-drift` until the date. Written to .dlt/contract_ops_acks.toml."""
    from dlt_contract_ops.acks.service import record_ack
    from dlt_contract_ops.core.escaping import visible
    from dlt_contract_ops.errors import ConfigError, StateFileError

    try:
        entry, path = record_ack(finding_id, until, reason, by, force=force,
                                 project_dir=project_dir)
    except (ConfigError, StateFileError) as exc:  # StateFileError: another `ack` holds the lock
        usage_error(exc)
    click.echo(visible(f"acknowledged {entry.id} until {entry.until.isoformat()} by "
                       f"{entry.by} ({path})"))
    sys.exit(EXIT_OK)


@click.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@project_dir_option
def acks(fmt: str, project_dir: str | None) -> None:
    """List the acknowledgements with their expiry, one line each (a line break or a
    terminal control in a reason or a name is shown escaped: `\\n`, `\\u001b`)."""
    from dlt_contract_ops.acks.service import list_acks
    from dlt_contract_ops.core.escaping import visible
    from dlt_contract_ops.errors import ConfigError

    try:
        entries, problems, now = list_acks(project_dir)
    except ConfigError as exc:
        usage_error(exc)
    if fmt == "json":
        from dlt_contract_ops.output.documents import acks_json

        click.echo(acks_json(entries, now))
    else:
        for a in entries:
            state = "expired" if a.expired(now) else "active "
            what = f"{a.source}.{a.table} {a.detector} {', '.join(a.columns)}" if a.source else ""
            # the file may hold a multi-line reason (TOML allows it): one entry, one line
            click.echo(visible(f"{a.id}  {state}  until {a.until.isoformat()}  by {a.by}: "
                               f"{a.reason}" + (f"  [{what}]" if what else "")))
        if not entries:
            click.echo("no acknowledgements")
    for p in problems:
        click.echo(f"! {visible(p)}", err=True)
    sys.exit(EXIT_SOURCE_ERROR if problems else EXIT_OK)


@click.command()
@click.argument("finding_id")
@project_dir_option
def unack(finding_id: str, project_dir: str | None) -> None:
    """Withdraw the acknowledgement of FINDING_ID."""
    from dlt_contract_ops.acks.service import withdraw_ack
    from dlt_contract_ops.core.escaping import visible
    from dlt_contract_ops.errors import ConfigError, StateFileError

    try:
        removed = withdraw_ack(finding_id, project_dir)
    except (ConfigError, StateFileError) as exc:
        usage_error(exc)
    if not removed:
        click.echo(f"Error: {error_line(f'no acknowledgement of `{finding_id}`.')}", err=True)
        sys.exit(EXIT_SOURCE_ERROR)
    click.echo(visible(f"withdrew the acknowledgement of {finding_id}"))
    sys.exit(EXIT_OK)
