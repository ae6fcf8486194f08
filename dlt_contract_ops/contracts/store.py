"""Snapshot files on disk: `<root>/<source>/<version>/<resource>.json`, plus the source's
`waivers.toml` beside its version folders. The only module of the feature that touches files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from dlt_contract_ops.contracts.canonical import from_document, to_document
from dlt_contract_ops.contracts.model import Release, Version, VersionError
from dlt_contract_ops.contracts.release import Waiver
from dlt_contract_ops.contracts.waivers import parse_waivers
from dlt_contract_ops.errors import ExportError, SnapshotError, WaiverError
from dlt_contract_ops.statefile import read_utf8

#: a reviewed, committed file with a byte that is not UTF-8 is refused, never read in part
_RESTORE = ": restore it from version control or save it as UTF-8."

WAIVERS_FILE = "waivers.toml"


def resource_filename(resource: str) -> str:
    """A file name for any resource name: odd characters are percent-encoded.

    >>> resource_filename("orders/v2 (eu)")
    'orders%2Fv2%20%28eu%29.json'
    """
    return quote(resource, safe="-_.") + ".json"


def source_dir(root: Path, source: str) -> Path:
    return root / quote(source, safe="-_.")


@dataclass(frozen=True)
class WrittenFile:
    path: Path
    resource: str
    status: str  # "written" | "unchanged" | "replaced" | "removed"
    content_hash: str = ""


def _atomic_write(path: Path, text: str) -> None:
    # atomic, but not locked: a lock file would land in the committed contracts folder
    from dlt_contract_ops.statefile import write_text

    write_text(path, text)


def write_release(root: Path, release: Release, *, force: bool = False) -> list[WrittenFile]:
    """Write every resource of `release`. A released version is immutable: a file that would
    change (or a resource that disappeared) is refused unless `force`."""
    from dlt_contract_ops.contracts.canonical import content_hash

    folder = source_dir(root, release.source) / str(release.version)
    planned: dict[str, tuple[Path, str, str]] = {}
    for res in release.resources:
        name = resource_filename(res.resource)
        clash = next(
            (r for r, (p, _, _) in planned.items() if p.name.casefold() == name.casefold()), None
        )
        if clash is not None:
            raise SnapshotError(
                f"Resources `{clash}` and `{res.resource}` map to the same snapshot file name "
                "on a case-insensitive file system; rename one of them."
            )
        text = to_document(res, release.version)
        planned[res.resource] = (folder / name, text, content_hash(res))
    conflicts: list[str] = []
    stale = sorted(p for p in folder.glob("*.json")) if folder.is_dir() else []
    stale = [p for p in stale if p not in {v[0] for v in planned.values()}]
    for path, text, _ in planned.values():
        if path.exists() and path.read_bytes() != text.encode("utf-8"):
            conflicts.append(f"`{path}` differs")
    conflicts += [f"`{p}` has no resource any more" for p in stale]
    if conflicts and not force:
        raise SnapshotError(
            f"Release {release.version} of `{release.source}` is already snapshotted in "
            f"`{folder}` and the models changed since: {'; '.join(conflicts)}. A released "
            "contract is immutable: snapshot a new version (run `dlt-contract-ops contract "
            "check` to learn which bump it needs), or pass --force to overwrite an unreleased one."
        )
    folder.mkdir(parents=True, exist_ok=True)
    out: list[WrittenFile] = []
    for resource, (path, text, digest) in planned.items():
        existed = path.exists()
        if existed and path.read_bytes() == text.encode("utf-8"):
            out.append(WrittenFile(path, resource, "unchanged", digest))
            continue
        _atomic_write(path, text)
        out.append(WrittenFile(path, resource, "replaced" if existed else "written", digest))
    for path in stale:
        path.unlink()
        out.append(WrittenFile(path, path.stem, "removed"))
    return out


def read_release(path: Path) -> Release:
    """A release from a version folder (every `*.json` in it) or from one snapshot file."""
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise SnapshotError(
                f"`{path}` holds no snapshot (`*.json`); point at a version folder written by "
                "`dlt-contract-ops contract snapshot`, e.g. `contracts/<source>/1.0.0`."
            )
    else:
        raise SnapshotError(f"`{path}` does not exist: give a snapshot file or version folder.")
    resources = []
    source: str | None = None
    version: Version | None = None
    seen: dict[str, Path] = {}
    for file in files:
        contract, file_version = from_document(read_utf8(file, SnapshotError, _RESTORE), str(file))
        if source is not None and contract.source != source:
            raise SnapshotError(
                f"`{file}` belongs to source `{contract.source}`, the rest of `{path}` to "
                f"`{source}`; keep one source per folder."
            )
        if version is not None and file_version != version:
            raise SnapshotError(
                f"`{file}` is version {file_version}, the rest of `{path}` is {version}; keep "
                "one version per folder."
            )
        if contract.resource in seen:
            raise SnapshotError(
                f"`{file}` and `{seen[contract.resource]}` both hold resource "
                f"`{contract.resource}`."
            )
        seen[contract.resource] = file
        source, version = contract.source, file_version
        resources.append(contract)
    assert source is not None
    assert version is not None
    if path.is_dir() and path.name != str(version):
        try:
            named = Version.parse(path.name)
        except VersionError:
            named = None
        if named is not None and named != version:
            raise SnapshotError(
                f"`{path}` is named {named} but its snapshots say version {version}."
            )
    return Release(source, version, tuple(resources))


def released_versions(root: Path, source: str) -> list[Version]:
    """Versions of `source` snapshotted under `root`, oldest first."""
    folder = source_dir(root, source)
    if not folder.is_dir():
        return []
    versions = []
    for child in folder.iterdir():
        if not child.is_dir():
            continue
        try:
            versions.append(Version.parse(child.name))
        except VersionError:
            continue  # not a release folder
    return sorted(versions)


def read_waivers(path: Path) -> tuple[Waiver, ...]:
    """The waivers in the TOML file `path`."""
    try:
        text = read_utf8(path, WaiverError, _RESTORE)
    except OSError as exc:
        raise WaiverError(f"Cannot read waiver file `{path}`: {exc.strerror}.") from exc
    return parse_waivers(text, str(path))


#: the file name suffix of an exported ODCS document (what ODCS's tooling recognizes)
ODCS_SUFFIX = ".odcs.yaml"


def export_path(out: Path, source: str, count: int) -> Path:
    """Where the export of `source` goes: `out` itself when it names a `.yaml`/`.yml` file
    (one source only), else `out/<source>.odcs.yaml`."""
    if out.suffix in (".yaml", ".yml"):
        if count > 1:
            raise ExportError(
                f"--out `{out}` is one file, but {count} sources are exported: give a folder."
            )
        return out
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out `{out}` is a file, not a folder: give a folder or a .yaml file.")
    return source_dir(out, source).with_name(source_dir(out, source).name + ODCS_SUFFIX)


def write_export(path: Path, text: str) -> None:
    """Write an exported document (atomically); an unwritable place is an ExportError."""
    try:
        _atomic_write(path, text)
    except OSError as exc:
        raise ExportError(
            f"Cannot write `{path}`: {exc.strerror or exc}. Give a writable --out."
        ) from exc
