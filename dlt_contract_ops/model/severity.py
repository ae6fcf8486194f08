"""How bad a finding is: `error`, `warning` or `info`, most severe first.

A finding's severity is its detector's default (`Detector.severity`) unless the project
says otherwise (`[contract_ops.severity]`, `[sources.<X>.contract_ops.severity]`). Every
rendering and sink maps it to its own scale (`level`), and `--fail-on-drift=<severity>`
fails on the findings at or above one (`at_least`).
"""

from __future__ import annotations

from typing import Literal

Severity = Literal["error", "warning", "info"]

#: every severity, most severe first
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
#: a detector's severity when it declares none (a third-party detector)
DEFAULT_SEVERITY: Severity = "warning"

#: each severity on the scales it is shown on (docs/sinks.md): SARIF `level`, GitHub Actions
#: workflow command, Sentry event `level`, PagerDuty Events v2 `severity`, Dagster
#: `AssetCheckSeverity` (which has no info: a check reports, it never fails, at info), and the
#: stdlib `logging` level name the logging sink writes a finding at
LEVELS: dict[str, dict[Severity, str]] = {
    "sarif": {"error": "error", "warning": "warning", "info": "note"},
    "github": {"error": "error", "warning": "warning", "info": "notice"},
    "sentry": {"error": "error", "warning": "warning", "info": "info"},
    "pagerduty": {"error": "error", "warning": "warning", "info": "info"},
    "dagster": {"error": "ERROR", "warning": "WARN", "info": "WARN"},
    "logging": {"error": "ERROR", "warning": "WARNING", "info": "INFO"},
}


def as_severity(value: object) -> Severity:
    """`value` when it is a severity; ValueError naming the known ones otherwise.

    >>> as_severity("error")
    'error'
    """
    for severity in SEVERITIES:
        if value == severity:
            return severity
    raise ValueError(f"{value!r} is not a severity: use one of {', '.join(SEVERITIES)}")


def rank(severity: Severity) -> int:
    """0 for the most severe; sort by it to list the worst first.

    >>> sorted(["info", "error", "warning"], key=rank)
    ['error', 'warning', 'info']
    """
    return SEVERITIES.index(severity)


def at_least(severity: Severity, threshold: Severity) -> bool:
    """`severity` is `threshold` or worse.

    >>> at_least("error", "warning"), at_least("info", "warning")
    (True, False)
    """
    return rank(severity) <= rank(threshold)


def level(scale: str, severity: Severity) -> str:
    """`severity` on one of the `LEVELS` scales.

    >>> level("sarif", "info"), level("github", "info")
    ('note', 'notice')
    """
    return LEVELS[scale][severity]
