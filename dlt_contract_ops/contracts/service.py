"""Orchestration of the contract commands: wire source discovery and snapshot files to the
pure diff and release check. The CLI calls exactly one function of this module per command
and renders the value it returns (`output.contract`, `output.contract_lint`).
"""

from __future__ import annotations

import datetime as dt
import inspect
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_contract_ops.contracts.extract import contract_from_model, field_columns, resource_hints
from dlt_contract_ops.contracts.model import (
    ColumnContract,
    Locations,
    Release,
    ResourceContract,
    Version,
)
from dlt_contract_ops.contracts.odcs import ChildTable
from dlt_contract_ops.contracts.release import (
    ReleaseReport,
    Waiver,
    assess,
    first_release,
    unused_waivers,
)
from dlt_contract_ops.contracts.rules import Perspective
from dlt_contract_ops.contracts.store import (
    WAIVERS_FILE,
    WrittenFile,
    read_release,
    read_waivers,
    released_versions,
    source_dir,
    write_release,
)
from dlt_contract_ops.errors import NoContractError, SnapshotError

if TYPE_CHECKING:
    from dlt_contract_ops.contracts.lint import LintReport


@dataclass(frozen=True)
class CurrentContracts:
    """The contracts the source's models declare right now, and where each is declared;
    `children` the contracts of the child tables dlt lands list fields in (read on request)."""

    resources: tuple[ResourceContract, ...]
    locations: Locations
    notes: tuple[str, ...]
    children: tuple[ChildTable, ...] = ()
    #: the destination `[sources.<name>.contract_ops] destination` names, if any
    destination: str | None = None

    def release(self, source: str, version: Version) -> Release:
        return Release(source, version, self.resources)


def _relative(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if rel.startswith("..") else rel


def _locations(
    model: type[Any], resource: str, columns: dict[str, tuple[str, ...]]
) -> dict[tuple[str, str | None], tuple[str, int]]:
    """Where `model` and its fields are written, for CI annotations; empty when unknown."""
    try:
        file = inspect.getsourcefile(model)
        lines, start = inspect.getsourcelines(model)
    except (OSError, TypeError):
        return {}
    if file is None:
        return {}
    where = _relative(file)
    out: dict[tuple[str, str | None], tuple[str, int]] = {(resource, None): (where, start)}
    for field_name, names in columns.items():
        pattern = re.compile(rf"^\s+{re.escape(field_name)}\s*:")
        line = next((i for i, text in enumerate(lines) if pattern.match(text)), None)
        if line is not None:
            out.update({(resource, name): (where, start + line) for name in names})
    return out


def current_contracts(
    source: str, project_dir: str | os.PathLike[str] | None, *, children: bool = False
) -> CurrentContracts:
    """Build `source` through discovery and read every resource model's contract (and with
    `children`, the contract of every child table from its item model)."""
    from dlt_contract_ops.settings.files import project_context
    from dlt_contract_ops.settings.project import load_project_settings
    from dlt_contract_ops.sources.project_imports import begin_run
    from dlt_contract_ops.sources.resolve import resolve_source

    with project_context(project_dir) as pdir:
        begin_run()
        resolved = resolve_source(source, load_project_settings(), pdir)
    built = resolved.built
    resources = []
    locations: dict[tuple[str, str | None], tuple[str, int]] = {}
    for table in built.tables:
        model = built.models[table.resource]
        # dlt's primary_key / merge_key / partition / cluster / unique hints live on the resource
        hints = resource_hints(built.obj, table.resource, built.naming)
        contract = contract_from_model(source, table, model, built.naming, hints=hints)
        resources.append(contract)
        locations.update(_locations(model, table.resource, field_columns(model, built.naming)))
    if not resources:
        raise NoContractError(
            f"Source `{source}` has no resource with a Pydantic model (`columns=Model`), so it "
            f"declares no contract. {' '.join(built.notes)}".rstrip()
        )
    nested = _child_contracts(source, built) if children else ()
    return CurrentContracts(tuple(resources), locations, built.notes, nested,
                            resolved.settings.destination)


def _child_contracts(source: str, built: Any) -> tuple[ChildTable, ...]:
    from dlt_contract_ops.core.naming import nested_models

    out = []
    for table in built.tables:
        for child, rows in nested_models(table, built.models[table.resource], built.naming):
            if rows is not None:
                contract = contract_from_model(source, child, rows, built.naming)
            else:  # a list of scalars: one `value` column, nothing declared on it
                columns = [ColumnContract(c.name, c.data_type, c.nullable) for c in child.columns]
                contract = ResourceContract(source, child.resource, child.table, tuple(columns))
            out.append(ChildTable(contract, child.parent))
    return tuple(out)


@dataclass(frozen=True)
class SnapshotResult:
    source: str
    version: Version
    files: tuple[WrittenFile, ...]
    notes: tuple[str, ...]


def snapshot(
    source: str,
    version: str,
    out: str | os.PathLike[str],
    *,
    project_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> SnapshotResult:
    """Write the current contracts of `source` as release `version` under `out`."""
    parsed = version_option(version, "--version")
    root = Path(out).absolute()
    current = current_contracts(source, project_dir)
    files = write_release(root, current.release(source, parsed), force=force)
    return SnapshotResult(source, parsed, tuple(files), current.notes)


def version_option(text: str, option: str) -> Version:
    """`text`, the value of command-line `option`, as a Version; a SnapshotError naming it."""
    from dlt_contract_ops.contracts.model import VersionError

    try:
        return Version.parse(text)
    except VersionError as exc:
        raise SnapshotError(f"{option}: {exc}") from exc


def _waivers(path: str | os.PathLike[str] | None, default: Path | None) -> tuple[Waiver, ...]:
    if path is not None:
        return read_waivers(Path(path))
    if default is not None and default.is_file():
        return read_waivers(default)
    return ()


def diff(
    old: str | os.PathLike[str],
    new: str | os.PathLike[str],
    *,
    perspective: Perspective = "consumer",
    schema_only: bool = False,
    waivers: str | os.PathLike[str] | None = None,
    today: dt.date | None = None,
) -> ReleaseReport:
    """Compare two snapshots (version folders or single files) and judge the release."""
    before, after = read_release(Path(old)), read_release(Path(new))
    if before.source != after.source:
        raise SnapshotError(
            f"`{old}` is source `{before.source}` but `{new}` is `{after.source}`: diff two "
            "releases of the same source."
        )
    accepted = _waivers(waivers, None)
    assessment = assess(
        before, after, perspective=perspective, schema_only=schema_only,
        waivers=accepted, today=today or dt.date.today(),
    )
    report = ReleaseReport((assessment,), kind="diff")
    return ReleaseReport(report.assessments, unused_waivers(report, accepted), kind="diff")


def check(
    source: str,
    against: str | os.PathLike[str],
    *,
    version: str | None = None,
    transitive: bool = False,
    perspective: Perspective = "consumer",
    schema_only: bool = False,
    waivers: str | os.PathLike[str] | None = None,
    project_dir: str | os.PathLike[str] | None = None,
    today: dt.date | None = None,
) -> tuple[ReleaseReport, Locations]:
    """Judge the current models of `source` against its released snapshots under `against`:
    the latest release, or with `transitive` every release."""
    root = Path(against).absolute()
    if not root.is_dir():
        raise SnapshotError(
            f"`{against}` is not a folder of contract snapshots: create it with "
            f"`dlt-contract-ops contract snapshot -s {source} --out {against} --version 1.0.0`."
        )
    declared = version_option(version, "--version") if version is not None else None
    current = current_contracts(source, project_dir)
    released = released_versions(root, source)
    if not released:
        new_version = declared or Version(0, 0, 0)
        lone = first_release(source, new_version, str(against))
        return ReleaseReport((lone,), current.notes, kind="check"), current.locations
    new_version = declared or released[-1]
    accepted = _waivers(waivers, source_dir(root, source) / WAIVERS_FILE)
    targets: Sequence[Version] = released if transitive else released[-1:]
    new_release = current.release(source, new_version)
    today = today or dt.date.today()
    assessments = tuple(
        assess(
            read_release(source_dir(root, source) / str(v)), new_release,
            perspective=perspective, schema_only=schema_only, waivers=accepted, today=today,
        )
        for v in targets
    )
    report = ReleaseReport(assessments, kind="check")
    notes = current.notes + unused_waivers(report, accepted)
    return ReleaseReport(assessments, notes, kind="check"), current.locations


def lint(
    source: str,
    *,
    severities: Sequence[str] = (),
    project_dir: str | os.PathLike[str] | None = None,
) -> tuple[LintReport, Locations]:
    """Lint the contracts the current models of `source` declare; `severities` are
    `RULE=LEVEL` overrides (`lint.owner_missing=error`)."""
    from dlt_contract_ops.contracts.lint import lint_resources, parse_levels

    levels = parse_levels(severities)  # a typo fails before the source is built
    current = current_contracts(source, project_dir)
    report = lint_resources(source, current.resources, levels)
    return replace(report, notes=current.notes), current.locations

