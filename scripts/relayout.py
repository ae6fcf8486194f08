"""Move the package into its concept layout and rewrite every reference. Idempotent.

    python scripts/relayout.py            # git mv + rewrite, in the repository root
    python scripts/relayout.py --dry-run  # print what it would do

The table `MOVES` maps an old module (or package) to its new home. A package entry moves every
module under it that no longer-prefixed entry claims. The script

1. `git mv`s each file that still sits at an old path (a branch merged later may have added or
   changed files there: run the script again and they follow);
2. rewrites references in every tracked text file (package, tests, examples, bench, docs,
   pyproject.toml, Makefile, scripts): dotted names (`dlt_contract_ops.gate.run`, also inside
   strings such as entry-point values and `monkeypatch.setattr("dlt_contract_ops....")`),
   `from dlt_contract_ops[.pkg] import module` forms and slash paths
   (`dlt_contract_ops/gate/run.py`).

Running it twice changes nothing the second time: a name that already is a new module is left
alone. Two old modules became packages of the same name (`detectors`, `acks`); a reference to
them is rewritten unless it names one of the new package's own submodules, and the
entry-point group name `"dlt_contract_ops.detectors"` is never touched. CHANGELOG.md (history)
is not rewritten.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

PKG = "dlt_contract_ops"

#: old module or package (relative to the package) -> new one
MOVES: dict[str, str] = {
    # model/: immutable values, import nothing else of the package
    "findings": "model.findings",
    # engine/: the run, the sweep, the source context, one source's detectors, validate
    "reconcile": "engine.reconcile",
    "context": "engine.context",
    "detector_runs": "engine.detector_runs",
    "validation": "engine.validation",
    # detectors/: the registry, the Detector value, each detector's runner and queries
    "detectors": "detectors.registry",
    "detector": "detection.detector",
    "detector_settings": "detectors.settings",
    "runners": "detectors",
    "queries": "detectors.queries",
    # sources/: resolve, build, cache, init
    "resolver": "sources.resolve",
    "discovery": "sources.discovery",
    "bounded_build": "sources.bounded_build",
    "source_cache": "sources.cache",
    "onboarding": "sources.onboarding",
    "loaded": "sources.loaded",
    # destinations/: driver values to JSON live beside the drivers
    "jsonable": "destinations.jsonable",
    # output/: one writer per format
    "formats": "output",
    "render": "output.text",
    # acks/: the file, the book, what the commands do
    "acks": "acks.store",
    "acks_cli": "acks.service",
    # ingest/: the ingest gate (so "gate" means one thing); its pure decision is core
    "gate": "ingest",
    "gate.compare": "core.ingest",
    # contracts/: the release check is `release`, not a second "gate"
    "contracts.gate": "contracts.release",
    "verify_queries": "contracts.verify_queries",
    # core/: every pure rule
    "profiles.compare": "core.distribution",
    # engine/: the sweep's counters, observed by tests and the bench (`observe_sweeps`)
    "sweep_stats": "engine.sweep_stats",
    # the layer order (tests/unit/test_layout.py): the contract reports render in output/,
    # the values core/ and model/ read sit beside them, settings readers in settings/
    "contracts.render": "output.contract",
    "contracts.ci": "output.contract_ci",
    "contracts.lint_render": "output.contract_lint",
    "contracts.wording": "output.contract_wording",
    "profiles.model": "core.load_profile",
    "ingest.report": "model.gate",
    "gate.report": "model.gate",
    "ingest.settings": "settings.gate",
    "gate.settings": "settings.gate",
}

#: strings that look like old module names but are entry-point group names: never rewritten
PROTECTED = {f"{PKG}.detectors", f"{PKG}.destinations", f"{PKG}.alert_sinks"}

#: files never rewritten (history)
SKIP_FILES = {"CHANGELOG.md", "scripts/relayout.py"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".sh", ".yml", ".yaml", ".json"}


def _old_to_new(old: str) -> str | None:
    """Dotted old module (relative) -> new one, by the longest matching entry."""
    parts = old.split(".")
    for cut in range(len(parts), 0, -1):
        key = ".".join(parts[:cut])
        if key in MOVES:
            rest = parts[cut:]
            return ".".join([MOVES[key], *rest])
    return None


def _module_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / PKG).rglob("*.py") if "__pycache__" not in p.parts)


def _rel_module(path: Path, root: Path) -> str:
    rel = path.relative_to(root / PKG).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts)  # `x/__init__` stays `x.__init__`: a file, not the package


def _git(*args: str, root: Path, dry: bool) -> None:
    print("git", *args)
    if not dry:
        subprocess.run(["git", *args], cwd=root, check=True)


def move_files(root: Path, dry: bool) -> None:
    # packages first, so a package's own `__init__.py` is in place before a module joins it
    files = sorted(_module_files(root), key=lambda p: (p.name != "__init__.py", str(p)))
    for path in files:
        old = _rel_module(path, root)
        new = _old_to_new(old)
        if new is None or new == old:
            continue
        # a module that is already a new home (`detectors/additive.py` after the move) stays
        if _is_new_home(old):
            continue
        target = root / PKG / Path(*new.split(".")).with_suffix(".py")
        if target.exists():
            raise SystemExit(f"both {path} and {target} exist: merge them by hand, then rerun")
        for parent in reversed(target.relative_to(root / PKG).parents[:-1]):
            init = root / PKG / parent / "__init__.py"
            if init != target and not init.exists() and not dry:
                init.parent.mkdir(parents=True, exist_ok=True)
                doc = f'"""{parent.name}: see docs/architecture.md."""\n'
                init.write_text(doc, encoding="utf-8")
                _git("add", str(init.relative_to(root)), root=root, dry=dry)
        if not dry:
            target.parent.mkdir(parents=True, exist_ok=True)
        _git("mv", str(path.relative_to(root)), str(target.relative_to(root)), root=root, dry=dry)
    # package data (templates) follows its package: a file in an old package's folder whose
    # folder is not a new home itself
    for path in sorted((root / PKG).rglob("*")):
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root / PKG)
        package = ".".join(rel.parts[:1])
        new_pkg = MOVES.get(package)
        if not rel.parts[1:] or new_pkg is None or _is_new_home(package):
            continue
        target = root / PKG / Path(*new_pkg.split(".")) / Path(*rel.parts[1:])
        if not dry:
            target.parent.mkdir(parents=True, exist_ok=True)
        _git("mv", str(path.relative_to(root)), str(target.relative_to(root)), root=root, dry=dry)
    # old folders left with nothing but caches (never a folder that still holds a file)
    for folder in sorted((root / PKG).rglob("*"), reverse=True):
        empty = folder.is_dir() and not any(
            p.is_file() and "__pycache__" not in p.parts for p in folder.rglob("*")
        )
        if empty and not dry:
            subprocess.run(["rm", "-rf", str(folder)], check=True)


def _new_modules(root: Path) -> set[str]:
    """Every module the new layout has: the targets of the table and the files present."""
    out: set[str] = set()
    for target in MOVES.values():
        parts = target.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    for path in _module_files(root):
        rel = _rel_module(path, root)
        out.add(rel.removesuffix(".__init__"))
    return out


_NEW: set[str] = set()


def _is_new_home(old: str) -> bool:
    """A file path that is its own new home: under a package that is a target (`detectors`,
    `acks`) and not itself an old module (`detectors/additive.py` after the move)."""
    mod = old.removesuffix(".__init__")
    parts = mod.split(".")
    if parts[0] not in {t.split(".")[0] for t in MOVES.values()}:
        return False
    key_hit = _longest_key(mod)
    if key_hit is None:
        return False
    key, _ = key_hit
    # `acks/store.py`: key `acks` is an old *module* that is now a package; anything under it
    # that exists as a file is already new
    # the old module was a file, so its name's `__init__.py` is the new package's too
    return key in _AMBIGUOUS and (mod != key or old.endswith(".__init__"))


def _longest_key(dotted: str) -> tuple[str, list[str]] | None:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        key = ".".join(parts[:cut])
        if key in MOVES:
            return key, parts[cut:]
    return None


#: old modules whose name the new layout reuses as a package
_AMBIGUOUS = {"detectors", "acks"}


def _rewrite_dotted(rel: str, imported: list[str] | None = None) -> str | None:
    """New relative dotted name for `rel`, or None to leave it.

    `imported`: for `from <rel> import a, b`, the names imported (decides the ambiguous case).
    """
    hit = _longest_key(rel)
    if hit is None:
        return None
    key, rest = hit
    if key in _AMBIGUOUS:
        # `detectors.additive` (a submodule of the new package) is new already;
        # `detectors.selected` / `from detectors import selected` is the old module
        sub = rest[0] if rest else None
        if sub is not None and f"{key}.{sub}" in _NEW:
            return None
        if sub is None and imported and all(f"{key}.{n}" in _NEW for n in imported):
            return None
    # a name that already is a new module, or an attribute of one, stays
    parts = rel.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in _NEW and cut > len(key.split(".")):
            return None
    new = ".".join([MOVES[key], *rest])
    return new if new != rel else None


_FROM_IMPORT = re.compile(
    rf"^(?P<indent>[ \t]*)from (?P<mod>{PKG}(?:\.[A-Za-z_]\w*)*) import (?P<names>[^\n(]+)$",
    re.MULTILINE,
)
_DOTTED = re.compile(rf"(?<![\w.]){PKG}((?:\.[A-Za-z_]\w*)+)")
_SLASHED = re.compile(rf"(?<![\w/]){PKG}((?:/[A-Za-z_]\w*)+)(\.py|/)?")


def _split_names(names: str) -> list[tuple[str, str | None]]:
    out = []
    for item in names.split("#")[0].split(","):
        item = item.strip()
        if not item:
            continue
        bits = item.split(" as ")
        out.append((bits[0].strip(), bits[1].strip() if len(bits) > 1 else None))
    return out


def _rewrite_from_import(match: re.Match[str]) -> str:
    indent, mod, names = match["indent"], match["mod"], match["names"]
    rel = mod[len(PKG) + 1 :] if mod != PKG else ""
    comment = ""
    if "#" in names:
        comment = "  #" + names.split("#", 1)[1]
    parsed = _split_names(names)
    # `from pkg[.x] import module`: each name that is an old module moves on its own
    lines: list[str] = []
    keep: list[str] = []
    changed = False
    for name, alias in parsed:
        full = f"{rel}.{name}" if rel else name
        new = _module_target(full)
        if new is None:
            keep.append(f"{name} as {alias}" if alias else name)
            continue
        changed = True
        parent, _, leaf = new.rpartition(".")
        src = f"{PKG}.{parent}" if parent else PKG
        local = alias or name
        lines.append(
            f"{indent}from {src} import {leaf}" + (f" as {local}" if local != leaf else "")
        )
    if not changed:
        # the module itself moved: `from dlt_contract_ops.gate.run import gated_run`
        if rel:
            new_mod = _rewrite_dotted(rel, [n for n, _ in parsed])
            if new_mod is not None:
                return f"{indent}from {PKG}.{new_mod} import {names}"
        return match.group(0)
    if keep:
        new_rel = _rewrite_dotted(rel, [n.split(" as ")[0] for n in keep]) if rel else None
        src = f"{PKG}.{new_rel}" if new_rel else mod
        lines.insert(0, f"{indent}from {src} import {', '.join(keep)}")
    if comment:
        lines[0] += comment
    return "\n".join(lines)


def _module_target(rel: str) -> str | None:
    """`rel` names an old *module file or package* (not an attribute): its new name."""
    if rel in MOVES or rel in _OLD_MODULES:
        return _rewrite_dotted(rel)
    return None


_OLD_MODULES: set[str] = set()


def _rewrite_text(text: str) -> str:
    text = _FROM_IMPORT.sub(_rewrite_from_import, text)

    def dotted(m: re.Match[str]) -> str:
        whole = m.group(0)
        if whole in PROTECTED:
            return whole
        after = m.string[m.end() : m.end() + 9]
        hit = _longest_key(m.group(1)[1:])
        ambiguous = hit is not None and hit[0] in _AMBIGUOUS
        if ambiguous and after.startswith(" import ") and after != " import (":
            return whole  # `from acks import store`: the pass above decided it
        new = _rewrite_dotted(m.group(1)[1:])
        return f"{PKG}.{new}" if new else whole

    text = _DOTTED.sub(dotted, text)

    def slashed(m: re.Match[str]) -> str:
        rel = m.group(1)[1:].replace("/", ".")
        new = _rewrite_dotted(rel)
        if new is None:
            return m.group(0)
        return f"{PKG}/{new.replace('.', '/')}{m.group(2) or ''}"

    return _SLASHED.sub(slashed, text)


def sort_imports(root: Path, names: list[str], dry: bool) -> None:
    """A rewritten `from` line sorts elsewhere: let ruff's isort rule put it back in order."""
    ruff = root / ".venv" / "bin" / "ruff"
    cmd = [str(ruff)] if ruff.exists() else [sys.executable, "-m", "ruff"]
    if names and not dry:
        subprocess.run([*cmd, "check", "--fix", "--select", "I001", "-q", *names], cwd=root)


def rewrite_files(root: Path, dry: bool) -> list[str]:
    files = subprocess.run(
        ["git", "ls-files"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.split()
    changed: list[str] = []
    for name in files:
        path = root / name
        if name in SKIP_FILES or not path.is_file():
            continue
        if path.suffix not in TEXT_SUFFIXES and path.name != "Makefile":
            continue
        text = path.read_text(encoding="utf-8")
        new = _rewrite_text(text)
        if new != text:
            print("rewrite", name)
            changed.append(name)
            if not dry:
                path.write_text(new, encoding="utf-8")
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    root = Path(
        subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    # every old module name (for `from pkg import module`): the table's keys and their files
    _OLD_MODULES.update(MOVES)
    move_files(root, args.dry_run)
    _NEW.update(_new_modules(root))
    changed = rewrite_files(root, args.dry_run)
    sort_imports(root, [n for n in changed if n.endswith(".py")], args.dry_run)
    if not args.dry_run:
        subprocess.run(["git", "add", "-A", PKG], cwd=root, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
