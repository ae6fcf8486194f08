"""Every click command of `dlt-contract-ops`, one module each; this module builds the group.

Each command module imports only click at the top, so `dlt-contract-ops --help` stays fast
and never imports dlt or an alerting SDK. The commands parse, call one function, and render.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import click

from dlt_contract_ops.commands.ack import ack, acks, unack
from dlt_contract_ops.commands.common import started
from dlt_contract_ops.commands.contract import contract
from dlt_contract_ops.commands.gate import gate
from dlt_contract_ops.commands.init import init
from dlt_contract_ops.commands.list_sinks import sinks
from dlt_contract_ops.commands.models import models
from dlt_contract_ops.commands.profile import profile, profiles
from dlt_contract_ops.commands.reconcile import reconcile
from dlt_contract_ops.commands.report import report
from dlt_contract_ops.commands.validate import validate


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s|[%(levelname)s]|%(name)s|%(message)s",
    )
    # dlt is chatty about dataset-name normalization; keep stderr about drift
    logging.getLogger("dlt").setLevel(logging.ERROR)


class _Main(click.Group):
    """The group; a detector plugin that cannot register, wherever a command first reads the
    registry, is one line on stderr and exit 2, never a traceback."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if not getattr(command, "warm_start", False):
            started()  # only a sweep's command says itself when its start-up is over
        return name, command, rest

    def invoke(self, ctx: click.Context) -> Any:
        from dlt_contract_ops.commands.common import usage_error
        from dlt_contract_ops.errors import DetectorPluginError

        try:
            return super().invoke(ctx)
        except DetectorPluginError as exc:
            usage_error(exc)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dlt-contract-ops")
@click.option("-v", "--verbose", is_flag=True, help="Debug logging on stderr.")
def main(verbose: bool) -> None:
    """Find and report drift between dlt resources' Pydantic models and the warehouse."""
    _setup_logging(verbose)


#: the commands that call `started()` themselves, once their sweep's start-up is done
for _warm in (reconcile, report):
    _warm.warm_start = True  # type: ignore[attr-defined]

for _command in (reconcile, validate, sinks, contract, gate, ack, acks, unack, report, init,
                 profile, profiles, models):
    main.add_command(_command)
