"""Phrases every contract report format shares (text, JUnit, GitHub annotations)."""

from __future__ import annotations

from dlt_contract_ops.contracts.release import Assessment, Finding


def heading(a: Assessment, kind: str) -> str:
    """`erp 1.0.0 → 1.1.0`, naming the current models for `check`."""
    new = f"{a.new_version} (current models)" if kind == "check" else str(a.new_version)
    if a.old_version is None:
        return f"{a.source} {new}"
    return f"{a.source} {a.old_version} → {new}"


def bump_phrase(a: Assessment) -> str:
    """`requires major, declares minor (1.0.0 → 1.1.0)`."""
    declared = "a lower version" if a.declared is None else a.declared.label
    return f"requires {a.required.label}, declares {declared} ({a.old_version} → {a.new_version})"


def blocking_reason(f: Finding, a: Assessment) -> str:
    """Why one finding blocks: the bump it needs against the bump declared."""
    declared = "a lower version" if a.declared is None else f"a {a.declared.label} bump"
    expired = ""
    if f.waiver_expired and f.waiver is not None:
        expired = f"; its waiver expired on {f.waiver.expires.isoformat()}"
    return f"needs a {f.severity.bump.label} bump, the release declares {declared}{expired}"
