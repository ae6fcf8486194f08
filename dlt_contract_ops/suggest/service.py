"""`reconcile --suggest`: one sweep, then for each finding the model change that makes the
next sweep clean, as a unified diff per model file; `--apply` writes them.

The model of a finding's resource is found the way the sweep found it (its `columns=` model,
or one bound by configuration): its file by `inspect.getsourcefile`, the class by its
qualified name. The file's text and hash are read while the sweep runs; a file that changed
since is never written.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from libcst import ParserSyntaxError

from dlt_contract_ops.errors import SuggestError
from dlt_contract_ops.model.findings import DriftFinding, ReconcileResult
from dlt_contract_ops.sources.project_imports import write_module
from dlt_contract_ops.suggest.edits import TableFacts, suggest, unlandable
from dlt_contract_ops.suggest.found import ModelFile, Suggestions, diffs


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _outside(path: Path, project_dir: str) -> str | None:
    """Why `path` may not be patched: installed code, or a file outside the project."""
    real = os.path.realpath(path)
    installed = {os.path.realpath(p) for k in ("purelib", "platlib", "stdlib")
                 if (p := sysconfig.get_paths().get(k))}
    if "site-packages" in Path(real).parts or any(
            real.startswith(p + os.sep) for p in installed):
        return "it is installed code (site-packages)"
    if not real.startswith(os.path.realpath(project_dir) + os.sep):
        return f"it lies outside the project `{project_dir}`"
    return None


def _live_column(db_type: str, data_type: str | None) -> dict[str, Any]:
    """A dlt column schema for a live column: its dlt type, with the time zone and size the
    destination type spells."""
    import re

    column: dict[str, Any] = {"data_type": data_type}
    upper = db_type.upper()
    if data_type == "timestamp":
        column["timezone"] = ("TIME ZONE" in upper and "WITHOUT" not in upper) or "TZ" in upper
    size = re.search(r"\((\d+)\s*(?:,\s*(\d+))?\)", db_type)
    if size and data_type in ("decimal", "text", "binary"):
        column["precision"] = int(size.group(1))
        if size.group(2) is not None and data_type == "decimal":
            column["scale"] = int(size.group(2))
    return column


class Collector:
    """The sweep's `inspect` hook: reads each finding's model file while the sweep runs."""

    def __init__(self, project_dir: str) -> None:
        self.project_dir = project_dir
        self.files: dict[Path, ModelFile] = {}
        self.notes: list[str] = []
        self.refused: list[str] = []

    def __call__(self, ctx: Any, results: list[ReconcileResult]) -> None:
        for result in results:
            for finding in result.findings:
                try:
                    self._collect(ctx, finding)
                except SuggestError as exc:
                    if str(exc) not in self.refused:
                        self.notes.append(f"{_label(finding)}: {exc}")

    def _collect(self, ctx: Any, finding: DriftFinding) -> None:
        expected, model = _table_model(ctx.built, finding)
        if "<locals>" in model.__qualname__:
            raise SuggestError(f"model `{model.__qualname__}` is defined inside a function")
        try:
            source = inspect.getsourcefile(model)
        except TypeError:
            source = None
        if source is None:
            raise SuggestError(f"the file of model `{model.__qualname__}` cannot be found")
        path = Path(source).resolve()
        why = _outside(path, self.project_dir)
        if why is not None:
            refusal = (f"model `{model.__qualname__}` of {_label(finding)} is defined in "
                       f"`{path}`: {why}; change it there by hand")
            self.refused.append(refusal)
            raise SuggestError(refusal)
        if path not in self.files:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise SuggestError(f"`{path}` cannot be read: {exc}") from exc
            self.files[path] = ModelFile(path, text, _digest(text))
        live = ctx.live.get(finding.table)
        columns = {}
        for name in finding.columns:
            if live is not None and live.has(name):
                db_type = live.columns[name].data_type
                columns[name] = _live_column(db_type, ctx.read_type(db_type))
        if finding.drift_type == "type" and live is not None:
            for name in _no_fit(ctx, expected, live, columns):
                self.notes.append(
                    f"{_label(finding)}: no Python type declares what `{name}` "
                    f"({live.columns[name].data_type}) holds: widen the column, or acknowledge "
                    "the finding")
                del columns[name]
        fields = {c.name: c.field or c.name for c in expected.columns}
        facts = TableFacts(model.__qualname__, ctx.built.naming, fields, columns)
        edits = self.files[path].edits
        # two sources over one table (a source loaded by two pipelines) find the same drift
        # of the same model: one edit
        same = (facts.qualname, finding.drift_type, finding.table, tuple(finding.columns))
        if not any((f.qualname, g.drift_type, g.table, tuple(g.columns)) == same
                   for g, f in edits):
            edits.append((finding, facts))


def _no_fit(ctx: Any, expected: Any, live: Any, columns: dict[str, Any]) -> list[str]:
    """The columns whose widened field would still be type drift, by the type detector's own
    rule: a 32-bit `INTEGER` or `REAL` holds less than any `int` or `float` declares."""
    from dataclasses import replace

    from dlt_contract_ops.core.columns import ExpectedColumn
    from dlt_contract_ops.core.declared import detect_type

    widened = tuple(ExpectedColumn(name, col["data_type"], precision=col.get("precision"),
                                   scale=col.get("scale")) for name, col in columns.items())
    drift = detect_type(replace(expected, columns=widened), live, ctx.read_type)
    return list(drift.columns) if drift is not None else []


def _table_model(built: Any, finding: DriftFinding) -> tuple[Any, type[Any]]:
    """The finding's table as the model declares it, and the class that declares it: the
    resource's model, or for a child table the item model of its `list[...]` field."""
    from dlt_contract_ops.core.naming import nested_models

    model = built.models.get(finding.resource)
    root = next((t for t in built.tables if t.table == finding.table and not t.parent), None)
    if model is not None and root is not None:
        return root, model
    roots = [t for t in built.tables if t.resource == finding.resource and not t.parent]
    for table, rows in (nested_models(roots[0], model, built.naming)
                        if model is not None and roots else []):
        if table.table == finding.table and rows is not None:
            # `nested_models` reads an item model through a subclass of its own making
            # (`core.naming._as_rows`): the user's class is its base
            made = rows.__dict__.get("dlt_config") is not None and rows.__bases__[0].__name__ \
                == rows.__name__ and rows.__qualname__ == rows.__name__
            return table, rows.__bases__[0] if made else rows
    raise SuggestError("no model found for its table")


def _label(finding: DriftFinding) -> str:
    return f"{finding.drift_type} finding on `{finding.table}` ({', '.join(finding.columns)})"


def collect(
    sources: Sequence[str] | None, project_dir: str, *, keep: bool = False, **sweep: Any
) -> Suggestions:
    """One dry sweep (no alerts) and the patched text of every model file it found drift
    for; a finding whose kind needs no model change is a note."""
    from dlt_contract_ops.engine.reconcile import run

    collector = Collector(os.path.abspath(project_dir))
    results = run(sources, dry_run=True, project_dir=project_dir, inspect=collector, **sweep)
    out = Suggestions(results, collector.files, collector.notes, collector.refused)
    for path, mf in collector.files.items():
        text = mf.text
        for finding, facts in mf.edits:
            try:
                new = suggest(text, finding, facts, keep=keep)
                out.notes += [
                    f"{_label(finding)}: column `{c}` is not a name dlt's naming gives a "
                    f"field (it gives `{facts.naming.normalize_path(c)}`): made outside dlt, "
                    "no model field lands in it" for c in unlandable(finding, facts)]
            except SuggestError as exc:
                out.notes.append(f"{_label(finding)}: {exc}")
                continue
            except ParserSyntaxError as exc:  # code libcst cannot read: the file stays as it is
                out.notes.append(f"{_label(finding)}: `{path}` cannot be parsed: {exc.message}")
                break
            if new == text:
                out.notes.append(f"{_label(finding)}: no model change makes it go away")
            text = new
        if text != mf.text:
            out.patched[path] = text
    return out


def apply(found: Suggestions) -> list[Path]:
    """Write each patched file; SuggestError (nothing written) when a finding's model lies
    outside the project, or a file changed since the sweep read it."""
    if found.refused:
        raise SuggestError(f"{found.refused[0]}. Nothing written.")
    for path in found.patched:
        now = path.read_text(encoding="utf-8") if path.exists() else ""
        if _digest(now) != found.files[path].digest:
            raise SuggestError(
                f"`{path}` changed since the sweep read it: nothing written. Run "
                "`reconcile --suggest --apply` again.")
    for path, new in found.patched.items():
        write_module(path, new)  # its compiled copy forgotten: the next sweep reads the patch
    return list(found.patched)


def suggest_text(
    sources: Sequence[str] | None, project_dir: str, *, fmt: str, write: bool, keep: bool,
    **sweep: Any,
) -> tuple[str, list[str], list[ReconcileResult]]:
    """What `reconcile --suggest` prints (the diffs, so `git apply` takes them, or with
    `fmt="markdown"` the pull-request text), having written the patches when `write`; the
    notes (findings not patched, files written); and the sweep's results."""
    from dlt_contract_ops.suggest.pr_text import markdown

    found = collect(sources, project_dir, keep=keep, **sweep)
    text = markdown(found, project_dir) if fmt == "markdown" else diffs(found, project_dir)
    notes = [*found.refused, *found.notes]
    if write:
        notes += [f"wrote {os.path.relpath(p, project_dir)}" for p in apply(found)]
    return text, notes, found.results
