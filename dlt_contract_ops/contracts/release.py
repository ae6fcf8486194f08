"""The release check: derive the bump a set of changes requires, compare it with the bump the
versions declare, apply waivers, and reach a verdict. Pure: `today` is a parameter.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace

from dlt_contract_ops.contracts.change import Change
from dlt_contract_ops.contracts.diff import diff_releases, legacy_notes
from dlt_contract_ops.contracts.model import Release, Version, declared_bump
from dlt_contract_ops.contracts.rules import Bump, Perspective, Severity


@dataclass(frozen=True)
class Waiver:
    """An accepted break: it is reported, but does not block until it expires.

    `column=None` matches a resource-level change (keys, grain, a removed resource) only.
    `where` says where it was declared, for messages (`contracts/waivers.toml, waiver #2`).
    """

    rule: str
    resource: str
    column: str | None
    reason: str
    expires: dt.date
    where: str = ""

    def matches(self, change: Change) -> bool:
        return (
            self.rule == change.rule_id
            and self.resource == change.resource
            and self.column == change.column
        )

    def active(self, today: dt.date) -> bool:
        """A waiver is good through its expiry date, inclusive."""
        return today <= self.expires


@dataclass(frozen=True)
class Finding:
    """A change as the release check sees it: severity for the chosen perspective, waiver,
    blocking."""

    change: Change
    severity: Severity
    blocking: bool
    waiver: Waiver | None = None
    waiver_expired: bool = False

    @property
    def waived(self) -> bool:
        return self.waiver is not None and not self.waiver_expired


@dataclass(frozen=True)
class SchemaOnlyView:
    """What a names-and-types diff of the same two releases would have concluded."""

    visible: int
    required: Bump
    ready: bool


@dataclass(frozen=True)
class Assessment:
    """One release compared with one earlier release (`old_version` None: nothing to compare)."""

    source: str
    old_version: Version | None
    new_version: Version
    perspective: Perspective
    schema_only: bool
    findings: tuple[Finding, ...]
    required: Bump
    declared: Bump | None  # None: the new version is lower than the old one
    ready: bool
    schema_only_view: SchemaOnlyView | None = None
    notes: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        return "READY" if self.ready else "BLOCKED"

    @property
    def offending(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.blocking)


@dataclass(frozen=True)
class ReleaseReport:
    """Every assessment of one release check: one for `diff`, one per prior release for
    `check --transitive`. READY only when every assessment is."""

    assessments: tuple[Assessment, ...]
    notes: tuple[str, ...] = ()
    #: "diff" (two snapshots) or "check" (the current models against released snapshots)
    kind: str = "diff"

    @property
    def ready(self) -> bool:
        return all(a.ready for a in self.assessments)

    @property
    def verdict(self) -> str:
        return "READY" if self.ready else "BLOCKED"

    @property
    def blocked_versions(self) -> tuple[Version, ...]:
        return tuple(
            a.old_version for a in self.assessments if not a.ready and a.old_version is not None
        )


def required_bump(severities: Sequence[Severity]) -> Bump:
    """The smallest bump covering every severity; NONE when nothing changed.

    >>> required_bump([Severity.ADDITIVE, Severity.SAFE]).label
    'minor'
    >>> required_bump([]).label
    'none'
    """
    return max((s.bump for s in severities), default=Bump.NONE)


def _waiver_for(change: Change, waivers: Sequence[Waiver]) -> Waiver | None:
    return next((w for w in waivers if w.matches(change)), None)


def _findings(
    changes: Sequence[Change],
    perspective: Perspective,
    declared: Bump | None,
    waivers: Sequence[Waiver],
    today: dt.date,
) -> tuple[Finding, ...]:
    out: list[Finding] = []
    for change in changes:
        severity = change.severity(perspective)
        waiver = _waiver_for(change, waivers)
        expired = waiver is not None and not waiver.active(today)
        waived = waiver is not None and not expired
        # safe changes never block: any release, even an unchanged version, may carry them
        exceeds = declared is None or severity.bump > declared
        blocking = not waived and severity is not Severity.SAFE and exceeds
        out.append(Finding(change, severity, blocking, waiver, expired))
    return tuple(out)


def assess_changes(
    source: str,
    old_version: Version,
    new_version: Version,
    changes: Sequence[Change],
    *,
    perspective: Perspective = "consumer",
    schema_only: bool = False,
    waivers: Sequence[Waiver] = (),
    today: dt.date,
) -> Assessment:
    """Judge `changes` between two versions: required bump, declared bump, verdict."""
    declared = declared_bump(old_version, new_version)
    findings = _findings(changes, perspective, declared, waivers, today)
    required = required_bump([f.severity for f in findings if not f.waived])
    notes: list[str] = []
    if declared is None:
        notes.append(
            f"version {new_version} is lower than {old_version}: a release never goes back; "
            "pick a version above the latest release"
        )
    for f in findings:
        if f.waiver_expired and f.waiver is not None:
            notes.append(
                f"waiver for `{f.change.rule_id}` on `{f.change.subject}` expired on "
                f"{f.waiver.expires.isoformat()} ({f.waiver.where}): it blocks again"
            )
    ready = declared is not None and not any(f.blocking for f in findings)
    return Assessment(
        source=source,
        old_version=old_version,
        new_version=new_version,
        perspective=perspective,
        schema_only=schema_only,
        findings=findings,
        required=required,
        declared=declared,
        ready=ready,
        notes=tuple(notes),
    )


def assess(
    old: Release,
    new: Release,
    *,
    perspective: Perspective = "consumer",
    schema_only: bool = False,
    waivers: Sequence[Waiver] = (),
    today: dt.date,
) -> Assessment:
    """Diff `old` → `new` and judge it. Unless `schema_only`, the result also says what a
    names-and-types diff would have concluded, so its blind spot is visible side by side.

    >>> from dlt_contract_ops.contracts.model import ColumnContract, ResourceContract
    >>> col = ColumnContract("price", "double", False, unit="USD")
    >>> v1 = Release("erp", Version(1, 0, 0), (ResourceContract("erp", "l", "l", (col,)),))
    >>> cents = ColumnContract("price", "double", False, unit="USD_cents")
    >>> v2 = Release("erp", Version(1, 0, 1), (ResourceContract("erp", "l", "l", (cents,)),))
    >>> a = assess(v1, v2, today=dt.date(2026, 1, 1))
    >>> a.verdict, a.required.label, a.schema_only_view.ready
    ('BLOCKED', 'major', True)
    """
    changes = diff_releases(old, new, schema_only=schema_only)
    result = assess_changes(
        new.source, old.version, new.version, changes,
        perspective=perspective, schema_only=schema_only, waivers=waivers, today=today,
    )
    if not schema_only:
        result = replace(result, notes=result.notes + legacy_notes(old, new))
    if schema_only:
        return result
    structural = assess_changes(
        new.source, old.version, new.version, diff_releases(old, new, schema_only=True),
        perspective=perspective, schema_only=True, waivers=waivers, today=today,
    )
    view = SchemaOnlyView(len(structural.findings), structural.required, structural.ready)
    return replace(result, schema_only_view=view)


def first_release(source: str, version: Version, where: str) -> Assessment:
    """The assessment of a release with nothing before it: READY, with a note saying so."""
    return Assessment(
        source=source,
        old_version=None,
        new_version=version,
        perspective="consumer",
        schema_only=False,
        findings=(),
        required=Bump.NONE,
        declared=None,
        ready=True,
        notes=(
            f"no released snapshot of `{source}` under `{where}`: nothing to compare yet; "
            f"record the first release with `dlt-contract-ops contract snapshot -s {source} "
            f"--version {version}`",
        ),
    )


def unused_waivers(report: ReleaseReport, waivers: Sequence[Waiver]) -> tuple[str, ...]:
    """Notes for waivers that matched no change: stale entries worth deleting."""
    used = {f.waiver for a in report.assessments for f in a.findings if f.waiver is not None}
    return tuple(
        f"{w.where}: waiver for `{w.rule}` on `{w.resource}"
        f"{'.' + w.column if w.column else ''}` matched no change; delete it if it is stale"
        for w in waivers
        if w not in used
    )
