"""What `reconcile --suggest` found: per model file its text as the sweep read it and the
findings to patch in it, and the patched texts as unified diffs."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path

from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.suggest.edits import TableFacts


@dataclass
class ModelFile:
    """One file that defines models of findings: its text and hash when the sweep read it."""

    path: Path
    text: str
    digest: str
    #: the findings' edits, in order: (finding, facts)
    edits: list[tuple[DriftFinding, TableFacts]] = field(default_factory=list)


@dataclass
class Suggestions:
    """What `--suggest` found: the files to patch, and why a finding has none."""

    results: list[ReconcileResult]
    files: dict[Path, ModelFile] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: why a finding's model file may not be written (installed code, outside the project)
    refused: list[str] = field(default_factory=list)
    #: path -> the patched text
    patched: dict[Path, str] = field(default_factory=dict)


def diffs(found: Suggestions, project_dir: str) -> str:
    """The unified diff of every patched file, paths relative to the project."""
    out: list[str] = []
    for path, new in found.patched.items():
        rel = os.path.relpath(path, project_dir)
        out += difflib.unified_diff(
            found.files[path].text.splitlines(keepends=True), new.splitlines(keepends=True),
            f"a/{rel}", f"b/{rel}")
    return "".join(out)
