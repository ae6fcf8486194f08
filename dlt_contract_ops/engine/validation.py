"""The checks behind `dlt-contract-ops validate`: every problem of a project, each with the
rule it breaks, the file (or environment variable) and key it sits in, and what to do.

Rules:

- `source_declared`: at least one `[sources.<name>.contract_ops]` table (else `reconcile`
  refuses to run: exit 2 for both).
- `config_keys`: unknown keys in `[contract_ops]` (and its `removal` and `dedup` tables) and
  `[sources.<name>.contract_ops]` (and its `removal` table), misspelled sections
  (`[contract_op]`, `[source.<name>.contract_ops]`), and values of the wrong type
  (`recent_window = "6 hours"`).
- `source_importable`: each declared source's `ref` imports and builds.
- `source_has_models`: each declared source has at least one resource with a Pydantic model.
- `destination_adapter`: each source's destination resolves exactly as a sweep resolves it
  (`sources.resolve.bind_destination`: its configuration and credentials from dlt's chain)
  and a reconciler adapter is registered for it (no connection is opened).
- `alert_sink_registered`: every name in `alert_sinks` is registered and its options
  construct the sink (a typo'd option, a secret in config.toml, Sentry without its extra);
  every `[contract_ops.alert_sink.<name>]` table names a registered sink.

- `ack_malformed`, `ack_expired`, `ack_orphaned`: entries of `.dlt/contract_ops_acks.toml`
  that cannot be read, whose `until` has passed, or whose drift no recent run found.

A problem `reconcile` refuses with exit 2 (`Problem.usage`) makes `validate` exit 2 too; a
pending gate hand-over is a note naming the command that finishes it. Nothing is emitted and
no destination is queried.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dlt_contract_ops.errors import ConfigError, ContractOpsError, NotLoadedError
from dlt_contract_ops.settings.project import ProjectSettings
from dlt_contract_ops.sinks.options import SINK_SECTION

NOT_SET = "(not set)"
#: where a project declares its sources, as problems name it
CONFIG_FILE = ".dlt/config.toml"
#: rules whose every problem is one `reconcile` refuses to run on (exit 2): `validate` exits
#: 2 on them too; a problem of another rule does when it is a `ConfigError` (`usage`)
USAGE_RULES = frozenset(
    {"config_section", "config_keys", "source_declared", "alert_sink_registered"}
)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the project."""

    rule: str
    file: str
    key: str
    message: str
    #: `reconcile` refuses it with exit 2, as `validate` then does
    usage: bool = False


@dataclass
class Report:
    """Everything `validate` found."""

    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    sinks: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def unusable(self) -> bool:
        """A problem `reconcile` refuses with its usage error (a misspelled or non-table
        section, an unknown key, no source declared, a sink that cannot be built, a
        destination whose configuration is not set): `validate` exits 2 as well."""
        return any(p.usage for p in self.problems)

    def add(
        self, rule: str, key: str, message: str, file: str | None = None, *, usage: bool = False
    ) -> None:
        from dlt_contract_ops.settings.files import locate

        self.problems.append(Problem(rule, file or locate(key) or NOT_SET, key, message,
                                     usage or rule in USAGE_RULES))


def _file_of(message: str) -> str | None:
    """The file a problem message names in parentheses, e.g. `(.dlt/config.toml)`."""
    import re

    match = re.search(r"\(([^()]*\.toml)\)", message)
    return match.group(1) if match else None


def _key_of(message: str, default: str) -> str:
    """The dotted key a problem message names: "Unknown key `k` in `[s]`" and
    "`k` in `[s]` ... = 'v' is not ..." give `s.k`; "`[s]` must be a table" gives `s`."""
    import re

    named = re.search(r"`([^`\[\]]+)` in `\[([^\]]+)\]`", message)
    if named:
        return f"{named.group(2)}.{named.group(1)}"
    match = re.search(r"`\[([^\]]+)\]`", message)
    return match.group(1) if match else default


def _add_settings_problem(report: Report, message: str, default_key: str) -> None:
    """A settings value that cannot be read, under the key it names (`config_keys`), or a
    table that is not one (`config_section`); once, if `check_config_keys` has it already."""
    if any(p.message == message for p in report.problems):
        return
    rule = "config_section" if "must be a table" in message else "config_keys"
    report.add(rule, _key_of(message, default_key), message, _file_of(message))


def check_config_keys(report: Report, sources: list[str]) -> None:
    """Unknown keys and misspelled sections, each with the file that holds it."""
    from dlt_contract_ops.settings.problems import (
        misplaced_sections,
        not_a_table,
        table_problems,
        tables_of,
        unread_table_variables,
    )

    sections = ["contract_ops", *(f"sources.{n}.contract_ops" for n in sources)]
    for section in sections:
        for message in table_problems(section):
            report.add("config_keys", _key_of(message, section), message, _file_of(message))
    for section in (table for s in sections for table in tables_of(s)):
        wrong = not_a_table(section)
        if wrong:
            _add_settings_problem(report, wrong, section)
    for message in unread_table_variables():
        var = message.split("`")[1]
        report.add("config_section", _key_of(message, SINK_SECTION), message,
                   f"environment variable {var}")
    for message in misplaced_sections():
        report.add("config_section", _key_of(message, "contract_ops"), message, _file_of(message))


def load_project(report: Report) -> ProjectSettings:
    """The project settings, or the defaults with a problem when they cannot be read."""
    from dlt_contract_ops.settings.project import load_project_settings

    try:
        # unknown keys are listed by `check_config_keys`; they must not hide the values
        return load_project_settings(check_keys=False)
    except ContractOpsError as exc:
        _add_settings_problem(report, str(exc), "contract_ops")
        return ProjectSettings()


def check_source(report: Report, name: str, project: ProjectSettings, project_dir: str) -> None:
    """`source_importable`, `source_has_models` and `destination_adapter` for one source."""
    from dlt_contract_ops.settings.project import load_source_settings
    from dlt_contract_ops.sources.discovery import build_source
    from dlt_contract_ops.sources.resolve import bind_destination

    base = f"sources.{name}.contract_ops"
    try:
        settings = load_source_settings(name, project, check_keys=False)
    except ConfigError as exc:
        message = str(exc)
        if "` in `[" in message or "must be a table" in message:  # names the key or table
            _add_settings_problem(report, message, f"{base}.ref")
        else:  # no `ref`: nothing to import
            report.add("source_importable", f"{base}.ref", message, usage=True)
        return
    except ContractOpsError as exc:
        report.add("source_importable", f"{base}.ref", str(exc))
        return
    from dlt_contract_ops.engine.handover import pending_handover_note

    note = pending_handover_note(settings, project_dir)
    if note:
        report.notes.append(note)
    try:
        # the settings read above (keys unchecked: `check_config_keys` lists those)
        built = build_source(name, settings.ref, project_dir, timeout=project.source_build_timeout,
                             bound=settings.models)
    except ContractOpsError as exc:  # its own configuration not set: reconcile's exit 2
        report.add("source_importable", f"{base}.ref", str(exc),
                   usage=isinstance(exc, ConfigError))
        return
    if not built.tables:
        why = "; ".join(built.notes) or "it has no resources"
        report.add(
            "source_has_models",
            f"{base}.ref",
            f"Source `{name}` (`{settings.ref}`) has no resource with a Pydantic `columns=` "
            f"model, so there is nothing to reconcile ({why}). Pass `columns=YourModel` to "
            f"`@dlt.resource`, or run `dlt-contract-ops models infer -s {name}` to write a "
            "model per table its pipeline loaded and bind them.",
        )
    try:
        # as a sweep binds it (credentials and all, from dlt's configuration), unconnected
        _, _, adapter = bind_destination(settings, built, project, project_dir)
    except ContractOpsError as exc:  # a ConfigError (credentials not set): reconcile's exit 2
        # (never loaded here is no mistake: a sweep reports it, exit 2 only when alone)
        usage = isinstance(exc, ConfigError) and not isinstance(exc, NotLoadedError)
        report.add("destination_adapter", f"{base}.destination", str(exc), usage=usage)
    except Exception as exc:  # dlt raises its own types for an unknown destination reference
        report.add(
            "destination_adapter",
            f"{base}.destination",
            f"Destination `{settings.destination}` of source `{name}` cannot be resolved: {exc}",
        )
    else:
        adapter.close()


def check_sinks(report: Report, project: ProjectSettings) -> None:
    """`alert_sink_registered`: names registered, options construct the sink."""
    from dlt_contract_ops.errors import SinkOptionError, did_you_mean
    from dlt_contract_ops.registry import SINK_GROUP, registered
    from dlt_contract_ops.sinks.loader import load_sink, quoted, unknown_sink_message
    from dlt_contract_ops.sinks.options import configured_sink_tables, read_sink_options

    known = registered(SINK_GROUP)
    report.sinks = list(project.alert_sinks)
    list_key = "contract_ops.alert_sinks"
    for i, name in enumerate(project.alert_sinks):
        if name not in known:
            report.add("alert_sink_registered", f"{list_key}[{i}]", unknown_sink_message(name),
                       _locate_or_default(list_key))
            continue
        table = f"{SINK_SECTION}.{name}"
        try:
            sink = load_sink(name)
        except SinkOptionError as exc:
            set_at = read_sink_options(name)
            for p in exc.problems:
                origin = p.origin if p.origin != "(not set)" else None
                if origin is None and p.option in set_at:
                    origin = set_at[p.option].origin
                report.add("alert_sink_registered", f"{table}.{p.option}", p.message, origin)
            continue
        except ContractOpsError as exc:
            report.add("alert_sink_registered", table, str(exc),
                       _locate_or_default(table, _locate_or_default(list_key)))
            continue
        close = getattr(sink, "close", None)
        if callable(close):
            close()
    for name, origin in sorted(configured_sink_tables().items()):
        table = f"{SINK_SECTION}.{name}"
        if name not in known:
            report.add(
                "alert_sink_registered",
                table,
                f"`[{table}]` configures alert sink '{name}', which is not registered."
                + did_you_mean(name, known, show=quoted)
                + f" Registered sinks: {', '.join(sorted(known)) or 'none'}.",
                origin,
            )
        elif name not in project.alert_sinks:
            report.notes.append(
                f"`[{table}]` ({origin}) is set but '{name}' is not in `alert_sinks`: unused."
            )


def _locate_or_default(key: str, default: str = "(default)") -> str:
    from dlt_contract_ops.settings.files import locate

    return locate(key) or default


def validate_project(project_dir: str | None = None) -> Report:
    """Run every check in the project at `project_dir` (default: the current directory)."""
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.problems import no_source_message
    from dlt_contract_ops.settings.project import declared_sources
    from dlt_contract_ops.sources.onboarding import attach_scope
    from dlt_contract_ops.sources.project_imports import begin_run

    report = Report()
    # each local pipeline attached once, however many sources it holds (as in a sweep)
    with project_context(project_dir) as pdir, attach_scope():
        begin_run()
        report.sources = declared_sources()
        check_config_keys(report, report.sources)
        project = load_project(report)
        if not report.sources and not report.unusable:
            # what `reconcile` refuses (a misspelled section says why already, when there is one)
            report.add("source_declared", "sources", no_source_message(CONFIG_FILE), CONFIG_FILE)
        for name in report.sources:
            check_source(report, name, project, pdir)
        check_sinks(report, project)
        check_acks(report, pdir)
    return report


def check_acks(report: Report, project_dir: str) -> None:
    """`ack_malformed`, `ack_expired`, `ack_orphaned`: `.dlt/contract_ops_acks.toml`."""
    from dlt_contract_ops.acks.service import ack_problems
    from dlt_contract_ops.acks.store import ACKS_FILE

    try:
        found = ack_problems(project_dir)
    except ContractOpsError as exc:  # the file is not TOML at all
        found = [("ack_malformed", str(exc))]
    for rule, message in found:
        report.add(rule, "acks", message, str(ACKS_FILE))
