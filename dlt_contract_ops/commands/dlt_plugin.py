"""The dlt CLI plugin: `dlt contract-ops <command>` and `dlt pipeline <name> reconcile`.

dlt loads this module on every `dlt` invocation (entry-point group `dlt`, see
docs/dlt-plugin.md), so it imports only argparse and dlt's plugin markers at the top. Both
commands hand their arguments to the click group of `dlt-contract-ops`: one set of options,
one output, one set of exit codes (click's `sys.exit` passes through dlt's error handler,
which catches only `Exception`).
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from dlt.common.configuration import plugins

PROG = "dlt contract-ops"


def _verbose(args: argparse.Namespace) -> list[str]:
    # dlt's pre-parser takes `-v` from anywhere in argv before any command sees it
    return ["-v"] if getattr(args, "verbosity", 0) else []


def _run_click(argv: list[str], prog_name: str) -> None:
    """Run the `dlt-contract-ops` click group on `argv` as the rest of the process: it ends
    with the command's exit code (`exit_process`)."""
    from dlt_contract_ops.commands import main
    from dlt_contract_ops.commands.common import exit_process

    exit_process(lambda: main.main(args=argv, prog_name=prog_name, standalone_mode=True))


class ContractOpsCommand:
    """`dlt contract-ops ARGS...`: every `dlt-contract-ops` command, arguments forwarded."""

    command = "contract-ops"
    help_string = (
        "Schema drift between resources' Pydantic models and the destination "
        "(dlt-contract-ops; `dlt contract-ops --help` lists its commands)"
    )
    description = (
        "Runs `dlt-contract-ops` inside the dlt CLI: `dlt contract-ops reconcile --all` is "
        "`dlt-contract-ops reconcile --all`. `dlt contract-ops --help` lists the commands."
    )
    docs_url: str | None = None
    parent: str | None = None
    compose: plugins.TCliCommandCompose = "replace"

    def configure_parser(self, parser: argparse.ArgumentParser) -> None:
        # Every argument belongs to the click group, `--help` and `--version` included, but
        # argparse reads a leading `-x` as an option of this parser (REMAINDER only takes what
        # follows a positional). With no prefix characters it has no options: every argument,
        # `--` too, is a positional that REMAINDER keeps as typed.
        parser.prefix_chars = ""
        parser.add_argument("arguments", nargs=argparse.REMAINDER,
                            help="A dlt-contract-ops command and its options.")

    def execute(self, args: argparse.Namespace) -> None:
        _run_click([*_verbose(args), *args.arguments], PROG)


class PipelineReconcileCommand:
    """`dlt pipeline NAME reconcile`: reconcile every declared source of pipeline NAME."""

    command = "reconcile"
    help_string = (
        "Diff the live destination schema against the Pydantic models of every source "
        "declared for this pipeline (dlt-contract-ops, read-only)"
    )
    description = (
        "Runs `dlt-contract-ops reconcile` for every source in `[sources.<name>.contract_ops]` "
        "whose `pipeline_name` is this pipeline (a source without one: the local pipeline "
        "whose schema is the source's, else the pipeline named as the source)."
    )
    docs_url: str | None = None
    parent: str | None = "pipeline"
    compose: plugins.TCliCommandCompose = "replace"

    def configure_parser(self, parser: argparse.ArgumentParser) -> None:
        from dlt_contract_ops.detectors.registry import registered_detectors
        from dlt_contract_ops.errors import DetectorPluginError
        from dlt_contract_ops.model.severity import SEVERITIES

        try:
            detectors = registered_detectors()
        except DetectorPluginError:
            # every `dlt` command configures its parser: a broken detector plugin must not
            # break them; `reconcile` itself reports it (one line, exit 2) when it runs
            detectors = ()
        for detector in detectors:
            if detector.flag is not None:
                parser.add_argument(detector.flag, dest=f"include_{detector.name}",
                                    action="store_true", help=f"Also detect {detector.summary}.")
        parser.add_argument("--format", dest="fmt", choices=["text", "json"], default="text",
                            help="Output format (default: text).")
        parser.add_argument("--dry-run", action="store_true",
                            help="Print and return findings; emit no alerts.")
        parser.add_argument("--fail-on-drift", nargs="?", const="info", default=None,
                            choices=SEVERITIES, metavar="SEVERITY",
                            help="Exit 3 when there are findings; `error` (or `warning`): "
                                 "only when there are findings of that severity or worse.")
        parser.add_argument("--no-dedup", action="store_true",
                            help="Send every finding to the alert sinks, even a repeated one.")
        parser.add_argument("--project-dir", default=None,
                            help="The dlt project (holds .dlt/). Default: the current directory.")

    def execute(self, args: argparse.Namespace) -> None:
        from dlt_contract_ops.commands.common import usage_error
        from dlt_contract_ops.errors import ConfigError, ContractOpsError
        from dlt_contract_ops.sources.onboarding import sources_of_pipeline

        name = args.pipeline_name
        if getattr(args, "pipelines_dir", None):
            usage_error(ConfigError(
                "`--pipelines-dir` is not supported with `reconcile`: dlt-contract-ops reads "
                "the pipelines in dlt's data dir (set `DLT_DATA_DIR` to use another one)."
            ))
        try:
            sources = sources_of_pipeline(name, args.project_dir)
        except ContractOpsError as exc:
            usage_error(exc)
        argv = [*_verbose(args), "reconcile"]
        argv += [part for source in sources for part in ("-s", source)]
        argv += [flag for flag, on in (
            ("--dry-run", args.dry_run),
            (f"--fail-on-drift={args.fail_on_drift}", args.fail_on_drift),
            ("--no-dedup", args.no_dedup),
        ) if on]
        argv += ["--format", args.fmt]
        argv += [f"--include-{k.removeprefix('include_').replace('_', '-')}"
                 for k, v in vars(args).items()
                 if k.startswith("include_") and v]
        if args.project_dir:
            argv += ["--project-dir", args.project_dir]
        _run_click(argv, f"dlt pipeline {name}")


def _for_dlt(command: type[Any]) -> Any:
    """A `plug_cli` implementation returning `command` to the `dlt` host.

    dlt 1.31 calls `plug_cli(host=...)`; earlier releases call `plug_cli()`. pluggy refuses to
    register an implementation asking for an argument the spec lacks (and dlt registers
    plugins outside its error handling), so the signature follows the installed spec.
    """
    if "host" in inspect.signature(plugins.plug_cli).parameters:
        def with_host(host: str) -> type[Any] | None:
            return command if host == "dlt" else None
        return plugins.hookimpl(specname="plug_cli")(with_host)

    def without_host() -> type[Any] | None:
        return command
    return plugins.hookimpl(specname="plug_cli")(without_host)


plug_cli_contract_ops = _for_dlt(ContractOpsCommand)
# a dlt without `parent` would install `reconcile` as a top-level command: offer it only where
# dlt nests plugin subcommands
plug_cli_pipeline_reconcile = (
    _for_dlt(PipelineReconcileCommand)
    if "parent" in getattr(plugins.SupportsCliCommand, "__annotations__", {})
    else None
)
