"""`dlt-contract-ops reconcile`: parse, call `engine.reconcile.run`, render, exit.

What `report` shares with it lives here too: the signal-aware sweep, the exit codes of a
sweep's results, progress on a terminal, and writing a document to `--output`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any

import click

from dlt_contract_ops.commands.common import (
    EXIT_DRIFT,
    EXIT_OK,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_SOURCE_ERROR,
    EXIT_USAGE,
    SOURCES_HELP,
    error_line,
    project_dir_option,
    started,
    usage_error,
)
from dlt_contract_ops.model.severity import SEVERITIES
from dlt_contract_ops.output import FORMATS

if TYPE_CHECKING:
    from dlt_contract_ops.model.findings import ReconcileResult
    from dlt_contract_ops.model.severity import Severity

#: CLI flag of each removal override, so a bad value names the flag the user typed
REMOVAL_FLAGS = {
    "recent_window": "--recent-window",
    "baseline_window": "--baseline-window",
    "baseline_threshold": "--baseline-threshold",
    "recent_threshold": "--recent-threshold",
}


class Terminated(SystemExit):
    """SIGTERM, raised in the main thread so the sweep unwinds (flush, release claims)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated(EXIT_SIGTERM)


def progress_printer(stream: IO[str] | None = None) -> Callable[..., None] | None:
    """`[2/5] reconciling orders (12 tables)` per source on `stream` (stderr) when it is a
    terminal; None (silent) when it is a pipe or a file, so logs and CI output stay clean."""
    out = stream if stream is not None else sys.stderr
    if not out.isatty():
        return None
    from dlt_contract_ops.output.text import text_name

    def progress(index: int, total: int, name: str, tables: int | None) -> None:
        size = "" if tables is None else f" ({tables} table{'' if tables == 1 else 's'})"
        click.echo(f"[{index}/{total}] reconciling {text_name(name)}{size}", file=out)

    return progress


def sweep(call: Callable[[], list[ReconcileResult]]) -> tuple[list[ReconcileResult], int | None]:
    """Run `call` (an `engine.reconcile.run`) with SIGTERM unwinding it: (results, None), or what
    finished and the exit code of the signal. A configuration error exits 2 here."""
    from dlt_contract_ops.engine.reconcile import SweepInterrupted
    from dlt_contract_ops.errors import ConfigError

    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return call(), None
    except ConfigError as exc:
        usage_error(exc)
    except SweepInterrupted as stop:
        code = EXIT_SIGTERM if isinstance(stop.cause, Terminated) else EXIT_SIGINT
        return stop.results, code
    finally:
        signal.signal(signal.SIGTERM, previous)


def finish(
    results: list[ReconcileResult], interrupted: int | None, *,
    fail_on_drift: bool | Severity | None = False,
) -> None:
    """Exit with the code of the sweep's results (the table in docs/cli.md). `fail_on_drift`:
    exit 3 on a finding (True), or on one of that severity or worse (`"error"`)."""
    from dlt_contract_ops.model.findings import NOT_LOADED

    if interrupted is not None:
        click.echo(
            f"Interrupted: {len({r.source for r in results})} source(s) finished before the "
            "signal; the running query was cancelled.",
            err=True,
        )
        sys.exit(interrupted)
    if any(r.error_kind == "config" for r in results):
        sys.exit(EXIT_USAGE)
    if results and all(r.error_kind == NOT_LOADED for r in results):
        sys.exit(EXIT_USAGE)  # no source could run: nothing was checked
    if any(r.error for r in results):
        sys.exit(EXIT_SOURCE_ERROR)
    # an acknowledged finding is reported but does not fail the run (until its expiry)
    threshold: Severity | None = "info" if fail_on_drift is True else (fail_on_drift or None)
    if threshold is not None and any(r.failing_at(threshold) for r in results):
        sys.exit(EXIT_DRIFT)
    sys.exit(EXIT_OK)


def check_output(path: str | None) -> None:
    """Refuse an output file that cannot be written (its folder missing or read-only, the
    file read-only) with one line and exit 2, before anything is swept or alerted: a sweep
    whose page went out and whose document is lost would be run again, and page again."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        problem = f"its folder `{folder}` does not exist"
    elif os.path.exists(path) and not os.access(path, os.W_OK):
        problem = "it is not writable"
    elif not os.path.exists(path) and not os.access(folder, os.W_OK | os.X_OK):
        problem = f"its folder `{folder}` is not writable"
    else:
        return
    click.echo(f"Error: {error_line(f'cannot write `{path}`: {problem}; choose another file.')}",
               err=True)
    sys.exit(EXIT_USAGE)


def write_document(document: str, path: str | None) -> None:
    """`document` to `path`, or to stdout without one; a file that cannot be written is a
    usage error (exit 2) naming it."""
    if path is None:
        click.echo(document, nl=False)
        return
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(document)
    except OSError as exc:
        click.echo(f"Error: {error_line(f'cannot write `{path}`: {exc.strerror or exc}')}",
                   err=True)
        sys.exit(EXIT_USAGE)


output_option = click.option(
    "--output", "-o", "output", metavar="FILE", type=click.Path(dir_okay=False), default=None,
    help="Write the document to FILE instead of stdout.",
)


class _PluginFailure(click.ClickException):
    """Shown by click as `Error: <message>` on stderr, exit 2."""

    exit_code = EXIT_USAGE


class DetectorFlags(click.Command):
    """A command with one `--include-<name>` flag per opt-in detector of the registry, read
    when the command parses or shows its help (not at import, so `dlt-contract-ops --help`
    loads no plugin). They follow `--project-dir`. A detector plugin that cannot register is
    one line on stderr and exit 2 (`DetectorPluginError`), never a traceback."""

    #: opt-in detectors the command runs anyway (no flag for them)
    always: frozenset[str] = frozenset()

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        at = next((i + 1 for i, p in enumerate(params) if p.name == "project_dir"), 0)
        return [*params[:at], *self._flags(), *params[at:]]

    def _flags(self) -> list[click.Parameter]:
        from dlt_contract_ops.commands.common import error_line
        from dlt_contract_ops.detectors.registry import registered_detectors
        from dlt_contract_ops.errors import DetectorPluginError

        try:
            detectors = registered_detectors()  # cached by the registry until it is cleared
        except DetectorPluginError as exc:
            raise _PluginFailure(error_line(str(exc))) from None
        cached: tuple[object, list[click.Parameter]] | None = getattr(self, "_detector_flags", None)
        if cached is not None and cached[0] is detectors:
            return cached[1]
        flags: list[click.Parameter] = [
            click.Option([d.flag, f"include_{d.name}"], is_flag=True,
                         help=f"Also detect {d.summary}.")
            for d in detectors if d.flag is not None and d.name not in self.always
        ]
        self._detector_flags = (detectors, flags)
        return flags


def included(options: dict[str, Any]) -> set[str]:
    """The detectors whose `--include-<name>` flag is set in `options`."""
    return {k.removeprefix("include_") for k, v in options.items()
            if k.startswith("include_") and v}


@click.command(cls=DetectorFlags)
@click.option("-s", "--source", "sources", multiple=True, metavar="NAME", help=SOURCES_HELP)
@click.option("--all", "all_sources", is_flag=True, help="Every declared source.")
@click.option("--shard", "shard", metavar="I/N", default=None,
              help="Only shard I of N (e.g. 2/3) of the sources' tables: N tasks, one per "
                   "shard, sweep what one run does (docs/cli.md#shards).")
@click.option("--dry-run", is_flag=True, help="Print and return findings; emit no alerts.")
@click.option("--format", "fmt", type=click.Choice((*FORMATS, "markdown")), default="text",
              show_default=True, help="markdown: with --suggest, a pull-request text.")
@output_option
@click.option("--fail-on-drift", is_flag=False, flag_value="info", default=None,
              type=click.Choice(SEVERITIES), metavar="[=SEVERITY]",
              help="Exit 3 when there are findings; =error (or =warning): only when there "
                   "are findings of that severity or worse.")
@project_dir_option
@click.option("--recent-window", metavar="DURATION", default=None,
              help='Removal: the recent window, e.g. "6h" (default 6h).')
@click.option("--baseline-window", metavar="DURATION", default=None,
              help='Removal: the baseline window before it, e.g. "7d" (default 7d).')
@click.option("--baseline-threshold", type=float, default=None,
              help="Removal: baseline coverage must exceed this (default 0.20).")
@click.option("--recent-threshold", type=float, default=None,
              help="Removal: recent coverage must fall below this (default 0.01).")
@click.option("--no-dedup", is_flag=True,
              help="Send every finding to the alert sinks, even one already alerted recently.")
@click.option("--suggest", is_flag=True,
              help="Print, per model file, the change that makes each finding go away (a "
                   "diff; with --format markdown a pull-request text). Sends no alerts.")
@click.option("--apply", "apply_patch", is_flag=True,
              help="With --suggest: write the changes into the model files.")
@click.option("--keep", is_flag=True,
              help="With --suggest: keep a missing field (made Optional) instead of removing it.")
def reconcile(
    sources: tuple[str, ...],
    all_sources: bool,
    shard: str | None,
    dry_run: bool,
    fmt: str,
    output: str | None,
    fail_on_drift: Severity | None,
    project_dir: str | None,
    no_dedup: bool,
    suggest: bool,
    apply_patch: bool,
    keep: bool,
    **options: Any,
) -> None:
    """Diff the live destination schema against the models (read-only)."""
    if bool(sources) == all_sources:
        raise click.UsageError("Give either -s/--source NAME (repeatable) or --all, not both.")
    if (apply_patch or keep) and not suggest:
        raise click.UsageError("--apply and --keep go with --suggest.")
    if shard is not None and suggest:
        raise click.UsageError("--suggest patches every table of a model: drop --shard.")
    if (fmt == "markdown") != (suggest and fmt == "markdown") or (
            suggest and fmt not in ("text", "markdown")):
        raise click.UsageError("--suggest prints a diff (--format text) or a pull-request "
                               "text (--format markdown).")
    from dlt_contract_ops.detectors.registry import selected
    from dlt_contract_ops.engine.reconcile import check_source_names, removal_overrides, run
    from dlt_contract_ops.engine.sharding import parse_shard
    from dlt_contract_ops.errors import ConfigError
    from dlt_contract_ops.output import render
    from dlt_contract_ops.settings.files import project_context

    check_output(output)
    try:
        part = parse_shard(shard)  # `0/3`, `a/b`: one line, exit 2, before anything runs
    except ConfigError as exc:
        usage_error(exc)
    include = included(options)
    given = {k: options[k] for k in REMOVAL_FLAGS if options.get(k) is not None}
    try:
        # a bad flag value is a usage error before anything connects, alerts or writes state;
        # the sweep takes the checked overrides as they are
        removal = removal_overrides(given, lambda key: f"`{REMOVAL_FLAGS[key]}`")
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    # one project context for the whole command: dlt's configuration is loaded and the
    # settings are read once, not again by the sweep
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(project_context(project_dir))
            # a mistyped `-s` is the request's fault: one line, exit 2, before anything runs
            check_source_names(sources, project_dir)
        except ConfigError as exc:
            usage_error(exc)
        started()
        if suggest:
            _suggest(sources, project_dir, fmt, apply_patch, keep, include, removal, output)
        results, interrupted = sweep(
            lambda: run(
                list(sources) or None,
                detectors=selected(include),
                dry_run=dry_run,
                project_dir=project_dir,
                removal=removal,
                dedup=not no_dedup,
                progress=progress_printer(),
                shard=part,
            )
        )
    write_document(render(results, fmt, dry_run=dry_run), output)
    finish(results, interrupted, fail_on_drift=fail_on_drift)


def _suggest(
    sources: tuple[str, ...], project_dir: str | None, fmt: str, write: bool, keep: bool,
    include: set[str], removal: Mapping[str, Any], output: str | None,
) -> None:
    """`--suggest`: the model patches instead of the findings (`suggest.service`); a patch
    that cannot be made or written is one line, exit 2 (`sweep`)."""
    from dlt_contract_ops.detectors.registry import selected
    from dlt_contract_ops.suggest.service import suggest_text

    texts: list[str] = []

    def call() -> list[ReconcileResult]:
        text, notes, results = suggest_text(
            list(sources) or None, os.path.abspath(project_dir or "."), fmt=fmt, write=write,
            keep=keep, detectors=selected(include), removal=removal)
        texts.append(text)
        for note in notes:  # stdout stays the diff alone
            click.echo(f"note: {note}", err=True)
        return results

    results, interrupted = sweep(call)
    if texts:
        write_document(texts[0], output)
    finish(results, interrupted)
