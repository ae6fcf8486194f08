"""One exception tree for everything dlt-contract-ops raises on purpose.

Messages say what went wrong, where (file, key, table, column in backticks) and what to do.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass


def closest(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The choice `word` is most likely a typo of, if any (the one home of difflib here).

    >>> closest("recent_windw", ["recent_window", "baseline_window"])
    'recent_window'
    >>> closest("zzz", ["recent_window"]) is None
    True
    """
    match = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=cutoff)
    return match[0] if match else None


def _backticked(name: str) -> str:
    return f"`{name}`"


def did_you_mean(
    word: str,
    choices: Iterable[str],
    *,
    cutoff: float = 0.6,
    show: Callable[[str], str] = _backticked,
) -> str:
    """`" Did you mean `<closest>`?"` for a message about an unknown `word`, else "".

    `show` renders the suggestion (a prefix, a symbol for a unit name, another quote).

    >>> did_you_mean("sentri", ["logging", "sentry"])
    ' Did you mean `sentry`?'
    >>> did_you_mean("sentri", ["sentry"], show=lambda n: f"'{n}'")
    " Did you mean 'sentry'?"
    >>> did_you_mean("zzz", ["sentry"])
    ''
    """
    close = closest(word, choices, cutoff=cutoff)
    return f" Did you mean {show(close)}?" if close else ""


class ContractOpsError(Exception):
    """Base class of every error this package raises deliberately."""


class ConfigError(ContractOpsError):
    """The project configuration is invalid or incomplete (CLI exit code 2)."""


class SuggestError(ConfigError):
    """A model patch (`reconcile --suggest`) that cannot be made or written: the model's file
    changed since the sweep, lies outside the project, or does not hold the class."""


class DeclarationError(ConfigError):
    """A model's semantic contract declaration is invalid (a key that names no field, say)."""


class SnapshotError(ConfigError):
    """A contract snapshot file or folder is missing, malformed, or contradicts a released
    one."""


class NoContractError(SnapshotError):
    """A source has no resource with a Pydantic model, so it declares no contract."""


class ExportError(ConfigError):
    """A contract export cannot be written where it was asked to go."""


class WaiverError(ConfigError):
    """A contract waiver file is malformed."""


#: how a rejection's note begins when its quarantine could not be written
NOT_KEPT = "the rejected batch was NOT kept"


class GateRejected(ContractOpsError):
    """The ingest gate rejected a batch; `.report` says which columns and where it is kept,
    or why it could not be kept."""

    def __init__(self, report: object) -> None:
        where = getattr(report, "quarantine", None)
        not_kept = [n for n in getattr(report, "notes", ()) if n.startswith(NOT_KEPT)]
        why = f" {not_kept[0][0].upper()}{not_kept[0][1:]}." if not_kept else (
            " The batch was NOT kept: see the report's notes.")
        super().__init__(
            f"Batch rejected by the contract gate: {getattr(report, 'reason', report)}."
            + (f" The batch is kept in `{where}` (with diff.json)." if where else why)
        )
        self.report = report


class QuarantineError(ContractOpsError):
    """A rejected batch's quarantine folder could not be written; nothing of it was left.
    The gate still rejects the batch and says this in its report and alert."""

    def __init__(self, folder: object, what: str, cause: BaseException) -> None:
        reason = getattr(cause, "strerror", None) or f"{type(cause).__name__}: {cause}"
        super().__init__(f"{what} could not be written to the quarantine `{folder}` ({reason})")
        self.folder = folder
        self.what = what
        self.cause = cause


class GateBusyError(ContractOpsError):
    """Another gate holds the pipeline's gate lock for longer than the wait allows."""


class UnknownSourceError(ConfigError):
    """A source name has no `[sources.<name>.contract_ops]` table; `groups`: each
    `source_name` that `-s` selects by, with its tables, suggested as the declared names are.

    >>> str(UnknownSourceError("appp", ["app_one"], {"app": ["app_one"]})).split(". ")[-1]
    'Did you mean `app` (the `source_name` of app_one)?'
    """

    def __init__(
        self, name: str, known: list[str], groups: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        groups = {g: t for g, t in (groups or {}).items() if g not in known}
        hint = f" Declared sources: {', '.join(sorted(known))}." if known else ""
        hint += did_you_mean(name, [*known, *groups], show=lambda n: (
            f"`{n}` (the `source_name` of {', '.join(groups[n])})" if n in groups else f"`{n}`"
        ))
        super().__init__(
            f"Unknown source `{name}`: add a `[sources.{name}.contract_ops]` table with `ref = "
            f'"module:attribute"` to .dlt/config.toml.{hint}'
        )
        self.name = name


class SourceImportError(ContractOpsError):
    """The source's `ref` cannot be imported or built."""


class SourceConfigMissingError(SourceImportError, ConfigError):
    """The source's own configuration (an API token, say) cannot be resolved: the user's to
    set, so a usage error (exit 2), never an alert."""


class RunsOnImportError(SourceImportError):
    """A module `init` imported tried to run a pipeline at import: refused (`sources.scan`)."""


class SourceBuildTimeoutError(SourceImportError):
    """Importing or building the source did not return within `source_build_timeout`."""


class DestinationError(ContractOpsError):
    """The destination cannot be reached or queried."""


class CredentialsMissingError(DestinationError, ConfigError):
    """The destination's credentials are not configured: the user's to set (exit 2, no
    alert), unlike a destination that is configured and fails."""


class CredentialsRejectedError(DestinationError, ConfigError):
    """The server refused the configured credentials (a wrong password, an unknown role or
    database): the user's to fix (exit 2, no alert)."""


class NotLoadedError(ConfigError):
    """The source's pipeline has never run on this machine and nothing says where its data
    is: reported as "not loaded yet", neither drift nor an alert."""


class UnsupportedDestinationError(DestinationError):
    """dlt supports the destination, but no reconciler adapter covers it ("core tier")."""


class StateFileError(ContractOpsError):
    """A local state file (alert dedup state) cannot be locked, read or written."""


class UnsafeQueryError(ContractOpsError):
    """The renderer refused a statement that is not a read-only SELECT."""


class AlertSinkError(ConfigError):
    """An alert sink could not be found, loaded or constructed: the project's to fix (a
    `reconcile` refuses to run on it, exit 2, before anything is swept or alerted)."""


class UnsupportedDltError(ConfigError):
    """The installed dlt lacks a private member this package uses (`dlt_private.py`): a dlt
    outside the supported range."""


class DetectorPluginError(ConfigError):
    """An entry of the `dlt_contract_ops.detectors` group cannot be registered: it fails to
    import, is not a `Detector`, breaks one of its rules, or takes a name already taken. The
    message names the distribution, the entry point and the offending member (exit 2)."""


@dataclass(frozen=True)
class OptionProblem:
    """One wrong option of one alert sink: which, where it is set (or "(not set)"), and what
    to do."""

    option: str
    origin: str
    message: str


class SinkOptionError(AlertSinkError):
    """Options of one alert sink that are unknown, missing, of the wrong type, or secrets
    outside secrets.toml: every problem found, each naming the option and where it is set.

    Raised with one message (`SinkOptionError(msg, sink, option)`, from a sink's constructor)
    or with all the problems the loader found (`SinkOptionError.of(sink, problems)`).
    """

    def __init__(
        self, message: str, sink: str, option: str, origin: str = "(not set)"
    ) -> None:
        super().__init__(message)
        self.sink = sink
        self.option = option
        self.problems: list[OptionProblem] = [OptionProblem(option, origin, message)]

    @classmethod
    def of(cls, sink: str, problems: list[OptionProblem]) -> SinkOptionError:
        error = cls(" ".join(p.message for p in problems), sink, problems[0].option,
                    problems[0].origin)
        error.problems = list(problems)
        return error


class DeliveryError(ContractOpsError):
    """A sink could not deliver one event. The one delivery-failure signal: a synchronous sink
    raises it from `emit_drift`/`emit_error`; an asynchronous sink reports the findings it
    could not deliver from `undelivered()` after `flush`."""


class QueryTimeoutError(DestinationError):
    """A query ran past the statement timeout, or waited past the lock timeout, and was
    stopped. The message names the table queried when it is known; `table`, `reason`
    ("statement timeout" or "lock timeout") and `seconds` carry the same facts."""

    def __init__(
        self,
        message: str,
        *,
        table: str | None = None,
        reason: str = "statement timeout",
        seconds: float | None = None,
    ) -> None:
        super().__init__(message)
        self.table = table
        self.reason = reason
        self.seconds = seconds
